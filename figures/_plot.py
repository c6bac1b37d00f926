"""matplotlib plots as inline SVG that follow the page's colours and fonts.

Why post-process: matplotlib writes colours and fonts into style attributes. The plot is
drawn with one sentinel colour per palette name of `_svg.PALETTE`, and the SVG text then
swaps every sentinel for ``var(--fig-NAME, fallback)``, so the page's CSS variables
(light, dark, print) colour the plot exactly as they colour the schematics. Text stays
text (``svg.fonttype = 'none'``) in the page's figure font. Ids are prefixed with the
figure id so several inline SVGs never clash, the matplotlib metadata (a date) is dropped
so a render is reproducible, and the root gets a viewBox, a <title> and a <desc>.

Usage::

    fig, ax = new_figure(640, 360)
    ax.plot(x, y, color=colour("bus"))
    html = to_svg(fig, figure_id="balance-point", title="...", desc="...")

Sizes are in viewBox units (1 unit = 1 CSS px at natural size, as in `_svg.Svg`): matplotlib
points are mapped 1:1, so a 14 pt font is 14 units.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import matplotlib
from matplotlib.figure import Figure  # the object API: no pyplot, no global backend or figure list

from ._svg import PALETTE, SVG_NS, style_sheet, svg_class

# One sentinel colour per palette name: unlikely colours that no plot uses on purpose.
SENTINELS = {name: f"#0{index:02x}0{index:02x}" for index, name in enumerate(PALETTE, start=1)}
_SENTINEL_TO_NAME = {hex_.lower(): name for name, hex_ in SENTINELS.items()}
FONT_STACK = "var(--fig-font,system-ui,sans-serif)"


def colour(name: str) -> str:
    """The sentinel colour to draw palette colour `name` with (fg, bus, compute, kv...)."""
    if name not in SENTINELS:
        raise KeyError(f"unknown palette colour {name!r} (known: {', '.join(SENTINELS)})")
    return SENTINELS[name]


def style_rc(font_size: float = 14) -> dict:
    """rcParams for a plot in the article's style: sentinel colours, text as text, no frame clutter."""
    fg, muted, grid = colour("fg"), colour("muted"), colour("grid")
    return {
        "svg.fonttype": "none",
        "font.size": font_size,
        "font.family": "sans-serif",
        "text.color": fg,
        "axes.edgecolor": muted,
        "axes.labelcolor": fg,
        "axes.facecolor": "none",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": False,
        "grid.color": grid,
        "xtick.color": muted,
        "ytick.color": muted,
        "xtick.labelcolor": fg,
        "ytick.labelcolor": fg,
        "figure.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.transparent": True,
        "lines.solid_capstyle": "butt",
    }


def new_figure(width: float = 640, height: float = 360, font_size: float = 14):
    """A figure of `width` x `height` viewBox units and its one axes, in the article's style."""
    with matplotlib.rc_context(style_rc(font_size)):
        fig = Figure(figsize=(width / 72.0, height / 72.0), dpi=72)
        ax = fig.subplots()
    fig._tokenwalk_rc = style_rc(font_size)  # re-applied when saving
    return fig, ax


def _replace_sentinels(text: str) -> str:
    def swap(match):
        name = _SENTINEL_TO_NAME.get(match.group(0).lower())
        if name is None:
            return match.group(0)
        var, fallback = PALETTE[name]
        return f"var({var},{fallback})"

    return re.sub(r"#[0-9a-fA-F]{6}\b", swap, text)


def to_svg(fig, *, figure_id: str, title: str, desc: str, data: dict | None = None) -> str:
    """The figure as an inline <svg> string (see the module docstring).

    `data` becomes data-* attributes on the root (numbers a test can read back).
    """
    rc = getattr(fig, "_tokenwalk_rc", style_rc())
    rc = dict(rc, **{"svg.hashsalt": figure_id})
    buffer = io.StringIO()
    with matplotlib.rc_context(rc):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # drop the XML declaration and DOCTYPE
    text = _replace_sentinels(text)
    # Fonts: the page's figure font instead of matplotlib's DejaVu.
    text = re.sub(r"font:\s*([0-9.]+)px\s+'[^']*'", lambda m: f"font-size:{m.group(1)}px;font-family:{FONT_STACK}", text)
    text = re.sub(r"font-family:\s*'?DejaVu Sans'?[^;\"]*", f"font-family:{FONT_STACK}", text)
    # Unique ids per figure.
    prefix = f"{figure_id}-"
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
    text = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{prefix}{m.group(1)}"', text)

    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(text)
    for key in ("width", "height"):
        root.attrib.pop(key, None)
    for meta in root.findall(f"{{{SVG_NS}}}metadata"):
        root.remove(meta)
    root.set("role", "img")
    root.set("class", svg_class(float(root.get("viewBox", "0 0 0 0").split()[2])))
    root.set("aria-labelledby", f"{prefix}title {prefix}desc")
    for key, value in (data or {}).items():
        root.set(f"data-{key.replace('_', '-')}", _fmt(value))
    title_el = ET.Element(f"{{{SVG_NS}}}title", {"id": f"{prefix}title"})
    title_el.text = title
    desc_el = ET.Element(f"{{{SVG_NS}}}desc", {"id": f"{prefix}desc"})
    desc_el.text = desc
    style_el = ET.Element(f"{{{SVG_NS}}}style")
    style_el.text = style_sheet()
    for index, element in enumerate((title_el, desc_el, style_el)):
        root.insert(index, element)
    # Drop the (empty) defs style matplotlib adds for stroke-linejoin; keep everything else.
    return ET.tostring(root, encoding="unicode")


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
