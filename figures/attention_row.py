"""Figure 3, attention-row: one head, one layer, the row of token 7 ('its') over keys 1-8.

Domain: toy scores (tokenwalk/data/toy/attention_row.json) for the sentence
"Amiodarone raises warfarin levels so lower its dose"; key 8 is masked (causal).
Drawn: the score q·k/√d (the toy scores stand for the scaled product the softmax takes, as in
figure 8, decode-head, which shows the same scores), the softmax weight as a bar to scale (100 % = the full bar track), and each
key's value v shaded by the weight it receives.
"""

from __future__ import annotations

import math
import pathlib

from article.toys import toy_attention_row
from figures._svg import Svg
from tokenwalk import format as fmt

ID = "attention-row"
KIND = "S"
RENDERER = "svg"

# Geometry (viewBox units). Bars are to scale: BAR_W units = weight 1.0.
WIDTH = 640
ROW_H = 32
TOP = 78
BAR_X, BAR_W = 250, 200
VALUE_X = 540


def alt(inputs: dict) -> str:
    words = inputs["sentence"]
    q = inputs["query_token"]
    parts = [f"{w} {fmt.pct(p)}" for w, p in zip(words, inputs["weights"], strict=False)]
    return (f"One attention head of one layer, toy scores: the query of '{words[q - 1]}' "
            f"(token {q}) over keys 1 to {len(words)}. Softmax weights: " + ", ".join(parts)
            + f". Key {len(words)} comes later and is masked. The output is the weighted sum "
            f"of the values, 1 × {inputs['value_width']} numbers.")


ALT = alt


def inputs(ctx) -> dict:
    row = toy_attention_row()
    # JSON has no -inf: a masked score travels as None.
    row["scores"] = [None if s == -math.inf else s for s in row["scores"]]
    return row


def _score(s) -> str:
    return "−∞" if s is None else fmt.fixed(s, 1).replace("-", "−")


def render(inputs: dict, out: pathlib.Path) -> str:
    words, q = inputs["sentence"], inputs["query_token"]
    n = len(words)
    height = TOP + n * ROW_H + 64
    svg = Svg(WIDTH, height, id_prefix="fig-attention-row",
              title=f"One attention row: the query of '{words[q - 1]}' over keys 1 to {n}",
              desc=alt(inputs))
    svg.text(10, 22, f"the query of “{words[q - 1]}” (token {q}) asks every key up to it", "title")
    for x, label, anchor in ((10, "key", "start"), (210, "q·k/√d", "end"),
                             (BAR_X, "weight (softmax)", "start"), (VALUE_X, "value v", "start")):
        svg.text(x, TOP - 16, label, "bold", anchor=anchor)
    svg.line(10, TOP - 8, WIDTH - 10, TOP - 8, "stroke-grid")

    for i, (word, s, w) in enumerate(zip(words, inputs["scores"], inputs["weights"], strict=False)):
        y = TOP + i * ROW_H
        mid = y + ROW_H / 2 + 5
        row = svg.group("attention-key", data_key=i + 1)
        if i == q - 1:
            svg.rect(4, y + 2, WIDTH - 8, ROW_H - 4, "highlight", parent=row, rx=4, opacity=0.55)
        svg.text(10, mid, f"{i + 1} {word}", None, parent=row)
        svg.text(210, mid, _score(s), "num", anchor="end", parent=row)
        svg.rect(BAR_X, y + 8, BAR_W, ROW_H - 16, "free", parent=row)  # the track: weight 1
        if s is None:
            svg.text(BAR_X + 6, mid, "masked: comes later, weight 0", "bold", parent=row)
            svg.rect(VALUE_X, y + 7, 60, ROW_H - 14, "stroke-grid", parent=row, stroke_dasharray="3 3")
            continue
        svg.rect(BAR_X, y + 8, BAR_W * w, ROW_H - 16, "accent", parent=row, data_weight=f"{w:.6g}")
        svg.text(BAR_X + BAR_W * w + 6, mid, fmt.pct(w), "num bold", parent=row)
        # The value vector, drawn as a strip of cells; its strength is the weight it gets.
        svg.rect(VALUE_X, y + 7, 60, ROW_H - 14, "kv", parent=row, opacity=round(0.12 + 0.88 * w, 3))
        svg.text(VALUE_X + 66, mid, f"v{i + 1}", None, parent=row)

    top = max(range(n), key=lambda k: inputs["weights"][k])
    y = TOP + n * ROW_H + 10
    svg.line(10, y, WIDTH - 10, y, "stroke-grid")
    svg.text(10, y + 26, "Σ weight × v =", "bold")
    svg.text(135, y + 26, f"output of “{words[q - 1]}” in this head: "
                          f"1 × {inputs['value_width']}, mostly v{top + 1} ({words[top]})")
    svg.text(10, y + 48, "weights add up to 100\u00a0%; bars are to scale", "num")
    return svg.to_string()
