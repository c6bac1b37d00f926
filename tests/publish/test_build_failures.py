"""A failed build exits 1 with one line naming the file and line, and leaves the previous
site/ untouched: broken figure modules, Jinja errors, bad math, bad references."""

from __future__ import annotations

import pytest

from tests.support.build import assert_failed_cleanly, build_fixture, copy_fixture

# a whole build per broken input: 13 s of the fast set; `make test` runs them, `make check` leaves them out
pytestmark = pytest.mark.slow


@pytest.fixture
def fixture_with_site(tmp_path):
    src = copy_fixture(tmp_path)
    out, cache = tmp_path / "site", tmp_path / "cache"
    first = build_fixture(src, out, cache)
    assert first.returncode == 0, first.stderr
    snapshot = {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
                if p.is_file() and p.parts[-3:-1] != ("pyodide",)}
    return src, out, cache, snapshot


BROKEN_MODULES = {
    "syntax": ("ID = 'broken'\ndef inputs(ctx):\n    return {\n", "broken.py:3", "SyntaxError"),
    "import": ("import not_a_module_anywhere\n", "broken.py:1", "ModuleNotFoundError"),
    "render": ("ID = 'broken'\ndef inputs(ctx):\n    return {}\ndef render(inputs, out):\n    return 1 / 0\n",
               "broken.py:5", "render() failed: ZeroDivisionError"),
    "inputs": ("ID = 'broken'\ndef inputs(ctx):\n    raise KeyError('bandwidth_gbs')\ndef render(i, o):\n    return ''\n",
               "broken.py:3", "inputs() failed: KeyError"),
    "bad-svg": ("ID = 'broken'\ndef inputs(ctx):\n    return {}\ndef render(inputs, out):\n"
                "    return '<svg xmlns=\"http://www.w3.org/2000/svg\"><g></svg>'\n",
                "broken.py", "render() returned malformed SVG"),
    "missing-image": ("ID = 'broken'\ndef inputs(ctx):\n    return {}\ndef render(inputs, out):\n"
                      "    return '<img src=\"figures/broken/plot.webp\">'\n",
                      "broken.py", "render() refers to 'figures/broken/plot.webp' but did not write it"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_MODULES))
def test_broken_figure_module_fails_with_one_line_and_keeps_the_old_site(fixture_with_site, case):
    src, out, cache, snapshot = fixture_with_site
    source, where, cause = BROKEN_MODULES[case]
    (src / "figures" / "broken.py").write_text(source)
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    line = result.stderr.strip()
    assert f"figures/{where}:" in line or line.split(": ")[1].endswith(where), line
    assert cause in line, line


def test_jinja_undefined_number_names_file_line_and_name(fixture_with_site):
    src, out, cache, snapshot = fixture_with_site
    chapter = src / "content" / "02-more.md"
    lines = chapter.read_text().splitlines()
    lines.insert(3, "The ceiling is {{ n.decode_ceiling_tok_s | fixed(1) }} tokens per second.")
    chapter.write_text("\n".join(lines) + "\n")
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    assert "02-more.md:4: " in result.stderr
    assert "n has no decode_ceiling_tok_s" in result.stderr


def test_jinja_syntax_error_names_file_and_line(fixture_with_site):
    src, out, cache, snapshot = fixture_with_site
    chapter = src / "content" / "01-intro.md"
    text = chapter.read_text().replace("{{ n.prompt_tokens | comma }}", "{{ n.prompt_tokens | comma ")
    chapter.write_text(text)
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    lines = text.splitlines()
    lineno = lines.index(next(line for line in lines if "{{ n.prompt_tokens | comma " in line)) + 1
    assert f"01-intro.md:{lineno}: TemplateSyntaxError" in result.stderr


def test_bad_math_names_file_and_line(fixture_with_site):
    src, out, cache, snapshot = fixture_with_site
    chapter = src / "content" / "02-more.md"
    chapter.write_text(chapter.read_text() + "\nBroken: $\\frac{a}{$ here.\n")
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    lineno = len(chapter.read_text().splitlines())
    assert f"02-more.md:{lineno}: math" in result.stderr


def test_reference_to_unknown_figure_names_file_and_line(fixture_with_site):
    src, out, cache, snapshot = fixture_with_site
    chapter = src / "content" / "02-more.md"
    chapter.write_text(chapter.read_text() + "\nAs [](#fig-nowhere) shows.\n")
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    assert f"02-more.md:{len(chapter.read_text().splitlines())}: reference to figure 'nowhere'" in result.stderr


def test_missing_numbers_module_is_reported_not_fatal(tmp_path):
    """Without --numbers, the real tokenwalk namespace is used; when a chapter uses no
    number, the build works even before article/numbers.py exists."""
    src = copy_fixture(tmp_path)
    for md in (src / "content").glob("*.md"):
        md.unlink()
    (src / "content" / "01-plain.md").write_text("## Plain\n\nNo numbers here.\n")
    from tests.support.build import run_build
    result = run_build("--content", src / "content", "--figures", src / "figures",
                       "--out", tmp_path / "site", "--cache", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    import importlib.util
    if importlib.util.find_spec("article.numbers") is None:
        assert "article/numbers.py is missing" in result.stdout


def test_refuses_to_replace_a_folder_that_is_not_a_site(tmp_path):
    src = copy_fixture(tmp_path)
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "todo.txt").write_text("keep me")
    result = build_fixture(src, precious, tmp_path / "cache")
    assert result.returncode == 1
    assert "refusing to replace a folder that is not a built site" in result.stderr
    assert (precious / "todo.txt").read_text() == "keep me"


def test_template_error_names_the_template_file_and_line(fixture_with_site):
    src, out, cache, snapshot = fixture_with_site
    import shutil

    from tests.support.build import ROOT
    shutil.copytree(ROOT / "content" / "templates", src / "content" / "templates")
    shutil.copytree(ROOT / "content" / "static", src / "content" / "static")
    article = src / "content" / "templates" / "article.html"
    lines = article.read_text().splitlines()
    lines.insert(4, "{{ no_such_variable.attribute }}")
    article.write_text("\n".join(lines) + "\n")
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    assert "templates/article.html:5: UndefinedError" in result.stderr
