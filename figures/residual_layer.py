"""Figure 4, residual-layer: one whole layer on the residual stream, in GPT-3's sizes.

A Manim still. The stream runs straight up the middle; attention leaves it to the right
and comes back as a sum, the MLP leaves to the left and comes back as a second sum.
Embedding and position enter at the bottom; the other layers are a stack; a final
LayerNorm, the unembedding and the vocabulary softmax sit at the top. Every size comes
from tokenwalk's GPT-3 preset (`inputs()`); the drawing holds no model size.
"""

from __future__ import annotations

import pathlib

from figures import _manim
from figures._manim import Canvas, fmt_int

ID = "residual-layer"
KIND = "M"
RENDERER = "manim"

CANVAS = Canvas(640, 1180)


def inputs(ctx) -> dict:
    """GPT-3's sizes from tokenwalk (layers, d_model, heads, head size, MLP width, vocabulary),
    and the render quality."""
    return {**_manim.gpt3_sizes(ctx.n), "quality": _manim.quality_name()}


def alt(inputs: dict) -> str:
    n = {k: fmt_int(v) for k, v in inputs.items() if isinstance(v, int)}
    return (
        f"One transformer layer drawn with GPT-3's real sizes, not Qwen's. A vertical residual "
        f"stream of {n['embedding_length']} numbers per token starts at the token embedding plus "
        f"position. An attention branch leaves it to the right: LayerNorm, {n['head_count']} heads "
        f"of {n['head_dim']} in parallel, concatenated to {n['embedding_length']}, the output matrix, "
        f"then added back to the stream. An MLP branch leaves to the left: LayerNorm, "
        f"W1 {n['embedding_length']} × {n['feed_forward_length']}, GELU, W2, added back. "
        f"Layers 2 to {n['layers']} repeat the shape; at the top a final LayerNorm, the unembedding "
        f"{n['embedding_length']} × {n['vocab_size']} and a softmax over the vocabulary."
    )


def steps(inputs: dict) -> list[str]:
    """The drawing from the bottom up, for the "What happens" disclosure."""
    n = {k: fmt_int(v) for k, v in inputs.items() if isinstance(v, int)}
    d = n["embedding_length"]
    return [
        f"At the bottom, the token's embedding and its position are added: the residual stream "
        f"starts as {d} numbers per token.",
        f"Attention branches off to the right: a LayerNorm, then {n['head_count']} heads of "
        f"{n['head_dim']} numbers working side by side, put back together into {d}, through the "
        f"output matrix, and added onto the stream.",
        f"The MLP branches off to the left: a LayerNorm, W1 ({d} × {n['feed_forward_length']}), GELU, "
        f"W2 back to {d}, and a second addition onto the stream.",
        f"That is one layer. Layers 2 to {n['layers']} repeat the same shape on the same stream.",
        f"At the top, a last LayerNorm and the unembedding ({d} × {n['vocab_size']}) give one score "
        f"per vocabulary entry, and a softmax turns them into the next token's probabilities.",
    ]




def render(inputs: dict, out: pathlib.Path, quality: str | None = None) -> str:
    """The light and dark stills in `out` and their <picture> (quality: see `_manim.still_html`)."""
    from figures.scenes.residual_layer import ResidualLayerScene

    return _manim.still_html(ID, ResidualLayerScene, inputs, out, canvas=CANVAS, alt=alt(inputs), quality=quality)
