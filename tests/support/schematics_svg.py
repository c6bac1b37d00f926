"""Checks shared by the schematics' tests (figures 11-15, 17, 20, 24, 29): render through the
figure contract, parse, legible text, and read the to-scale geometry back."""

import re

import pytest

from tests.support.context import default_context
from tests.support.hardware_svg import NS, check_common, texts

SVG = "{http://www.w3.org/2000/svg}"
# _svg.py's class sizes; a style="font-size:..." overrides them.
CLASS_SIZES = {"small": 12, "note": 12, "title": 15}
MIN_TEXT = 13  # viewBox units: a 640-wide figure on a 360 px phone shows it at about 7.3 px
MAX_WIDTH = 640


def render(module, tmp_path, inputs=None):
    """(inputs, svg text, parsed root) of a figure module, through its contract."""
    for attr in ("ID", "KIND", "RENDERER", "inputs", "render"):
        assert hasattr(module, attr), attr
    assert module.KIND == "S" and module.RENDERER == "svg"
    n = module.inputs(default_context()) if inputs is None else inputs
    svg = module.render(n, tmp_path)
    assert isinstance(svg, str)
    root = check_common(svg, module.ID)
    alt = module.alt(n) if hasattr(module, "alt") else module.ALT
    assert isinstance(alt, str) and len(alt) > 80
    return n, svg, root


def rendered_once(module, name: str = "fig"):
    """A module-scoped fixture `name`: render(module) once per test file, (inputs, svg, root)."""
    @pytest.fixture(scope="module", name=name)
    def _fig(tmp_path_factory):
        return render(module, tmp_path_factory.mktemp(module.ID))
    return _fig


def font_size(element) -> float:
    style = element.get("style") or ""
    match = re.search(r"font-size:\s*([\d.]+)px", style)
    if match:
        return float(match.group(1))
    sizes = [CLASS_SIZES[c] for c in (element.get("class") or "").split() if c in CLASS_SIZES]
    return max(sizes) if sizes else 14


def check_phone_legible(root) -> None:
    """viewBox at most 640 wide; every text at least 13 units."""
    _, _, width, _ = (float(v) for v in root.get("viewBox").split())
    assert width <= MAX_WIDTH
    for t in root.iter(f"{SVG}text"):
        size = font_size(t)
        assert size >= MIN_TEXT, ("".join(t.itertext()), size)
        for span in t.iter(f"{SVG}tspan"):
            own = "font-size" in (span.get("style") or "") or any(
                c in CLASS_SIZES for c in (span.get("class") or "").split())
            span_size = font_size(span) if own else size
            assert span_size >= MIN_TEXT, ("".join(span.itertext()), span_size)


def words(root) -> str:
    return " ".join(texts(root))


def check_labels(root, labels) -> None:
    """Each label stands in the figure's text (the failure names the missing one)."""
    text = words(root)
    for label in labels:
        assert label in text, label


def check_alt_and_phone(module, inputs, root, parts) -> None:
    """The alt text names each part (the domain: model, machine, "to scale", the key numbers),
    and the drawing stays legible on a phone."""
    alt = module.alt(inputs)
    for part in parts:
        assert part in alt, part
    check_phone_legible(root)


def rects(root, **attrs):
    """<rect>s whose data-* attributes match `attrs` (names with '_' for '-')."""
    out = []
    for r in root.iter(f"{SVG}rect"):
        if all(r.get("data-" + k.replace("_", "-")) == str(v) for k, v in attrs.items()):
            out.append(r)
    return out


__all__ = ["NS", "render", "rendered_once", "check_phone_legible", "check_labels", "check_alt_and_phone", "words",
           "rects", "font_size", "texts"]
