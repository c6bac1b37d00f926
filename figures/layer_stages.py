"""Figure 13, layer-stages: the eight kernels of one pre-norm layer of the dense 7B, in order.

Each stage is one kernel; the stages run one after another and everything inside a stage
runs at once. Four stages multiply by a weight matrix (they read weights from HBM), four
only compute on what they hold; in decode the scores and the weighted sum also read the
KV cache. FlashAttention fuses stages 2 to 4 into one kernel. The layer count comes from
the model preset; the stages are the structure of a transformer layer, not numbers.
"""

from __future__ import annotations

import pathlib

ID = "layer-stages"
KIND = "S"
RENDERER = "svg"

# (what the kernel does, reads weights, reads the KV cache in decode, fused by FlashAttention)
STAGES = (
    ("Q, K, V: × W_Q, W_K, W_V (fused)", True, False, False),
    ("Q · Kᵀ: the scores", False, True, True),
    ("causal mask and softmax", False, False, True),
    ("weights · V", False, True, True),
    ("× W_O and residual add", True, False, False),
    ("LayerNorm", False, False, False),
    ("MLP: × W_1 and activation", True, False, False),
    ("MLP: × W_2 and residual add", True, False, False),
)

NOTE = {"style": "font-size:13px"}
WIDTH = 440  # a list of names: narrow, so it reads on a phone
MAX_CSS_PX = 520  # and stops growing on a wide column


def _text_with_subscripts(svg, x, y, label: str, parent):
    """'× W_Q, W_K' drawn with lowered Q and K (<tspan>s), so the label stays one selectable text.

    The text after each subscript goes back up in its own <tspan> (dy needs characters).
    """
    import re

    pieces = re.split(r"_(\w)", label)
    el = svg.text(x, y, pieces[0], "label", parent=parent)
    for k in range(1, len(pieces), 2):
        svg._add("tspan", {"dy": 4, "style": "font-size:13px"}, el, pieces[k])
        svg._add("tspan", {"dy": -4}, el, pieces[k + 1] or "\u200b")
    return el


def _plain(label: str) -> str:
    """'W_Q' -> 'WQ' for the alt text."""
    return label.replace("_", "")


def alt(inputs: dict) -> str:
    parts = []
    for i, s in enumerate(inputs["stages"], 1):
        what = "reads weights" if s["reads_weights"] else "only computes"
        if s["reads_kv_in_decode"]:
            what += ", and reads the KV cache in decode"
        parts.append(f"{i}. {_plain(s['name'])}: {what}")
    fused = [str(i) for i, s in enumerate(inputs["stages"], 1) if s["fused"]]
    return (f"The eight kernels of one pre-norm layer of the dense 7B, run in order and repeated in all "
            f"{inputs['layers']} layers: " + "; ".join(parts)
            + f". FlashAttention fuses stages {fused[0]} to {fused[-1]} into one kernel.")


def inputs(ctx) -> dict:
    return {
        "model": ctx.n["d7_name"],
        "layers": ctx.n["d7_layers"],
        "stages": [{"name": name, "reads_weights": w, "reads_kv_in_decode": kv, "fused": f}
                   for name, w, kv, f in STAGES],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    """A narrow drawing (440 units, capped at MAX_CSS_PX on wide screens): the stage's name on
    one line, what it reads on the next, so the text reads at about 11 px on a 360 px phone."""
    from figures._svg import Svg

    stages = inputs["stages"]
    width, top, row_h = WIDTH, 58, 50
    num_x, name_x, flash_x = 20, 42, 318
    height = top + row_h * len(stages) + 56
    svg = Svg(width, height, title="The eight kernels of one layer", desc=alt(inputs), id_prefix=ID)
    svg.root.set("style", f"max-width:{MAX_CSS_PX}px;margin:0 auto")
    svg.text(4, 18, "one layer of the dense 7B (pre-norm),", "label bold")
    svg.text(4, 38, f"run {inputs['layers']} times in a row; one kernel per stage", "label bold")
    # The order: a line down through the numbers.
    svg.line(num_x, top + 15, num_x, top + row_h * (len(stages) - 1) + 15, "stroke-grid", stroke_width=2)
    fused = [i for i, s in enumerate(stages) if s["fused"]]
    if fused:
        y0, y1 = top + fused[0] * row_h - 4, top + (fused[-1] + 1) * row_h - 3
        svg.rect(2, y0, flash_x - 6, y1 - y0, "stroke-accent", rx=6, stroke_dasharray="5 4", stroke_width=1.5)
        svg.path(f"M{flash_x} {y0} h8 V{y1} h-8", "stroke-accent", stroke_width=1.5)
        ym = (y0 + y1) / 2
        # One text element, three lines: the name stays one word for search and screen readers.
        label = svg.text(flash_x + 14, ym - 12, "Flash", "label", **NOTE)
        svg._add("tspan", {"x": flash_x + 14, "dy": 17}, label, "Attention:")
        svg._add("tspan", {"x": flash_x + 14, "dy": 17, "class": "note", "style": "font-size:13px"}, label,
                 "one kernel")
    for i, s in enumerate(stages):
        y = top + i * row_h
        g = svg.group("stage", **{"data-stage": i + 1, "data-reads-weights": str(s["reads_weights"]).lower(),
                                  "data-reads-kv": str(s["reads_kv_in_decode"]).lower()})
        svg.circle(num_x, y + 15, 12, "bg", parent=g)
        svg.circle(num_x, y + 15, 12, "stroke-bus" if s["reads_weights"] else "stroke-compute", parent=g,
                   stroke_width=2)
        svg.text(num_x, y + 20, str(i + 1), "label bold num", anchor="middle", parent=g)
        _text_with_subscripts(svg, name_x, y + 20, s["name"], g)
        ty = y + 27
        if s["reads_weights"]:
            svg.rect(name_x, ty, 104, 16, "bus", parent=g, rx=8, fill_opacity=0.22)
            svg.text(name_x + 52, ty + 13, "reads weights", "label", anchor="middle", parent=g, **NOTE)
        else:
            svg.rect(name_x, ty, 104, 16, "compute", parent=g, rx=8, fill_opacity=0.22)
            svg.text(name_x + 52, ty + 13, "computes", "label", anchor="middle", parent=g, **NOTE)
        if s["reads_kv_in_decode"]:
            svg.rect(name_x + 112, ty, 150, 16, "kv", parent=g, rx=8, fill_opacity=0.22)
            svg.text(name_x + 187, ty + 13, "+ KV cache in decode", "label", anchor="middle", parent=g, **NOTE)
    y = top + row_h * len(stages) + 16
    svg.text(4, y, "decode: stages 2 and 4 also read the KV cache", "note", **NOTE)
    svg.text(4, y + 20, "pre-norm: one more normalisation before stage 1", "note", **NOTE)
    return svg.to_string()
