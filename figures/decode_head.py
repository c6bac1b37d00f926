"""Figure 7, decode-head: one attention head while the model writes one token, GPT-3 sizes.

A Manim still, read from the bottom up. The new token's normalised residual (1 x d_model)
goes through this head's W_Q, W_K and W_V (d_model x head_dim each). Its key and value
become the last row of K and V; its query meets every cached key once (the score column)
and is dropped. A table lists, per token, the cached key, the score q.k/sqrt(head_dim),
the softmax weight (a dot whose area is the weight) and the value; at the top, the
weighted sum of the values is the head's output, head_dim numbers.

Sizes come from tokenwalk's GPT-3 preset; the per-token numbers are toy numbers on a
7-token sentence (article/data/toy/decode_head.json, with the scores of the
attention-row figure), and the weights and the output are computed by
tokenwalk.physics.attention, all in the namespace (n.gpt3_*, n.decode_head_step).
"""

from __future__ import annotations

import pathlib

from figures import _manim
from figures._manim import Canvas, fmt_int
from tokenwalk import format as fmt

ID = "decode-head"
KIND = "M"
RENDERER = "manim"

CANVAS = Canvas(640, 768)


def inputs(ctx) -> dict:
    """GPT-3's d_model and head size, and the toy step (tokens, scores, weights, vectors), as the
    namespace holds them (n.gpt3_*, n.decode_head_step)."""
    sizes = _manim.gpt3_sizes(ctx.n)
    step = ctx.n["decode_head_step"]
    return {
        "model": sizes["model"],
        "embedding_length": sizes["embedding_length"],
        "head_dim": sizes["head_dim"],
        **step,
        "toy": True,
        "quality": _manim.quality_name(),
    }


def alt(inputs: dict) -> str:
    d, hd = fmt_int(inputs["embedding_length"]), fmt_int(inputs["head_dim"])
    tokens = inputs["tokens"]
    top = max(range(len(tokens)), key=lambda i: inputs["weights"][i])
    return (
        f"Diagram of a single GPT-3 attention head (GPT-3's sizes, not Qwen's; toy numbers, a {len(tokens)}-token "
        f"sentence) at the step that produces '{tokens[-1]}'. At the bottom, the newest token's "
        f"normalised vector of {d} numbers rises into three {d} × {hd} matrices and comes out as q, "
        f"k and v: k and v are labelled as new rows of K and V, q as used once, not kept. Above, a "
        f"table gives one row per stored token: its key, its score q·k/√{hd}, a dot sized by its "
        f"softmax weight (the biggest, {fmt.pct(inputs['weights'][top])}, on '{tokens[top]}') and its "
        f"value. The heading sums the values by those weights: {hd} numbers, what the head passes on."
    )


def steps(inputs: dict) -> list[str]:
    """The drawing in reading order (bottom up), for the "What happens" disclosure."""
    d, hd = fmt_int(inputs["embedding_length"]), fmt_int(inputs["head_dim"])
    tokens, weights = inputs["tokens"], inputs["weights"]
    t = len(tokens)
    top = max(range(t), key=lambda i: weights[i])
    return [
        f"The new token, '{tokens[-1]}' (number {t}), arrives as one row of {d} numbers: its "
        f"residual, normalised.",
        f"That row is multiplied by the head's three matrices, W_Q, W_K and W_V, each {d} × {hd}: "
        f"out come a query, a key and a value of {hd} numbers each.",
        f"The key and the value are appended as row {t} of K and V. Rows 1 to {t - 1} were stored "
        f"by the earlier steps and are only read.",
        f"The query meets each of the {t} keys once: the score q·k/√{hd} is one number per token.",
        f"A softmax turns the {t} scores into weights that add up to one; the biggest goes to "
        f"'{tokens[top]}', {fmt.pct(weights[top])}.",
        f"Each value is scaled by its weight and the {t} are added: the head's output, {hd} numbers. "
        f"The query is dropped; only the key and the value stay.",
    ]


def render(inputs: dict, out: pathlib.Path, quality: str | None = None) -> str:
    """The light and dark stills in `out` and their <picture> (quality: see `_manim.still_html`)."""
    from figures.scenes.decode_head import DecodeHeadScene

    return _manim.still_html(ID, DecodeHeadScene, inputs, out, canvas=CANVAS, alt=alt(inputs), quality=quality)
