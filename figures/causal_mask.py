"""Figure 6, causal-mask: the 8 × 8 weight grid of one head in the step that adds token 8.

Domain: toy scores (tokenwalk/data/toy/causal_mask.json), one head of one layer, the
sentence "Amiodarone raises warfarin levels so lower its dose". Rows are queries, columns
keys. Rows 1-7 were computed in earlier steps and are frozen; row 8 is computed now;
cells above the diagonal are masked (-inf before the softmax, 0 after) and left empty.
"""

from __future__ import annotations

import pathlib

from article.toys import toy_causal_grid
from figures._svg import Svg

ID = "causal-mask"
KIND = "S"
RENDERER = "svg"

WIDTH = 640
LEFT = 118  # row labels
CELL_W, CELL_H = 48, 32
TOP = 70


def inputs(ctx) -> dict:
    return toy_causal_grid()


def alt(inputs: dict) -> str:
    words = inputs["sentence"]
    rows = "; ".join(f"{i + 1} {w}: " + ", ".join(f"{round(100 * x)}" for x in row)
                     for i, (w, row) in enumerate(zip(words, inputs["weights"], strict=False)))
    return (f"Softmax weights in percent of one attention head over '{' '.join(words)}', toy scores, "
            f"in the step that adds token {inputs['step_adds_token']}. Each row is a query, each "
            f"column a key; cells after the query are masked and empty. Rows 1 to "
            f"{inputs['step_adds_token'] - 1} are frozen from earlier steps; only the last row is "
            f"computed now. Rows: {rows}.")


ALT = alt


def render(inputs: dict, out: pathlib.Path) -> str:
    words, weights = inputs["sentence"], inputs["weights"]
    n = len(words)
    new = inputs["step_adds_token"] - 1  # 0-based row computed in this step
    grid_w = n * CELL_W
    height = TOP + n * CELL_H + 88
    svg = Svg(WIDTH, height, id_prefix="fig-causal-mask",
              title=f"The causal mask: weights of one head in the step that adds token {new + 1}",
              desc=alt(inputs))
    svg.text(10, 22, "rows: the query of each word · columns: keys 1 to "
                     f"{n} · weights in %", "title")
    for j in range(n):
        svg.text(LEFT + j * CELL_W + CELL_W / 2, TOP - 10, str(j + 1), "bold", anchor="middle")
    for i, row in enumerate(weights):
        y = TOP + i * CELL_H
        live = i == new
        g = svg.group("mask-row live" if live else "mask-row frozen", data_row=i + 1)
        svg.text(10, y + CELL_H / 2 + 5, f"{i + 1} {words[i]}", "bold" if live else None, parent=g)
        for j in range(n):
            x = LEFT + j * CELL_W
            if j > i:  # masked: -inf before the softmax, nothing to draw
                svg.rect(x, y, CELL_W, CELL_H, "stroke-grid", parent=g)
                continue
            svg.rect(x, y, CELL_W, CELL_H, "highlight" if live else "free", parent=g,
                     style="stroke:var(--fig-grid,#d9d9de)")
            w = row[j]
            svg.text(x + CELL_W / 2, y + CELL_H / 2 + 5, f"{round(100 * w)}", "num bold" if live else "num",
                     anchor="middle", parent=g, data_weight=f"{w:.6g}")
    # Brackets: frozen rows, and the row of this step.
    bx = LEFT + grid_w + 8
    svg.path(f"M {bx} {TOP + 2} h 6 V {TOP + new * CELL_H - 2} h -6", "stroke-muted", stroke_width=1.5)
    svg.text(bx + 12, TOP + new * CELL_H / 2 - 4, "earlier")
    svg.text(bx + 12, TOP + new * CELL_H / 2 + 14, "steps:")
    svg.text(bx + 12, TOP + new * CELL_H / 2 + 32, "frozen")
    svg.text(bx + 12, TOP + new * CELL_H + CELL_H / 2 + 5, "this step", "bold")
    y = TOP + n * CELL_H + 28
    svg.rect(10, y - 13, 16, 16, "stroke-grid")
    svg.text(34, y, "empty cells: −∞ before the softmax, 0 after (the mask)")
    svg.text(10, y + 26, "one softmax per row; adding a token adds one row and changes none above it")
    return svg.to_string()
