"""Figure 10, quantization (static rendering at 4 bits): one block of 32 weights stored as
integer levels and one fp16 scale, the value read back and the error of each weight.

Domain: the toy block tokenwalk/data/toy/quant_block.json, quantized by
tokenwalk.physics.quantization (Q4_0's rule at n bits); the real formats' bits per weight come
from ggml's block sizes. The interactive layer (another module) enhances the container:
its data attributes carry the weights and the numbers at every bit width.
"""

from __future__ import annotations

import html
import json
import pathlib

from article.toys import toy_quant_block
from figures._svg import Svg, nested_wide_style
from tokenwalk import format as fmt

ID = "quantization"
KIND = "I"
RENDERER = "svg"

WIDTH = 640
STATIC_BITS = 4
CHART_TOP, STEP_H = 56, 17  # one level every STEP_H units (to scale)
PLOT_X0, PLOT_X1 = 46, 630
ROW_H = 19


def inputs(ctx) -> dict:
    return toy_quant_block()


def fmt_w(x: float) -> str:
    """A weight with 4 decimals and a true minus sign."""
    s = f"{x:.4f}"
    return "0.0000" if s in ("-0.0000",) else s.replace("-", "−")


def fmt_share(share: float) -> str:
    """A share as the prose prints it (tokenwalk.format.pct): "3 %", under 1 % one decimal."""
    return fmt.pct(share, 0 if 100 * share >= 0.95 else 1)


def fmt_bits(b: float) -> str:
    return f"{b:g}"


def alt(inputs: dict) -> str:
    q = inputs["blocks"][str(STATIC_BITS)]
    others = ", ".join(f"{b} bits {fmt_share(inputs['blocks'][str(b)]['mean_error_share'])}"
                       for b in inputs["bit_widths"])
    return (f"One toy block of {len(q['weights'])} weights with one large weight "
            f"({fmt_w(max(q['weights'], key=abs))}), quantized at {STATIC_BITS} bits: each weight "
            f"becomes an integer from {q['level_min']} to {q['level_max']}, the block shares one fp16 "
            f"scale ({q['scale']:.3g}), and reading back is integer times scale. Mean error "
            f"{fmt_share(q['mean_error_share'])} of the largest weight; at each bit width: {others}. "
            f"Bits per weight with the scale: {fmt_bits(q['bits_per_weight'])}; real formats: "
            + ", ".join(f"{k} {fmt_bits(v)}" for k, v in inputs["formats"].items()) + ".")


ALT = alt


