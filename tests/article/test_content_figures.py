"""Every figure of the article has its place in the text, once, with a caption.

The list of figures is ../shared/FIGURES.md (outside the repository; the test skips and says
so where it is absent), plus the simulator at the end of the article.
"""

from __future__ import annotations

import re

import pytest

from tests.support.content import ROOT, chapter_files

FIGURES_MD = ROOT.parent / "shared" / "FIGURES.md"
FIGURE_OPEN = re.compile(r"^ {0,3}:{3,}\s*figure\s+(\S+)\s*$", re.M)


def figure_places() -> list[tuple[str, str, str]]:
    """(chapter, figure id, caption text) for each `::: figure ID` container."""
    places = []
    for path in chapter_files():
        text = path.read_text(encoding="utf-8")
        for m in FIGURE_OPEN.finditer(text):
            end = re.compile(r"^ {0,3}:{3}\s*$", re.M).search(text, m.end())
            places.append((path.name, m.group(1), text[m.end():end.start() if end else len(text)]))
    return places


def listed_ids() -> list[str]:
    if not FIGURES_MD.is_file():
        pytest.skip("../shared/FIGURES.md (the list of figures) is not next to this checkout")
    return re.findall(r"^\|\s*\d+\s*\|\s*([a-z0-9-]+)\s*\|", FIGURES_MD.read_text(encoding="utf-8"), re.M)


def test_every_listed_figure_has_one_place_with_a_caption():
    ids = listed_ids() + ["simulator"]
    places = figure_places()
    found = [fig for _, fig, _ in places]
    assert len(ids) == 31, ids
    assert sorted(set(ids) - set(found)) == [], "figures without a place in the text"
    assert sorted(set(found) - set(ids)) == [], "figures in the text that FIGURES.md does not list"
    assert len(found) == len(set(found)), "a figure placed twice"
    short = [fig for _, fig, caption in places if len(caption.split()) < 8]
    assert not short, f"captions too short to state the figure's domain: {short}"


def test_figures_come_in_the_order_of_the_list():
    """The article introduces the figures in FIGURES.md's order (its numbering)."""
    ids = listed_ids()
    found = [fig for _, fig, _ in figure_places() if fig in ids]
    assert found == ids
