"""Figure 21, kv-growth: one user's decode speed as the context grows, 7B fp16 on one H100 SXM.

Each row is one decode step to scale: the weights (the same every step) and the KV cache
of the context so far (0.5 MB per token without GQA), both read over the same bus, and
the speed that bandwidth allows. Widths are bytes; a test reads them back.
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "kv-growth"
KIND = "S"
RENDERER = "svg"


def alt(inputs: dict) -> str:
    rows = "; ".join(f"{fmt.comma(r['context_tokens'])} tokens: {fmt.count(r['tok_s'])} tok/s" for r in inputs["rows"])
    return (f"Bars of the bytes one decode step reads for one user of a dense 7B in fp16 without GQA on an H100 SXM: "
            f"{fmt.gb(inputs['weights_bytes'], 0)} of weights plus {fmt.mb(inputs['kv_bytes_per_token'], 1)} of "
            f"KV cache per token of context. Decode speed: {rows}.")


def inputs(ctx) -> dict:
    """Bytes per step and decode ceiling at each context length of the namespace's kv_growth
    (the H100 example, sc_kv_growth_contexts)."""
    n = ctx.n
    return {
        "bandwidth_gbs": n["h100_bandwidth_gbs"],
        "weights_bytes": n["d7_size_gb"] * 1e9,
        "kv_bytes_per_token": n["kv_bytes_per_token_d7"],
        # what the step reads: every token of a full layer, the window of a sliding one
        "rows": [{"context_tokens": r["context"], "kv_bytes": r["kv_gb"] * 1e9, "tok_s": r["tok_s"]}
                 for r in n["kv_growth"]],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._svg import Svg

    rows = inputs["rows"]
    width, left, bar_right, row_h, top = 640, 92, 480, 46, 34
    height = top + row_h * len(rows) + 56
    max_bytes = max(inputs["weights_bytes"] + r["kv_bytes"] for r in rows)
    px_per_byte = (bar_right - left) / max_bytes
    svg = Svg(width, height, title="Decode speed as the KV cache grows", desc=alt(inputs), id_prefix=ID)
    svg.root.set("data-px-per-gb", f"{px_per_byte * 1e9:.6g}")
    svg.text(left - 10, top - 14, "context", "small note", anchor="end")
    svg.text(left, top - 14, "bytes one decode step reads, to scale", "small note")
    svg.text(width - 8, top - 14, "tok/s", "small note", anchor="end")
    weights_gb = inputs["weights_bytes"] / 1e9
    for i, r in enumerate(rows):
        y = top + i * row_h
        bar_h = 24
        g = svg.group("row", **{"data-context-tokens": r["context_tokens"], "data-tok-s": f"{r['tok_s']:.6g}"})
        svg.text(left - 10, y + 17, f"{fmt.comma(r['context_tokens'])} tok", "num", anchor="end", parent=g)
        w_weights = inputs["weights_bytes"] * px_per_byte
        svg.rect(left, y, w_weights, bar_h, "weights", parent=g, **{"data-bytes": f"{inputs['weights_bytes']:.0f}",
                                                                     "data-part": "weights"})
        if r["kv_bytes"] > 0:
            svg.rect(left + w_weights, y, r["kv_bytes"] * px_per_byte, bar_h, "kv", parent=g,
                     **{"data-bytes": f"{r['kv_bytes']:.0f}", "data-part": "kv"})
        end = left + (inputs["weights_bytes"] + r["kv_bytes"]) * px_per_byte
        label = (fmt.gb(inputs["weights_bytes"], 0) if r["kv_bytes"] == 0
                 else f"{fmt.fixed(weights_gb, 0)} + {fmt.gb(r['kv_bytes'], 1)}")
        svg.text(end + 8, y + 17, label, "small num", parent=g)
        svg.text(width - 8, y + 17, fmt.count(r["tok_s"]), "num bold", anchor="end", parent=g)
    # Legend.
    y = top + len(rows) * row_h + 12
    svg.rect(left, y, 14, 14, "weights")
    svg.text(left + 20, y + 12, f"weights, {fmt.gb(inputs['weights_bytes'], 0)} every step", "small")
    svg.rect(left + 250, y, 14, 14, "kv")
    svg.text(left + 270, y + 12, f"KV cache, {fmt.mb(inputs['kv_bytes_per_token'], 1)} per token", "small")
    svg.text(left, y + 36, f"speed = {fmt.comma(inputs['bandwidth_gbs'], 0)} GB/s ÷ bytes per step", "small note")
    return svg.to_string()