def render(inputs: dict, out: pathlib.Path) -> str:
    q = inputs["blocks"][str(STATIC_BITS)]
    weights, levels, rec, err = q["weights"], q["levels"], q["reconstructed"], q["errors"]
    n = len(weights)
    lo, hi, scale = q["level_min"], q["level_max"], q["scale"]
    chart_h = (hi - lo) * STEP_H
    table_top = CHART_TOP + chart_h + 56
    half = (n + 1) // 2
    summary_top = table_top + (half + 1) * ROW_H + 22
    height = summary_top + 78
    svg = Svg(WIDTH, height, id_prefix="fig-quantization",
              title=f"One block of {n} weights quantized at {STATIC_BITS} bits", desc=alt(inputs))
    svg.text(10, 22, f"{n} weights at {STATIC_BITS} bits: an integer {lo} … {hi} each, "
                     f"× one fp16 scale".replace("-", "−"), "title")

    # Chart: one horizontal line per level (to scale: STEP_H units per level).
    def level_y(v: float) -> float:  # v in levels (weight / scale)
        return CHART_TOP + (hi - v) * STEP_H

    chart = svg.group("quant-chart", data_scale=repr(scale))
    for lv in range(lo, hi + 1):
        y = level_y(lv)
        svg.line(PLOT_X0, y, PLOT_X1, y, "stroke-muted" if lv == 0 else "stroke-grid", parent=chart,
                 stroke_width=1.2 if lv == 0 else 0.8)
        svg.text(PLOT_X0 - 6, y + 5, str(lv).replace("-", "−"), "num", anchor="end", parent=chart)
    col = (PLOT_X1 - PLOT_X0) / n
    for i, (w, r) in enumerate(zip(weights, rec, strict=False)):
        x = PLOT_X0 + col * (i + 0.5)
        yw, yr = level_y(w / scale), level_y(r / scale)
        g = svg.group("quant-weight", parent=chart, data_index=i)
        svg.line(x, yw, x, yr, "stroke-accent", parent=g, stroke_width=2)
        svg.line(x - col * 0.35, yr, x + col * 0.35, yr, "stroke-bus", parent=g, stroke_width=3)
        svg.circle(x, yw, 3, "fg", parent=g)
    ly = CHART_TOP + chart_h + 24
    svg.circle(PLOT_X0 + 4, ly - 5, 3, "fg")
    svg.text(PLOT_X0 + 14, ly, "weight")
    svg.line(PLOT_X0 + 84, ly - 5, PLOT_X0 + 100, ly - 5, "stroke-bus", stroke_width=3)
    svg.text(PLOT_X0 + 106, ly, "level read back")
    svg.line(PLOT_X0 + 240, ly - 11, PLOT_X0 + 240, ly + 1, "stroke-accent", stroke_width=2)
    svg.text(PLOT_X0 + 248, ly, "error; rows of the chart: the 16 levels")

    # Table: every weight with its level, the value read back and the error.
    cols = [(20, "#", "end"), (94, "weight", "end"), (142, "level", "end"), (228, "read back", "end"),
            (302, "error", "end")]
    table = svg.group("quant-table")
    for h in range(2):
        x0 = 10 + h * 318
        for dx, head, anchor in cols:
            svg.text(x0 + dx, table_top, head, "bold", anchor=anchor, parent=table)
        for k in range(half):
            i = h * half + k
            if i >= n:
                break
            y = table_top + (k + 1) * ROW_H
            big = abs(weights[i]) == q["largest_abs_weight"]
            cells = [str(i + 1), fmt_w(weights[i]), str(levels[i]).replace("-", "−"), fmt_w(rec[i]),
                     fmt_w(err[i])]
            for (dx, _, anchor), text in zip(cols, cells, strict=False):
                svg.text(x0 + dx, y, text, "num bold" if big else "num", anchor=anchor, parent=table)
    y = summary_top
    svg.text(10, y, f"scale {scale:.3g} (fp16) · read back = level × scale · mean error "
                    f"{fmt_share(q['mean_error_share'])}", "bold")
    svg.text(10, y + 24, "mean error / largest weight: " + " · ".join(
        f"{b} bits {fmt_share(inputs['blocks'][str(b)]['mean_error_share'])}" for b in inputs["bit_widths"]))
    fmts = inputs["formats"]
    svg.text(10, y + 48, f"bits per weight: {STATIC_BITS} + 16/{n} = {fmt_bits(q['bits_per_weight'])} "
                         f"(Q4_0) · " + " · ".join(f"{k} {fmt_bits(v)}" for k, v in fmts.items() if k != "Q4_0"))
    attrs = {
        "class": "tw-interactive tw-quantization",
        "data-figure": ID,
        "data-bits": str(STATIC_BITS),
        "data-bit-widths": json.dumps(inputs["bit_widths"]),
        "data-weights": json.dumps(weights),
        "data-scale": repr(scale),
        "data-mean-error-share": f"{q['mean_error_share']:.6f}",
        "data-bits-per-weight": fmt_bits(q["bits_per_weight"]),
        "data-mean-error-shares": json.dumps(
            {str(b): round(inputs["blocks"][str(b)]["mean_error_share"], 6) for b in inputs["bit_widths"]}),
        "data-formats": json.dumps(fmts),
    }
    # Nested in this <div>, the SVG misses the page's phone rule for wide drawings: it keeps a legible
    # width itself and the <div> scrolls sideways (no effect where the column is wider).
    wide = nested_wide_style(WIDTH)
    if wide:
        svg.root.set("style", wide)
        attrs["style"] = "overflow-x:auto"
    attr_text = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    # Said in the figure's own markup (reader views, text browsers); the interactive layer's CSS
    # hides .tw-nojs once JavaScript runs.
    note = (f"This is the block at {STATIC_BITS} bits. The interactive version, where you pick the bits and draw "
            "new weights, needs JavaScript.")
    return f'<div {attr_text}>{svg.to_string()}<p class="tw-nojs">{note}</p></div>'
