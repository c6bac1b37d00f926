"""build.py is the author's entry point: a Python without the build's packages either
re-runs it with the project's .venv/bin/python or says, in one line, what to run; failures
are placed by one function (publish.errors.location)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from publish import errors

BARE_PYTHON = Path(sys.base_prefix) / "bin" / "python3"  # -S: no site-packages, so no build packages


def run_bare(build_py: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(BARE_PYTHON), "-S", str(build_py), *args], capture_output=True, text=True,
                          timeout=120, cwd=build_py.parent)


@pytest.mark.skipif(not BARE_PYTHON.is_file(), reason="no base interpreter")
def test_without_packages_and_without_a_venv_it_says_what_to_run_in_one_line(tmp_path, project_root):
    (tmp_path / "publish").mkdir()
    shutil.copy(project_root / "build.py", tmp_path)
    for name in ("__init__.py", "errors.py"):  # what build.py reads before it knows the packages are there
        shutil.copy(project_root / "publish" / name, tmp_path / "publish")
    result = run_bare(tmp_path / "build.py", "--quiet")
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "lacks markdown-it-py" in lines[0] and "make setup" in lines[0], lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(not BARE_PYTHON.is_file(), reason="no base interpreter")
def test_without_packages_it_runs_again_with_the_projects_venv(project_root):
    if not (project_root / ".venv" / "bin" / "python").is_file():
        pytest.skip("no .venv in this checkout")
    result = run_bare(project_root / "build.py", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: build.py"), result.stdout


def test_location_is_the_deepest_frame_in_the_file_or_folder(tmp_path):
    module = tmp_path / "fig.py"
    module.write_text("def inner():\n    return 1 / 0\n\ndef outer():\n    return inner()\n")
    code = compile(module.read_text(), str(module), "exec")
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(ZeroDivisionError) as caught:
        namespace["outer"]()
    assert errors.location(caught.value, module) == errors.Location(module.resolve(), 2)
    assert errors.location(caught.value, tmp_path).line == 2  # a folder: any file under it
    elsewhere = tmp_path / "other.py"
    assert str(errors.location(caught.value, elsewhere)) == errors.shown(elsewhere)  # no frame there: no line
    error = errors.fail(module, caught.value, "render() failed")
    assert str(error).endswith("fig.py:2: render() failed: ZeroDivisionError: division by zero")


def test_location_of_a_syntax_error_is_its_own_line(tmp_path):
    module = tmp_path / "broken.py"
    module.write_text("x = 1\ny = (\n")
    with pytest.raises(SyntaxError) as caught:
        compile(module.read_text(), str(module), "exec")
    assert errors.location(caught.value, module).line == caught.value.lineno
