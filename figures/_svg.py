"""A small SVG builder for the schematics, on the standard library's ElementTree.

Why not strings: ElementTree escapes text and attributes, so a label can never break
the markup. Why classes, not colours: the page's CSS custom properties decide the
colours, so dark mode and print follow without redrawing (each SVG also carries a
<style> with light-mode fallbacks so it renders on its own).

Usage::

    svg = Svg(640, 300, title="...", desc="...")
    svg.rect(10, 10, 200, 20, "bus")
    svg.text(10, 50, "4.2 ms", "label")
    html = svg.to_string()

Colour classes (fill): fg, muted, bg, grid, accent, bus, compute, kv, wait, free,
system, weights, mask, highlight. Stroke classes: stroke-fg, stroke-muted, stroke-accent,
stroke-bus, stroke-compute, stroke-grid. Text classes: label, small, title, num, mono,
and anchor helpers via `anchor=`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tokenwalk.format import typeset

SVG_NS = "http://www.w3.org/2000/svg"

# A drawing wider than this (viewBox units) would shrink its text below ~10 px on a
# 360 px phone; it gets the class "wide", which the page lets scroll sideways there
# at a legible size instead.
WIDE_VIEWBOX = 480


# The page's phone rule keeps a "wide" SVG that is a direct child of the figure at this
# many CSS px and scrolls it sideways. An SVG nested deeper (the static rendering inside an
# interactive figure's <div>) misses that rule: it sets the same minimum itself
# (`nested_wide_style`) and its container scrolls.
WIDE_MIN_CSS_PX = 540


def nested_wide_style(width: float) -> str | None:
    """The inline style of a nested figure SVG: WIDE_MIN_CSS_PX as its min-width when wide, else None."""
    return f"min-width:{WIDE_MIN_CSS_PX}px" if width > WIDE_VIEWBOX else None


def svg_class(width: float) -> str:
    """The root class of a figure SVG: "figure-svg", plus "wide" past WIDE_VIEWBOX."""
    return "figure-svg wide" if width > WIDE_VIEWBOX else "figure-svg"

# name -> (CSS variable, light fallback). The page defines the variables for light,
# dark and print; the fallbacks make a standalone SVG readable.
PALETTE = {
    "fg": ("--fig-fg", "#1d1d1f"),
    "muted": ("--fig-muted", "#6b6b70"),
    "bg": ("--fig-bg", "#ffffff"),
    "grid": ("--fig-grid", "#d9d9de"),
    "accent": ("--fig-accent", "#c2410c"),
    "bus": ("--fig-bus", "#2f6fb3"),
    "compute": ("--fig-compute", "#d97706"),
    "kv": ("--fig-kv", "#7c3aed"),
    "wait": ("--fig-wait", "#e5e5ea"),
    "free": ("--fig-free", "#f2f2f5"),
    "system": ("--fig-system", "#9ca3af"),
    "weights": ("--fig-weights", "#2f6fb3"),
    "mask": ("--fig-mask", "#ececf0"),
    "highlight": ("--fig-highlight", "#fde68a"),
}


def style_sheet() -> str:
    """CSS for an SVG: fill/stroke classes bound to the page's variables."""
    rules = []
    for name, (var, fallback) in PALETTE.items():
        rules.append(f".{name}{{fill:var({var},{fallback})}}")
        rules.append(f".stroke-{name}{{stroke:var({var},{fallback});fill:none}}")
    fg = PALETTE["fg"]
    muted = PALETTE["muted"]
    rules += [
        f"text{{fill:var({fg[0]},{fg[1]});font-family:var(--fig-font,system-ui,sans-serif);font-size:14px}}",
        ".small{font-size:12px}",
        ".title{font-size:15px;font-weight:600}",
        f".note{{fill:var({muted[0]},{muted[1]});font-size:12px}}",
        ".num{font-variant-numeric:tabular-nums}",
        ".mono{font-family:var(--fig-mono,ui-monospace,monospace)}",
        ".bold{font-weight:600}",
    ]
    return "".join(rules)


def _fmt(value) -> str:
    if isinstance(value, float):
        text = f"{value:.2f}".rstrip("0").rstrip(".")
        return text if text != "-0" else "0"
    return str(value)


class Svg:
    """An SVG document with a <title> and <desc>, sized by its viewBox.

    `width` and `height` are viewBox units (1 unit = 1 CSS px at natural size); the page
    scales the SVG to its column, so a 640-wide figure on a 360 px phone shows 14 px text
    at about 8 px: keep viewBoxes at most ~640 wide and text at least 13 units.
    """

    def __init__(self, width: float, height: float, *, title: str, desc: str, id_prefix: str = "fig"):
        self.width, self.height = width, height
        self.root = ET.Element("svg", {
            "xmlns": SVG_NS,
            "viewBox": f"0 0 {_fmt(width)} {_fmt(height)}",
            "role": "img",
            "aria-labelledby": f"{id_prefix}-title {id_prefix}-desc",
            "class": svg_class(width),
        })
        ET.SubElement(self.root, "title", {"id": f"{id_prefix}-title"}).text = title
        ET.SubElement(self.root, "desc", {"id": f"{id_prefix}-desc"}).text = desc
        ET.SubElement(self.root, "style").text = style_sheet()

    def _add(self, tag, attrs, parent=None, text=None):
        attrs = {k.rstrip("_").replace("_", "-"): _fmt(v) for k, v in attrs.items() if v is not None}
        el = ET.SubElement(self.root if parent is None else parent, tag, attrs)
        if text is not None:
            el.text = str(text)
        return el

    def group(self, cls: str | None = None, parent=None, **attrs):
        return self._add("g", {"class": cls, **attrs}, parent)

    def rect(self, x, y, w, h, cls: str = "fg", parent=None, **attrs):
        return self._add("rect", {"x": x, "y": y, "width": w, "height": h, "class": cls, **attrs}, parent)

    def line(self, x1, y1, x2, y2, cls: str = "stroke-fg", parent=None, **attrs):
        return self._add("line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "class": cls, **attrs}, parent)

    def path(self, d: str, cls: str = "stroke-fg", parent=None, **attrs):
        return self._add("path", {"d": d, "class": cls, **attrs}, parent)

    def circle(self, cx, cy, r, cls: str = "fg", parent=None, **attrs):
        return self._add("circle", {"cx": cx, "cy": cy, "r": r, "class": cls, **attrs}, parent)

    def text(self, x, y, s, cls: str | None = None, anchor: str = "start", parent=None, **attrs):
        """Text as text (selectable, searchable). anchor: start, middle or end. A label gets the
        prose's quotes (tokenwalk.format.typeset: "the tile’s trip"); "mono" text is code, kept as is."""
        if isinstance(s, str) and "mono" not in (cls or "").split():
            s = typeset(s)
        anchor_attr = None if anchor == "start" else anchor
        return self._add("text", {"x": x, "y": y, "class": cls, "text_anchor": anchor_attr, **attrs}, parent, s)

    def to_string(self) -> str:
        return ET.tostring(self.root, encoding="unicode", short_empty_elements=True)
