"""Figure 22, memory-budget: the laptop's 64 GB to scale, for two context reservations.

Each bar is the whole memory: the system and apps (measured before any model loaded),
Qwen3.6's weights, the KV cache reserved for num_ctx (f16), and what stays free; one bar
at num_ctx 16,384 (set by hand), one at 262,144 (what Ollama picked). Widths are bytes;
a test reads them back.
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "memory-budget"
KIND = "S"
RENDERER = "svg"
PART_LABELS = {"system": "system and apps", "weights": "weights", "kv_cache": "KV cache", "free": "free"}
PART_CLASSES = {"system": "system", "weights": "weights", "kv_cache": "kv", "free": "free"}


def alt(inputs: dict) -> str:
    bars = "; ".join(
        f"num_ctx {fmt.comma(b['num_ctx'])}: system {fmt.gb(b['system_bytes'], 0)}, weights {fmt.gb(b['weights_bytes'])}, "
        f"KV cache {fmt.bytes_si(b['kv_cache_bytes'])}, free {fmt.bytes_si(b['free_bytes'])}" for b in inputs["bars"])
    return (f"Two bars, each the laptop's {fmt.gb(inputs['total_bytes'], 0)} to scale, with Qwen3.6 35B-A3B in "
            f"Q4_K_M and an f16 KV cache: {bars}. Without the hybrid layers the larger cache would take "
            f"{fmt.bytes_si(inputs['kv_all_layers_bytes'])}.")


def inputs(ctx) -> dict:
    """The budget at the request's num_ctx and at Ollama's own, as the namespace holds it
    (article/numbers/laptop.py: n.budget_bars)."""
    n = ctx.n
    return {
        "model": n["request_model"],
        "machine": n["request_machine"],
        "total_bytes": n["budget_bars"][0]["total_bytes"],
        "bars": n["budget_bars"],
        "kv_all_layers_bytes": n["budget_kv_all_layers_bytes"],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._svg import Svg

    width, left, right = 640, 16, 624
    bar_h, gap = 40, 78
    top = 40
    height = top + len(inputs["bars"]) * (bar_h + gap) + 10
    px_per_byte = (right - left) / inputs["total_bytes"]
    svg = Svg(width, height, title="The laptop's memory with the model loaded", desc=alt(inputs), id_prefix=ID)
    svg.root.set("data-px-per-gb", f"{px_per_byte * 1e9:.6g}")
    for i, bar in enumerate(inputs["bars"]):
        y = top + i * (bar_h + gap)
        g = svg.group("bar", **{"data-num-ctx": bar["num_ctx"], "data-free-bytes": f"{bar['free_bytes']:.0f}"})
        svg.text(left, y - 10, f"num_ctx = {fmt.comma(bar['num_ctx'])}", "label bold", parent=g)
        x = left
        parts = [("system", bar["system_bytes"]), ("weights", bar["weights_bytes"]),
                 ("kv_cache", bar["kv_cache_bytes"]), ("free", max(bar["free_bytes"], 0.0))]
        for name, n_bytes in parts:
            w = n_bytes * px_per_byte
            svg.rect(x, y, w, bar_h, PART_CLASSES[name], parent=g,
                     **{"data-part": name, "data-bytes": f"{n_bytes:.0f}"})
            label = fmt.gb(n_bytes, 1 if name != "system" else 0)
            if name == "kv_cache":
                # The cache can be a sliver: its label goes below the bar, at its place.
                svg.line(x + w / 2, y + bar_h, x + w / 2, y + bar_h + 8, "stroke-fg", parent=g)
                svg.text(x + w / 2, y + bar_h + 22, f"KV {fmt.bytes_si(n_bytes)}", "small num", anchor="middle", parent=g)
            elif name == "free":
                # Above the bar's right end: the free part can be too narrow for its label.
                svg.text(right, y - 10, f"free {fmt.bytes_si(n_bytes)}", "label num", anchor="end", parent=g)
            else:
                svg.text(x + 8, y + bar_h / 2 + 5, label, "small num bold", parent=g,
                         style="fill:var(--fig-bg,#ffffff)")
            x += w
        svg.rect(left, y, right - left, bar_h, "stroke-muted", parent=g, **{"data-part": "frame"})
    # Legend.
    y = height - 14
    x = left
    for name in ("system", "weights", "kv_cache", "free"):
        svg.rect(x, y - 11, 12, 12, PART_CLASSES[name])
        svg.text(x + 17, y, PART_LABELS[name], "small")
        x += 30 + 8 * len(PART_LABELS[name])
    return svg.to_string()
