"""Figure 10's drawing: one block of weights quantized at n bits, as SVG markup. One
function for the build's static rendering and for the page (the worker returns this
markup after each change), as `tokenwalk_app.view` is for the simulator.

The drawing: a chart with one line per integer level (to scale, STEP_H units a level),
each weight as a dot, the value read back as a bar on its level and the error between
them; a table of every weight, its level, the value read back and the error; and three
summary lines (the scale and the mean error, the mean error at each bit width, the bits
per weight against the real formats). Every number is formatted here (tokenwalk.format):
the page inserts strings.

Input: `blocks` maps bits (as text) to QuantizedBlock.to_dict() of the same weights at each
bit width the reader can pick; `formats` the real formats' bits per weight.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tokenwalk import format as fmt

SVG_NS = "http://www.w3.org/2000/svg"
WIDTH = 640
CHART_TOP, STEP_H = 56, 17  # one level every STEP_H units (to scale)
MAX_CHART_H = 16 * STEP_H  # more levels than 4 bits' 16 are drawn closer together
PLOT_X0, PLOT_X1 = 46, 630
ROW_H = 19
MIN_WIDTH_PX = 540  # narrower, its text would fall under ~10 px: its container scrolls (figures/_svg.py)
TABLE_COLUMNS = ((20, "#"), (94, "weight"), (142, "level"), (228, "read back"), (302, "error"))


def fmt_w(x: float) -> str:
    """A weight with 4 decimals and a true minus sign."""
    s = f"{x:.4f}"
    return "0.0000" if s == "-0.0000" else s.replace("-", "−")


def fmt_level(level: int) -> str:
    return str(level).replace("-", "−")


def fmt_share(share: float) -> str:
    """A share as the prose prints it (tokenwalk.format.pct): "3 %", under 1 % one decimal."""
    return fmt.pct(share, 0 if 100 * share >= 0.95 else 1)


def fmt_bits(b: float) -> str:
    return f"{b:g}"


def _num(value) -> str:
    if isinstance(value, float):
        text = f"{value:.2f}".rstrip("0").rstrip(".")
        return text if text != "-0" else "0"
    return str(value)


def _el(parent, tag: str, text: str | None = None, **attrs):
    el = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): _num(v) for k, v in attrs.items()
                                     if v is not None})
    if text is not None:
        el.text = text
    return el


def step_h(q: dict) -> float:
    """Units between two levels: STEP_H at 4 bits (16 levels); up to three times that for
    fewer levels, so a 2-bit chart stays readable; closer when more would not fit
    MAX_CHART_H (8 bits' 256 levels)."""
    span = max(q["level_max"] - q["level_min"], 1)
    if span * STEP_H > MAX_CHART_H:
        return MAX_CHART_H / span
    return STEP_H * min(3, max(1, (MAX_CHART_H // STEP_H) // span))


def summary_lines(q: dict, blocks: dict, formats: dict) -> list[str]:
    """The three lines under the table (also the page's live summary)."""
    n = len(q["weights"])
    shares = " · ".join(f"{b} bits {fmt_share(blocks[b]['mean_error_share'])}" for b in blocks)
    q4_0 = q["bits"] == 4  # Q4_0's rule at 4 bits is Q4_0 itself
    others = " · ".join(f"{k} {fmt_bits(v)}" for k, v in formats.items() if not (q4_0 and k == "Q4_0"))
    return [f"scale {q['scale']:.3g} (fp16) · read back = level × scale · mean error "
            f"{fmt_share(q['mean_error_share'])}",
            f"mean error / largest weight: {shares}",
            f"bits per weight: {q['bits']} + 16/{n} = {fmt_bits(q['bits_per_weight'])}{' (Q4_0)' if q4_0 else ''} · "
            f"{others}"]


def block_svg(q: dict, blocks: dict, formats: dict, *, desc: str, style: str = "", min_width_px: int | None = None,
              id_prefix: str = "fig-quantization") -> str:
    """The SVG of block `q` (one of `blocks`), `WIDTH` units wide; `style` a <style> body
    (the build's figure style sheet; the page has it already), `min_width_px` the CSS
    min-width that keeps its text legible on a phone (its container scrolls)."""
    weights, levels, rec, err = q["weights"], q["levels"], q["reconstructed"], q["errors"]
    n = len(weights)
    lo, hi, scale, bits = q["level_min"], q["level_max"], q["scale"], q["bits"]
    dy = step_h(q)
    chart_h = (hi - lo) * dy
    table_top = CHART_TOP + chart_h + 56
    half = (n + 1) // 2
    summary_top = table_top + (half + 1) * ROW_H + 22
    height = summary_top + 78
    root = ET.Element("svg", {"xmlns": SVG_NS, "viewBox": f"0 0 {WIDTH} {_num(height)}", "role": "img",
                              "aria-labelledby": f"{id_prefix}-title {id_prefix}-desc",
                              "class": "figure-svg wide"})
    if min_width_px:
        root.set("style", f"min-width:{min_width_px}px")
    _el(root, "title", f"One block of {n} weights quantized at {bits} bits", id=f"{id_prefix}-title")
    _el(root, "desc", desc, id=f"{id_prefix}-desc")
    if style:
        _el(root, "style", style)
    _el(root, "text", f"{n} weights at {bits} bits: an integer {fmt_level(lo)} … {fmt_level(hi)} each, "
                      "× one fp16 scale", x=10, y=22, class_="title")

    def level_y(v: float) -> float:  # v in levels (weight / scale)
        return CHART_TOP + (hi - v) * dy

    chart = _el(root, "g", class_="quant-chart", data_scale=repr(scale), data_step=_num(float(dy)))
    every = 1  # a line and a label for every level, or for every 2^k-th when there are many
    while (hi - lo) / every > 16:
        every *= 2
    for lv in range(lo, hi + 1):
        if lv % every:
            continue
        y = level_y(lv)
        _el(chart, "line", x1=PLOT_X0, y1=y, x2=PLOT_X1, y2=y, class_="stroke-muted" if lv == 0 else "stroke-grid",
            stroke_width=1.2 if lv == 0 else 0.8)
        _el(chart, "text", fmt_level(lv), x=PLOT_X0 - 6, y=y + 5, class_="num", text_anchor="end")
    col = (PLOT_X1 - PLOT_X0) / n
    for i, (w, r) in enumerate(zip(weights, rec, strict=True)):
        x = PLOT_X0 + col * (i + 0.5)
        yw, yr = level_y(w / scale if scale else 0.0), level_y(r / scale if scale else 0.0)
        g = _el(chart, "g", class_="quant-weight", data_index=i)
        _el(g, "line", x1=x, y1=yw, x2=x, y2=yr, class_="stroke-accent", stroke_width=2)
        _el(g, "line", x1=x - col * 0.35, y1=yr, x2=x + col * 0.35, y2=yr, class_="stroke-bus", stroke_width=3)
        _el(g, "circle", cx=x, cy=yw, r=3, class_="fg")
    ly = CHART_TOP + chart_h + 24
    _el(root, "circle", cx=PLOT_X0 + 4, cy=ly - 5, r=3, class_="fg")
    _el(root, "text", "weight", x=PLOT_X0 + 14, y=ly)
    _el(root, "line", x1=PLOT_X0 + 84, y1=ly - 5, x2=PLOT_X0 + 100, y2=ly - 5, class_="stroke-bus", stroke_width=3)
    _el(root, "text", "level read back", x=PLOT_X0 + 106, y=ly)
    _el(root, "line", x1=PLOT_X0 + 240, y1=ly - 11, x2=PLOT_X0 + 240, y2=ly + 1, class_="stroke-accent",
        stroke_width=2)
    _el(root, "text", f"error; rows of the chart: the {hi - lo + 1} levels", x=PLOT_X0 + 248, y=ly)

    table = _el(root, "g", class_="quant-table")
    for h in range(2):
        x0 = 10 + h * 318
        for dx, head in TABLE_COLUMNS:
            _el(table, "text", head, x=x0 + dx, y=table_top, class_="bold", text_anchor="end")
        for k in range(half):
            i = h * half + k
            if i >= n:
                break
            y = table_top + (k + 1) * ROW_H
            big = abs(weights[i]) == q["largest_abs_weight"]
            cells = (str(i + 1), fmt_w(weights[i]), fmt_level(levels[i]), fmt_w(rec[i]), fmt_w(err[i]))
            for (dx, _), text in zip(TABLE_COLUMNS, cells, strict=True):
                _el(table, "text", text, x=x0 + dx, y=y, class_="num bold" if big else "num", text_anchor="end")
    for k, line in enumerate(summary_lines(q, blocks, formats)):
        _el(root, "text", line, x=10, y=summary_top + 24 * k, class_="bold" if k == 0 else None)
    return ET.tostring(root, encoding="unicode", short_empty_elements=True)


def summary_html(q: dict) -> str:
    """The page's live summary above the drawing (data-out marks what the tests read)."""
    from html import escape

    n = len(q["weights"])
    return (f'<p><b data-out="mean-error">mean error {escape(fmt_share(q["mean_error_share"]))}</b> of the largest '
            f'weight at {q["bits"]} bits (largest error {escape(fmt_share(q["max_error_share"]))})</p>'
            f'<p><b data-out="bits-per-weight">{q["bits"]} + 16/{n} = {fmt_bits(q["bits_per_weight"])} bits per '
            f'weight</b> with the scale counted</p>')


def describe(q: dict, blocks: dict) -> str:
    """A text description of the drawing (the SVG's <desc> on the page)."""
    shares = ", ".join(f"{b} bits {fmt_share(blocks[b]['mean_error_share'])}" for b in blocks)
    return (f"{len(q['weights'])} weights quantized at {q['bits']} bits: integers {fmt_level(q['level_min'])} to "
            f"{fmt_level(q['level_max'])} times one fp16 scale ({q['scale']:.3g}). Mean error "
            f"{fmt_share(q['mean_error_share'])} of the largest weight; at each bit width: {shares}.")
