"""Figure 5, sampling: seven candidates for the word after "lower the warfarin".

Domain: toy logits (tokenwalk/data/toy/sampling_logits.json). Three panels give the
softmax at temperatures 0.5, 1 and 2; a fourth gives the top-p 0.9 nucleus at T = 1,
renormalised. Bars are to scale: a panel's full track is probability 1.
"""

from __future__ import annotations

import pathlib

from article.toys import toy_sampling
from figures._svg import Svg
from tokenwalk import format as fmt

ID = "sampling"
KIND = "S"
RENDERER = "svg"

WIDTH = 640
LABEL_W = 124
PANEL_W = 129
TRACK_W = 70  # probability 1.0
ROW_H = 30
TOP = 84


def inputs(ctx) -> dict:
    return toy_sampling()


def alt(inputs: dict) -> str:
    c = inputs["candidates"]
    parts = []
    for t in inputs["temperatures"]:
        p = inputs["probs"][str(t)]
        parts.append(f"at T = {fmt.comma(t)}: " + ", ".join(f"{w} {fmt.probability(x)}" for w, x in zip(c, p, strict=False)))
    kept = [c[i] for i in inputs["top_p_kept"]]
    return (f"Seven candidates for the word after '{inputs['context']}', toy logits from "
            f"{fmt.comma(inputs['logits'][0])} ({c[0]}) to {fmt.comma(inputs['logits'][-1])} ({c[-1]}). "
            + "; ".join(parts)
            + f". Top-p {fmt.comma(inputs['top_p'])} at T = {fmt.comma(inputs['top_p_temperature'])} keeps "
            + ", ".join(kept) + f", which hold {fmt.probability(inputs['top_p_kept_mass'])}.")


ALT = alt


def render(inputs: dict, out: pathlib.Path) -> str:
    cands, logits = inputs["candidates"], inputs["logits"]
    n = len(cands)
    kept = set(inputs["top_p_kept"])
    height = TOP + n * ROW_H + 70
    svg = Svg(WIDTH, height, id_prefix="fig-sampling",
              title=f"Next-token probabilities after '{inputs['context']}' at three temperatures and with top-p",
              desc=alt(inputs))
    svg.text(10, 22, f"the word after “{inputs['context']}”: probability of each candidate", "title")

    panels = [(f"T = {fmt.comma(t)}", inputs["probs"][str(t)], None) for t in inputs["temperatures"]]
    panels.append((f"top-p {fmt.comma(inputs['top_p'])}", inputs["top_p_probs"], kept))
    svg.text(10, TOP - 16, "word", "bold")
    svg.text(LABEL_W - 8, TOP - 16, "logit", "bold", anchor="end")
    for k, (head, probs, nucleus) in enumerate(panels):
        x0 = LABEL_W + k * PANEL_W
        g = svg.group("sampling-panel", data_panel=head)
        svg.text(x0 + 8, TOP - 16, head, "bold", parent=g)
        for i, p in enumerate(probs):
            y = TOP + i * ROW_H
            svg.rect(x0 + 8, y + 8, TRACK_W, ROW_H - 16, "free", parent=g)
            cut = nucleus is not None and i not in nucleus
            if cut:
                svg.text(x0 + 12, y + ROW_H / 2 + 5, "cut", "num", parent=g, opacity=0.6)
                continue
            svg.rect(x0 + 8, y + 8, TRACK_W * p, ROW_H - 16, "accent" if nucleus is None else "bus",
                     parent=g, data_p=f"{p:.6g}")
            svg.text(x0 + 10 + TRACK_W * p + 3, y + ROW_H / 2 + 5, fmt.probability(p), "num", parent=g)
    for i, (word, z) in enumerate(zip(cands, logits, strict=False)):
        y = TOP + i * ROW_H + ROW_H / 2 + 5
        svg.text(10, y, word, "bold")
        svg.text(LABEL_W - 8, y, fmt.fixed(z, 1).replace("-", "−"), "num", anchor="end")
    # The nucleus boundary in the T = 1 panel and the top-p panel.
    cut_y = TOP + len(kept) * ROW_H
    x_t1 = LABEL_W + inputs["temperatures"].index(inputs["top_p_temperature"]) * PANEL_W
    for x in (x_t1, LABEL_W + 3 * PANEL_W):
        svg.line(x + 4, cut_y, x + PANEL_W - 4, cut_y, "stroke-accent", stroke_dasharray="5 4", stroke_width=2)
    y = TOP + n * ROW_H + 24
    svg.text(10, y, f"dashed: top-p {fmt.comma(inputs['top_p'])} at T = {fmt.comma(inputs['top_p_temperature'])}: keeps the top "
                    f"{len(kept)}, which hold {fmt.probability(inputs['top_p_kept_mass'])}, then renormalises")
    svg.text(10, y + 24, f"temperature reshapes, the order never changes; bars to scale (track = {fmt.probability(1.0)})")
    return svg.to_string()
