"""Figure 12, tile: one 128 x 128 weight tile (32 KB in fp16) in an H100 SM's shared memory,
meeting one token (decode) and 128 tokens (prefill).

The same trip over the bus brings the tile in both rows; what changes is the number of
tokens that use it before it is dropped: 32,768 operations against 4,194,304
(`tokenwalk.physics.roofline.tile_ops`; the tile's size from `tokenwalk.physics.roofline.tile_bytes`).
The bar under each count is the operations to scale (a test reads it back).
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "tile"
KIND = "S"
RENDERER = "svg"

NOTE = {"style": "font-size:13px"}
WIDTH = 440  # narrow, so its text reads on a phone
MAX_CSS_PX = 520  # and stops growing on a wide column


_short = fmt.count_binary  # 32,768 -> 32K, 4,194,304 -> 4M (powers of 1,024, as the article rounds them)


def alt(inputs: dict) -> str:
    r = inputs["tile_rows"]
    return (f"One {r} × {r} tile of a weight matrix of the dense 7B in fp16, {fmt.fixed(inputs['tile_kb'], 0)} KB, in the "
            f"shared memory of one H100 SM ({fmt.fixed(inputs['shared_kb'], 0)} KB). In decode it meets 1 token: "
            f"{fmt.comma(inputs['ops_decode'])} operations ({_short(inputs['ops_decode'])}). In prefill it meets "
            f"{inputs['prefill_tokens']} tokens: {fmt.comma(inputs['ops_prefill'])} operations "
            f"({_short(inputs['ops_prefill'])}), for the same trip over the bus.")


def inputs(ctx) -> dict:
    n = ctx.n
    return {
        "model": n["d7_name"],
        "machine": n["h100_name"],
        "tile_rows": n["tile_rows"],
        # KB of 1,024 bytes, as the H100's shared memory (228 KB) is counted
        "tile_kb": n["tile_kb"],
        "shared_kb": n["h100_shared_kb"],
        "prefill_tokens": n["tile_prefill_tokens"],
        "ops_decode": n["tile_ops_decode"],
        "ops_prefill": n["tile_ops_prefill"],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    """A narrow drawing (440 units, capped at MAX_CSS_PX): tile × tokens = operations on one line,
    the count and its bar under it, so the text reads at about 11 px on a 360 px phone."""
    from figures._svg import Svg

    r = inputs["tile_rows"]
    width, row_h, top, side = WIDTH, 196, 4, 84
    bar_x, bar_max = 14, WIDTH - 28
    rows = [("decode", 1, inputs["ops_decode"]), ("prefill", inputs["prefill_tokens"], inputs["ops_prefill"])]
    px_per_op = bar_max / max(ops for _, _, ops in rows)
    height = top + row_h * len(rows) + 44
    svg = Svg(width, height, title="One weight tile, one token or many", desc=alt(inputs), id_prefix=ID)
    svg.root.set("style", f"max-width:{MAX_CSS_PX}px;margin:0 auto")
    svg.root.set("data-px-per-mop", f"{px_per_op * 1e6:.6g}")
    for i, (phase, tokens, ops) in enumerate(rows):
        y = top + i * row_h
        g = svg.group("row", **{"data-phase": phase, "data-tokens": tokens})
        svg.text(4, y + 18, f"{phase} · {fmt.comma(tokens)} token{'s' if tokens != 1 else ''}", "label bold", parent=g)
        # The SM's shared memory holding the tile.
        ty = y + 34
        svg.rect(4, ty - 6, side + 20, side + 12, "stroke-muted", parent=g, rx=4, stroke_dasharray="4 3")
        svg.rect(14, ty, side, side, "bus", parent=g, fill_opacity=0.2, **{"data-part": "tile"})
        svg.rect(14, ty, side, side, "stroke-bus", parent=g, stroke_width=2)
        svg.text(14 + side / 2, ty + 24, "W", "label bold", anchor="middle", parent=g)
        svg.text(14 + side / 2, ty + 48, f"{r} × {r}", "num", anchor="middle", parent=g)
        svg.text(14 + side / 2, ty + 71, f"{fmt.fixed(inputs['tile_kb'], 0)} KB", "num", anchor="middle", parent=g)
        svg.text(126, ty + side / 2 + 6, "×", "title", anchor="middle", parent=g)
        # The tokens that meet it: a lone column, or a block as wide as the tile.
        tx = 142
        if tokens == 1:
            svg.rect(tx, ty, 10, side, "compute", parent=g, fill_opacity=0.55, **{"data-part": "tokens"})
            svg.rect(tx, ty, 10, side, "stroke-compute", parent=g, stroke_width=1.5)
            svg.text(tx + 16, ty + side / 2 - 4, "one", "note", parent=g, **NOTE)
            svg.text(tx + 16, ty + side / 2 + 14, "column", "note", parent=g, **NOTE)
            eq_x = tx + 80
        else:
            svg.rect(tx, ty, side, side, "compute", parent=g, fill_opacity=0.3, **{"data-part": "tokens"})
            svg.rect(tx, ty, side, side, "stroke-compute", parent=g, stroke_width=1.5)
            svg.text(tx + side / 2, ty + 40, f"{tokens}", "label bold", anchor="middle", parent=g)
            svg.text(tx + side / 2, ty + 60, "tokens", "note", anchor="middle", parent=g, **NOTE)
            eq_x = tx + side + 16
        svg.text(eq_x, ty + side / 2 + 6, "=", "title", anchor="middle", parent=g)
        svg.text(eq_x + 16, ty + side / 2 + 6, f"{_short(ops)} operations", "title", parent=g)
        # The count in full, and the operations as a bar to scale.
        by = ty + side + 12
        svg.text(bar_x, by + 14, f"2 × {r} × {r} × {fmt.comma(tokens)} = {fmt.comma(ops)}", "note num", parent=g, **NOTE)
        svg.rect(bar_x, by + 24, ops * px_per_op, 16, "compute", parent=g,
                 **{"data-part": "ops-bar", "data-ops": ops})
        if ops * px_per_op < 20:
            svg.text(bar_x + ops * px_per_op + 6, by + 37, "← a sliver at this scale", "note", parent=g, **NOTE)
    y = top + row_h * len(rows) + 8
    svg.text(4, y, f"dashed: one SM's shared memory, {fmt.fixed(inputs['shared_kb'], 0)} KB", "note", **NOTE)
    svg.text(4, y + 20, "the tile's trip costs the same in both rows", "note", **NOTE)
    return svg.to_string()
