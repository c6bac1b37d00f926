"""Shared checks for the toy-math figures' tests: render, parse, read the text back."""

from __future__ import annotations

import importlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support.context import default_context

_ROOT = Path(__file__).resolve().parents[2]

NS = {"svg": "http://www.w3.org/2000/svg"}
SVG_TAG = "{http://www.w3.org/2000/svg}"


def render(module_name: str, tmp_path):
    """Import figures.<module_name>, render it into tmp_path; return (module, inputs, html)."""
    mod = importlib.import_module(f"figures.{module_name}")
    inputs = mod.inputs(default_context())
    html = mod.render(inputs, tmp_path)
    return mod, inputs, html


def svg_root(html: str) -> ET.Element:
    """The <svg> element of a figure's HTML (inline SVG, possibly inside a <div>)."""
    match = re.search(r"<svg[\s\S]*</svg>", html)
    assert match, "no <svg> in the figure's HTML"
    return ET.fromstring(match.group(0))


def texts(root: ET.Element) -> list[str]:
    """Each text element's words, a no-break space (tokenwalk.format joins a number to its unit
    with one) read as the space a reader sees."""
    return ["".join(t.itertext()).replace("\u00a0", " ") for t in root.iter(f"{SVG_TAG}text")]


def check_contract(mod, inputs, html) -> ET.Element:
    """The figure contract and the SVG rules: parses, title and desc, viewBox at most 640
    wide, no text class smaller than 13 units, alt text that states the domain."""
    import json

    json.dumps(inputs)  # inputs() must be JSON-serialisable (it forms the cache key)
    assert mod.ID and mod.KIND and mod.RENDERER == "svg"
    root = svg_root(html)
    assert root.find("svg:title", NS) is not None and root.find("svg:title", NS).text
    assert root.find("svg:desc", NS) is not None and root.find("svg:desc", NS).text
    _, _, w, h = (float(v) for v in root.get("viewBox").split())
    assert 0 < w <= 640 and h > 0
    for t in root.iter(f"{SVG_TAG}text"):
        classes = (t.get("class") or "").split()
        assert "small" not in classes and "note" not in classes, "text under 13 units"
        size = re.search(r"font-size:\s*([\d.]+)px", t.get("style") or "")
        assert size is None or float(size.group(1)) >= 13
        x = float(t.get("x", 0))
        assert 0 <= x <= w
    alt = mod.ALT(inputs) if callable(mod.ALT) else mod.ALT
    assert len(alt) > 40
    return root


def check_says_it_needs_javascript(html: str) -> str:
    """The static rendering of an interactive figure says, in its own markup, that the live
    version needs JavaScript, in the class the interactive layer's CSS hides once the figure
    is live (content/static/interactive/interactive.css); returns the sentence."""
    css = (Path(_ROOT) / "content" / "static" / "interactive" / "interactive.css").read_text(encoding="utf-8")
    assert re.search(r"\.is-live \.tw-nojs\s*\{\s*display:\s*none", css), "the class the CSS hides once live"
    notes = re.findall(r'<p class="tw-nojs">([^<]*)</p>', html)
    assert len(notes) == 1, notes
    assert notes[0].endswith("needs JavaScript.")
    return notes[0]


def check_nested_wide_scrolls(html: str) -> None:
    """A wide static rendering nested in the interactive <div> keeps the page's phone width for
    wide drawings (figures._svg.WIDE_MIN_CSS_PX) and its <div> scrolls sideways, so its text
    stays legible on a 360 px phone instead of shrinking to about 8 px."""
    from figures._svg import WIDE_MIN_CSS_PX

    div = re.match(r"<div ([^>]*)>", html)
    assert div and 'style="overflow-x:auto"' in div.group(1)
    root = svg_root(html)
    assert "wide" in root.get("class").split()
    assert root.get("style") == f"min-width:{WIDE_MIN_CSS_PX}px"
