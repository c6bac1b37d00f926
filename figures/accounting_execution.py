"""Figure 17, accounting-execution: one 2,048-token prefill step, as totals and as 32 layers.

Dense 7B in fp16 on one H100 SXM. Accounting level (the roofline, `tokenwalk.physics.roofline.step_time`):
the step's bytes over the bandwidth, 4.2 ms, and its operations over the FLOP/s, 29 ms; the
step is the larger. Execution level: the 32 layers one after another, each the larger of
its own bytes (0.13 ms) and operations (0.9 ms) (`tokenwalk.physics.roofline.layer_step_time`). Both levels share one time axis; every
bar's width is its milliseconds at that scale (a test reads them back). They agree because
every layer of the 7B has the same ratio of bytes to operations.
"""

from __future__ import annotations

import pathlib

from figures._lanes import NOTE, ms_text
from tokenwalk import format as fmt

ID = "accounting-execution"
KIND = "S"
RENDERER = "svg"


def _ms(ms: float) -> str:
    """This figure's inputs are in milliseconds already."""
    return ms_text(ms / 1e3)


def alt(inputs: dict) -> str:
    a = inputs
    return (f"One prefill step of {fmt.comma(a['tokens'])} tokens through the dense 7B in fp16 on one H100 SXM, twice, to "
            f"scale on one time axis. Accounting level, the step's totals in no order: bytes "
            f"{fmt.gb(a['weights_bytes'], 0)} ÷ {fmt.bandwidth(a['bandwidth_gbs'])} = {_ms(a['memory_ms'])} ms; "
            f"operations {fmt.comma(a['tokens'])} × {fmt.fixed(a['flops_per_token'] / 1e9, 0)} billion ÷ "
            f"{fmt.fixed(round(a['tflops'], -1), 0)} TFLOP/s = {_ms(a['compute_ms'])} ms; the step lasts the larger. "
            f"Execution level, {a['layers']} layers in a row, each lasting the larger of "
            f"{fmt.fixed(a['layer_memory_ms'], 2)} ms of bytes and {fmt.fixed(a['layer_compute_ms'], 1)} ms of operations: "
            f"{a['layers']} × {fmt.fixed(a['layer_compute_ms'], 1)} = {_ms(a['layers'] * a['layer_compute_ms'])} ms.")


def inputs(ctx) -> dict:
    """The H100 example's prefill step, totals and per layer, as the namespace has them."""
    n = ctx.n
    return {
        "tokens": n["d7_prefill_tokens"], "layers": n["d7_layers"],
        "weights_bytes": n["d7_prefill_gb"] * 1e9, "bandwidth_gbs": n["h100_bandwidth_gbs"],
        "tflops": n["h100_tflops"], "flops_per_token": n["d7_flops_per_token_g"] * 1e9,
        "memory_ms": n["d7_prefill_memory_ms"], "compute_ms": n["d7_prefill_compute_ms"],
        "step_ms": n["d7_prefill_step_ms"],
        "layer_memory_ms": n["d7_layer_memory_ms"], "layer_compute_ms": n["d7_layer_compute_ms"],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._lanes import TimeScale
    from figures._svg import Svg

    a = inputs
    width, x0, x1 = 640, 58, 620
    lane_h, top = 22, 8
    layer_ms = max(a["layer_memory_ms"], a["layer_compute_ms"])
    t_max = max(a["step_ms"], a["layers"] * layer_ms)
    height = 372
    svg = Svg(width, height, title="Accounting level and execution level", desc=alt(a), id_prefix=ID)
    scale = TimeScale(svg, x0, x1, t_max, lane_h, ms_per_unit=1)  # this figure's times are milliseconds
    x_at, bar, px_per_ms = scale.x_at, scale.bar, scale.px_per_unit

    # Accounting level.
    g = svg.group("level", **{"data-level": "accounting"})
    svg.text(16, top + 16, "accounting level: the step's totals, no order", "label bold", parent=g)
    by, oy = top + 28, top + 28 + lane_h + 6
    scale.lane_names(g, ((by, "bytes"), (oy, "ops")), 16)
    bar(g, 0, a["memory_ms"], by, "bus", "bytes")
    bar(g, 0, a["compute_ms"], oy, "compute", "ops")
    svg.text(x_at(a["memory_ms"]) + 8, by + 16,
             f"{fmt.gb(a['weights_bytes'], 0)} ÷ {fmt.bandwidth(a['bandwidth_gbs'])} = {_ms(a['memory_ms'])} ms",
             "label num", parent=g)
    svg.text(x0 + 8, oy + 16,
             f"{fmt.comma(a['tokens'])} × {fmt.fixed(a['flops_per_token'] / 1e9, 0)} G ÷ {fmt.fixed(round(a['tflops'], -1), 0)} T/s = "
             f"{_ms(a['compute_ms'])} ms", "label num bold bg", parent=g)
    svg.text(x0, oy + lane_h + 22,
             f"step = max({_ms(a['memory_ms'])}, {_ms(a['compute_ms'])}) = {_ms(a['step_ms'])} ms", "label num",
             parent=g)

    # Execution level.
    y = top + 140
    g = svg.group("level", **{"data-level": "execution"})
    svg.text(16, y + 16, f"execution level: {a['layers']} layers in a row", "label bold", parent=g)
    by, oy = y + 28, y + 28 + lane_h + 6
    scale.lane_names(g, ((by, "bytes"), (oy, "ops")), 16)
    for k in range(a["layers"]):
        t0 = k * layer_ms
        bar(g, t0, a["layer_memory_ms"], by, "bus", "layer-bytes", **{"data-layer": k + 1})
        bar(g, t0, a["layer_compute_ms"], oy, "compute", "layer-ops", **{"data-layer": k + 1})
        svg.rect(f"{x_at(t0):.3f}", oy, f"{a['layer_compute_ms'] * px_per_ms:.3f}", lane_h, "stroke-bg", parent=g,
                 stroke_width=1)
    ly = oy + lane_h + 18
    first_end = x_at(layer_ms)
    svg.path(f"M{x0} {oy + lane_h + 4} v5 H{first_end:.2f} v-5", "stroke-muted", parent=g)
    svg.text(x0, ly + 4, "layer 1", "note", parent=g, **NOTE)
    svg.text(x_at(a["layers"] * layer_ms), ly + 4, f"layer {a['layers']}", "note", anchor="end", parent=g, **NOTE)
    svg.text(x0, ly + 28,
             f"each layer: max({fmt.fixed(a['layer_memory_ms'], 2)}, {fmt.fixed(a['layer_compute_ms'], 1)}) ms · "
             f"{a['layers']} × {fmt.fixed(a['layer_compute_ms'], 1)} = {_ms(a['layers'] * layer_ms)} ms", "label num", parent=g)

    # The shared axis, then the legend.
    ya = y + 152
    scale.axis(ya, 5)
    scale.legend(ya + 46, (("bus", "bytes over the bus"), ("compute", "operations on the SMs")))
    return svg.to_string()
