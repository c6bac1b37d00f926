"""The markdown rule sets (publish/markdown/*_plugin), one fixture file each, in
mdit-py-plugins' format: a title line, then `.`, the Markdown, `.`, the HTML, `.`.
Rendered with the build's own function (one chapter, as the build renders it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file

from publish import BuildError
from publish.markdown import render_markdown

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markdown"
DEMO_FIGURE = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><style>.a{fill:red}</style>'
               '<rect class="a" width="10" height="10"/></svg>', "A red square")
CASES = [pytest.param(text, expected, id=f"{path.stem}:{line}: {title}")
         for path in sorted(FIXTURES.glob("*.md"))
         for line, title, text, expected in read_fixture_file(path)]


def test_every_rule_set_has_a_fixture_file():
    plugins = {p.stem for p in (Path(__file__).parents[2] / "publish" / "markdown").glob("*.py")
               if not p.stem.startswith("_") and p.stem not in ("state",)}
    fixtures = {p.stem for p in FIXTURES.glob("*.md")}
    assert plugins <= fixtures, f"no fixture file for {sorted(plugins - fixtures)}"
    assert len(CASES) >= 20


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_fixture(text, expected):
    assert render_markdown(text, {"demo": DEMO_FIGURE}).rstrip() == expected.rstrip()


@pytest.mark.parametrize(("text", "message"), [
    ("See [](#fig-nowhere).\n", "chapter.md:1: reference to figure 'nowhere', which is not in the article"),
    ("Para.\n\nSee [](#nowhere).\n", "chapter.md:3: empty link to #nowhere: no figure or heading has that id"),
    ("::: figure a\nA.\n:::\n\n::: figure a\nB.\n:::\n", "chapter.md:5: figure 'a' appears twice in the article"),
    ("Text.\n\n$\\frac{a}{$\n", "chapter.md:3: math $\\frac{a}{$:"),
])
def test_errors_name_the_chapter_line(text, message):
    with pytest.raises(BuildError) as caught:
        render_markdown(text)
    assert str(caught.value).startswith(message), str(caught.value)
