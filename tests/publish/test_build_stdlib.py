"""publish/stdlib.py: Pyodide's standard library with the modules Python needs at start
and for the core precompiled (the rest as the package ships them, stored)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from publish import stdlib
from publish.stdlib import imported_names, prepare_stdlib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "node_modules" / "pyodide"
NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def stand_in_wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("pkg/__init__.py", "from . import sub\nimport json, xml.etree.ElementTree as ET\n")
        wheel.writestr("pkg/sub.py", "from collections.abc import Mapping\nfrom pkg import other\nimport pkg.more\n"
                                     "def later():\n    import statistics\n")
        wheel.writestr("pkg-0.1.dist-info/RECORD", "")
    return path


def test_the_names_are_the_wheels_absolute_imports_but_its_own(tmp_path):
    assert imported_names(stand_in_wheel(tmp_path / "pkg-0.1-py3-none-any.whl")) == [
        "collections.abc", "json", "statistics", "xml.etree.ElementTree"]


def test_without_node_the_package_zip_stays_and_the_build_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(stdlib.shutil, "which", lambda name: None)
    prepared, why = prepare_stdlib(PACKAGE, stand_in_wheel(tmp_path / "w.whl"), tmp_path / "cache")
    assert prepared is None and why.startswith("node is missing")
    assert not (tmp_path / "cache").exists()


@pytest.mark.skipif(not (PACKAGE / "pyodide.mjs").is_file(), reason="node_modules/pyodide not installed")
@NEEDS_NODE
def test_a_failing_node_run_is_one_line_and_leaves_nothing(tmp_path):
    broken = tmp_path / "pyodide"
    broken.mkdir()
    for name in ("python_stdlib.zip", "pyodide.asm.wasm"):
        (broken / name).write_bytes((PACKAGE / name).read_bytes()[:1000])
    prepared, why = prepare_stdlib(broken, stand_in_wheel(tmp_path / "w.whl"), tmp_path / "cache")
    assert prepared is None and why.startswith("stdlib.mjs failed (") and "\n" not in why
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.slow
@NEEDS_NODE
@pytest.mark.skipif(not (PACKAGE / "pyodide.mjs").is_file(), reason="node_modules/pyodide not installed")
def test_the_needed_modules_are_compiled_in_place_of_their_source_and_the_rest_kept_stored(tmp_path):
    prepared, why = prepare_stdlib(PACKAGE, stand_in_wheel(tmp_path / "w.whl"), tmp_path / "cache")
    assert why == "" and prepared.parent == tmp_path / "cache"
    original, new = zipfile.ZipFile(PACKAGE / "python_stdlib.zip"), zipfile.ZipFile(prepared)
    names = set(new.namelist())
    pycs = {n for n in names if n.endswith(".pyc")}
    # each compiled module in place of its source, every other file as it was
    assert names - pycs == set(original.namelist()) - {n[:-1] for n in pycs}
    assert all(new.read(n) == original.read(n) for n in names - pycs)
    assert {i.compress_type for i in new.infolist()} == {zipfile.ZIP_STORED}
    # at start (site, encodings), the stand-in's imports with what they import, nothing else
    assert {"site.pyc", "encodings/__init__.pyc", "json/__init__.pyc", "json/decoder.pyc", "statistics.pyc",
            "xml/etree/ElementTree.pyc"} <= pycs
    assert not pycs & {"smtplib.pyc", "tomllib/__init__.pyc", "wave.pyc"}
    assert all(n[:-1] in original.namelist() for n in pycs)
    for name in pycs:  # PEP 552 flags: hash-based (1), source not checked (no 2)
        assert int.from_bytes(new.read(name)[4:8], "little") == 1, name
    again, _ = prepare_stdlib(PACKAGE, stand_in_wheel(tmp_path / "w.whl"), tmp_path / "cache")
    assert again == prepared  # cached by content
