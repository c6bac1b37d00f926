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
MODEL = "dense-7b-fp16"

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


def inputs() -> dict:
    from tokenwalk.model_spec import load_model

    model = load_model(MODEL)
    return {
        "model": model.name,
        "layers": model.layers,
        "stages": [{"name": name, "reads_weights": w, "reads_kv_in_decode": kv, "fused": f}
                   for name, w, kv, f in STAGES],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._svg import Svg

    stages = inputs["stages"]
    width, top, row_h = 640, 58, 38
    name_x, tag_x, kv_x, flash_x = 56, 298, 414, 518
    height = top + row_h * len(stages) + 62
    svg = Svg(width, height, title="The eight kernels of one layer", desc=alt(inputs), id_prefix=ID)
    svg.text(16, 20, f"one layer of the dense 7B (pre-norm), run {inputs['layers']} times in a row", "label bold")
    svg.text(16, 42, "each stage is one kernel; inside it, every token and every head at once", "note", **NOTE)
    # The order: a line down through the numbers.
    svg.line(28, top + row_h / 2, 28, top + row_h * (len(stages) - 0.5), "stroke-grid", stroke_width=2)
    fused = [i for i, s in enumerate(stages) if s["fused"]]
    if fused:
        y0, y1 = top + fused[0] * row_h + 3, top + (fused[-1] + 1) * row_h - 3
        svg.rect(8, y0, flash_x - 14, y1 - y0, "stroke-accent", rx=6, stroke_dasharray="5 4", stroke_width=1.5)
        svg.path(f"M{flash_x} {y0} h8 V{y1} h-8", "stroke-accent", stroke_width=1.5)
        ym = (y0 + y1) / 2
        svg.text(flash_x + 14, ym - 3, "FlashAttention", "label", **NOTE)
        svg.text(flash_x + 14, ym + 16, "= one kernel", "note", **NOTE)
    for i, s in enumerate(stages):
        y = top + i * row_h
        cy = y + row_h / 2
        g = svg.group("stage", **{"data-stage": i + 1, "data-reads-weights": str(s["reads_weights"]).lower(),
                                  "data-reads-kv": str(s["reads_kv_in_decode"]).lower()})
        svg.circle(28, cy, 12, "bg", parent=g)
        svg.circle(28, cy, 12, "stroke-bus" if s["reads_weights"] else "stroke-compute", parent=g, stroke_width=2)
        svg.text(28, cy + 5, str(i + 1), "label bold num", anchor="middle", parent=g)
        _text_with_subscripts(svg, name_x, cy + 5, s["name"], g)
        if s["reads_weights"]:
            svg.rect(tag_x, cy - 11, 108, 22, "bus", parent=g, rx=11, fill_opacity=0.22)
            svg.text(tag_x + 54, cy + 5, "reads weights", "label", anchor="middle", parent=g)
        else:
            svg.rect(tag_x, cy - 11, 108, 22, "compute", parent=g, rx=11, fill_opacity=0.22)
            svg.text(tag_x + 54, cy + 5, "computes", "label", anchor="middle", parent=g)
        if s["reads_kv_in_decode"]:
            svg.rect(kv_x, cy - 11, 92, 22, "kv", parent=g, rx=11, fill_opacity=0.22)
            svg.text(kv_x + 46, cy + 5, "+ KV cache*", "label", anchor="middle", parent=g)
    y = top + row_h * len(stages) + 24
    svg.text(16, y, "* in decode, the scores and the weighted sum also read the KV cache from HBM", "note", **NOTE)
    svg.text(16, y + 22, "a pre-norm model also normalises once before stage 1", "note", **NOTE)
    return svg.to_string()
