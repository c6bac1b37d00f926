"""Reading figures back: parse an inline SVG and check what every figure must carry."""

import re
import xml.etree.ElementTree as ET

import pytest

from tests.support.context import default_context

NS = {"svg": "http://www.w3.org/2000/svg"}


def parse(svg_text: str) -> ET.Element:
    root = ET.fromstring(svg_text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def check_common(svg_text: str, figure_id: str) -> ET.Element:
    """viewBox, title and desc, text as text, no leftover sentinel colours or fixed sizes."""
    root = parse(svg_text)
    assert root.get("viewBox") and root.get("width") is None
    assert root.find("svg:title", NS).text and root.find("svg:desc", NS).text
    assert root.findall(".//svg:text", NS), "text must stay text"
    assert not re.search(r"#0[0-9a-f]{2}0[0-9a-f]{2}\b", svg_text), "a sentinel colour was not replaced"
    assert "DejaVu" not in svg_text
    for element in root.iter():
        if element.get("id"):
            assert element.get("id").startswith(f"{figure_id}-") or element.get("id").startswith("fig"), element.get("id")
    return root


def texts(root) -> list[str]:
    """Each text element's words, a no-break space (tokenwalk.format joins a number to its unit
    with one) read as the space a reader sees."""
    return ["".join(t.itertext()).replace("\u00a0", " ") for t in root.iter("{http://www.w3.org/2000/svg}text")]


def rendered_once(module, name: str = "rendered"):
    """A module-scoped fixture `name`: (inputs, html) of a figure module, rendered once per test file."""
    @pytest.fixture(scope="module", name=name)
    def _rendered(tmp_path_factory):
        inputs = module.inputs(default_context())
        return inputs, module.render(inputs, tmp_path_factory.mktemp(module.ID))
    return _rendered
