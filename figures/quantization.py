"""Figure 10, quantization (static rendering at 4 bits): one block of 32 weights stored as
integer levels and one fp16 scale, the value read back and the error of each weight.

Domain: the toy block tokenwalk/data/toy/quant_block.json, quantized by
tokenwalk.physics.quantization (Q4_0's rule at n bits); the real formats' bits per weight come
from ggml's block sizes. The drawing is tokenwalk_app.quant_view's, which the page's
worker also runs for the live figure (`quantize_view`), so both show a block the same way.
The interactive layer enhances the container: its data attributes carry the weights and
the numbers at every bit width.
"""

from __future__ import annotations

import html
import json
import pathlib

from article.toys import toy_quant_block
from figures._svg import WIDE_MIN_CSS_PX, nested_wide_style, style_sheet
from tokenwalk import format as fmt
from tokenwalk_app import quant_view as view

ID = "quantization"
KIND = "I"
RENDERER = "svg"

STATIC_BITS = 4
# the drawing's geometry (the tests read the chart back at this scale)
WIDTH, CHART_TOP, STEP_H = view.WIDTH, view.CHART_TOP, view.STEP_H


def inputs(ctx) -> dict:
    return toy_quant_block()


fmt_w, fmt_share, fmt_bits = view.fmt_w, view.fmt_share, view.fmt_bits


def alt(inputs: dict) -> str:
    q = inputs["blocks"][str(STATIC_BITS)]
    others = ", ".join(f"{b} bits {fmt_share(inputs['blocks'][str(b)]['mean_error_share'])}"
                       for b in inputs["bit_widths"])
    return (f"One toy block of {len(q['weights'])} weights with one large weight "
            f"({fmt_w(max(q['weights'], key=abs))}), quantized at {STATIC_BITS} bits: each weight "
            f"becomes an integer from {q['level_min']} to {q['level_max']}, the block shares one fp16 "
            f"scale ({fmt.significant(q['scale'])}), and reading back is integer times scale. Mean error "
            f"{fmt_share(q['mean_error_share'])} of the largest weight; at each bit width: {others}. "
            f"Bits per weight with the scale: {fmt_bits(q['bits_per_weight'])}; real formats: "
            + ", ".join(f"{k} {fmt_bits(v)}" for k, v in inputs["formats"].items()) + ".")


ALT = alt


def render(inputs: dict, out: pathlib.Path) -> str:
    q = inputs["blocks"][str(STATIC_BITS)]
    weights, scale, fmts = q["weights"], q["scale"], inputs["formats"]
    # The drawing is tokenwalk_app.quant_view's, the code the page runs after each change.
    # Nested in this <div>, the SVG misses the page's phone rule for wide drawings: it keeps a legible
    # width itself and the <div> scrolls sideways (no effect where the column is wider).
    wide = nested_wide_style(WIDTH)
    drawing = view.block_svg(q, inputs["blocks"], fmts, desc=alt(inputs), style=style_sheet(),
                             min_width_px=WIDE_MIN_CSS_PX if wide else None)
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
    if wide:
        attrs["style"] = "overflow-x:auto"
    attr_text = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    # Said in the figure's own markup (reader views, text browsers); the interactive layer's CSS
    # hides .tw-nojs once JavaScript runs.
    note = (f"This is the block at {STATIC_BITS} bits. The interactive version, where you pick the bits and draw "
            "new weights, needs JavaScript.")
    return f'<div {attr_text}>{drawing}<p class="tw-nojs">{note}</p></div>'
