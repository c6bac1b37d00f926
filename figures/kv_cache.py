"""Figure 8, kv-cache: the KV cache in GPT-3's sizes, one column per token, one row per layer.

A Manim still (plus an optional short animation, in a closed <details>, that loads nothing
until the reader opens it: the new column climbing the layers). Each cell holds a key and a value (for every head of that layer). The
columns of earlier tokens are stored and never change; only the new token's column is
computed in this step. White lines show the induction over layers (a token at layer 2
read only tokens up to itself at layer 1); arcs show the new query reading the keys of
its own layer. Below: prefill computes the whole triangle of scores at once (one softmax
per row), decode adds one row per step.

Sizes (layers, heads, head size, softmaxes per step) come from tokenwalk; the number of
tokens drawn is the toy sentence of the decode-head figure.
"""

from __future__ import annotations

import pathlib

from figures import _manim
from figures._manim import Canvas, fmt_int
from tokenwalk import format as fmt

ID = "kv-cache"
KIND = "M"
RENDERER = "manim"

CANVAS = Canvas(640, 924)


def inputs(ctx) -> dict:
    """GPT-3's layers, heads, head size and softmaxes per step; the toy sentence's tokens."""
    sizes = _manim.gpt3_sizes(ctx.n)
    tokens = ctx.n["decode_head_step"]["tokens"]
    return {
        "model": sizes["model"],
        "layers": sizes["layers"],
        "head_count": sizes["head_count"],
        "head_dim": sizes["head_dim"],
        "softmaxes_per_step": sizes["softmaxes_per_step"],
        "tokens": tokens,
        "quality": _manim.quality_name(),
    }


def alt(inputs: dict) -> str:
    layers, heads = fmt_int(inputs["layers"]), fmt_int(inputs["head_count"])
    t = len(inputs["tokens"])
    return (
        f"Grid of stored keys and values sized as in GPT-3, not Qwen: {t} token columns, left to "
        f"right, and layer rows 1, 2, 3 up to {layers}, bottom to top; each cell pairs a key block "
        f"with a value block standing for {heads} heads. Grey cells are old and stay as filed; the "
        f"rightmost column, token {t}, is the only one being filled. White lines link a cell at "
        f"layer 2 with the cells at or left of it one row down, the only ones it depends on, and "
        f"curved arrows go from the newest query to each key in its own row. A note counts "
        f"{layers} × {heads} = {fmt_int(inputs['softmaxes_per_step'])} softmaxes for one step. A strip "
        f"at the bottom sets two shapes side by side: prefill fills a whole triangle of scores in "
        f"one pass, decode adds a single row each step."
    )


def steps(inputs: dict) -> list[str]:
    """What the still and its animation show, in order, for the "What happens" disclosure."""
    layers, heads = fmt_int(inputs["layers"]), fmt_int(inputs["head_count"])
    t = len(inputs["tokens"])
    return [
        f"The cache is a grid: one column per token ({t} drawn), one row per layer ({layers} in "
        f"all); each cell holds a key and a value for each of the {heads} heads of its layer.",
        f"Columns 1 to {t - 1} were written by earlier steps. This step computes column {t} only.",
        f"At layer 1, token {t}'s query reads the stored keys of tokens 1 to {t - 1} and its own key, "
        f"just computed; its key and value fill its cell.",
        f"The column climbs: each layer above does the same with its own keys, taking the output of "
        f"the layer below, up to layer {layers}.",
        f"Then the column is stored for good, and a slot opens for token {t + 1}.",
        f"One step therefore runs {layers} × {heads} = {fmt_int(inputs['softmaxes_per_step'])} softmaxes, "
        f"one per head per layer.",
        "Below the grid: prefill scores the whole prompt's triangle at once, one softmax per row; "
        "decode adds one row per step.",
    ]


ANIMATION_CANVAS = Canvas(640, 424)


def render(inputs: dict, out: pathlib.Path, quality: str | None = None) -> str:
    """The light and dark stills, the animation and its poster in `out`; the <picture> and the
    closed <details> with the <video> (quality: see `_manim.still_html`)."""
    from figures.scenes.kv_cache import KVCacheScene, KVGrowthAnimation

    quality = quality or inputs.get("quality")
    still = _manim.still_html(ID, KVCacheScene, inputs, out, canvas=CANVAS, alt=alt(inputs), quality=quality)
    video = _manim.render_animation(KVGrowthAnimation, inputs, out, canvas=ANIMATION_CANVAS,
                                    quality=quality, stem=f"{ID}-animation")
    t = len(inputs["tokens"])
    label = (f"Animation, GPT-3's real sizes: token {t}'s column climbs layer by layer; at each layer "
             f"its query reads the cached keys of tokens 1 to {t - 1} and its own key, just computed; then "
             f"its key and value join the cache and stay there.")
    return (still
            + _manim.video_html(ID, video, ANIMATION_CANVAS, label,
                                f"Play: the new column climbing the layers ({fmt.fixed(video['seconds'], 0)} s, no sound)"))
