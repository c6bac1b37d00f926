"""Figure 14, overlap: the bus and the SMs working at the same time, batch of tiles by batch.

Dense 7B in fp16 on one H100 SXM, one step (`tokenwalk.physics.roofline.step_time`): decode (one
token) and prefill (2,048 tokens). The step's weights are drawn as five equal batches of
tiles; the bus brings batch k+1 while the SMs compute batch k (double buffering: two
buffers, so the bus never runs more than one batch ahead). In decode the SMs finish each
batch at once and wait for the next: the step is the sum of the trips, 4.2 ms. In prefill
the bus waits for a free buffer: the step is the sum of the arithmetic, 29 ms, plus the
first batch's trip. Both panels share one time axis; every bar's width is its
milliseconds at that scale (a test reads them back).
"""

from __future__ import annotations

import pathlib

from figures._lanes import ms_text as _ms
from tokenwalk import format as fmt

ID = "overlap"
KIND = "S"
RENDERER = "svg"
BATCHES = 5  # how many pieces the step's weights are drawn in (a drawing choice, not a tile count)


def double_buffered(bus_s: float, sm_s: float, batches: int) -> tuple[list, list]:
    """Start times of each batch's trip and computation with two buffers (layout, seconds).

    A batch is computed once it has arrived and the previous batch is done; a trip starts
    once the previous trip is over and the batch two back has freed its buffer.
    """
    bus_start, sm_start = [], []
    bus_end = sm_end = 0.0
    sm_ends = []
    for k in range(batches):
        start = max(bus_end, sm_ends[k - 2] if k >= 2 else 0.0)
        bus_start.append(start)
        bus_end = start + bus_s
        s = max(bus_end, sm_end)
        sm_start.append(s)
        sm_end = s + sm_s
        sm_ends.append(sm_end)
    return bus_start, sm_start


def alt(inputs: dict) -> str:
    d, p = inputs["decode"], inputs["prefill"]
    return (f"Two lanes, the memory bus and the SMs of one H100 SXM, for one step of the dense 7B in fp16, its "
            f"weights drawn as {inputs['batches']} batches of tiles, to scale on one time axis. Decode, 1 token: "
            f"the bus brings the batches back to back in {_ms(d['memory_s'])} ms and the SMs finish each in an "
            f"instant ({_ms(d['compute_s'])} ms in all) and wait: the step is the sum of the trips. Prefill, "
            f"{fmt.comma(p['tokens'])} tokens: the SMs compute for {_ms(p['compute_s'])} ms while the bus, done after "
            f"{_ms(p['memory_s'])} ms of trips, waits for a free buffer: the step is the sum of the arithmetic.")


def inputs(ctx) -> dict:
    """One decode step and one prefill step of the H100 example, as the namespace has them."""
    n = ctx.n

    def one(tokens, memory_ms, compute_ms, step_ms):
        return {"tokens": tokens, "memory_s": memory_ms / 1e3, "compute_s": compute_ms / 1e3,
                "step_s": step_ms / 1e3, "bound": "compute" if compute_ms > memory_ms else "memory"}

    return {"batches": BATCHES,
            "decode": one(1, n["d7_step_memory_ms"], n["d7_decode_compute_ms"], n["d7_decode_step_ms"]),
            "prefill": one(n["d7_prefill_tokens"], n["d7_prefill_memory_ms"], n["d7_prefill_compute_ms"],
                           n["d7_prefill_step_ms"])}


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._lanes import TimeScale
    from figures._svg import Svg

    n_b = inputs["batches"]
    panels = []
    for key in ("decode", "prefill"):
        s = inputs[key]
        bus_s, sm_s = s["memory_s"] / n_b, s["compute_s"] / n_b
        bus_start, sm_start = double_buffered(bus_s, sm_s, n_b)
        end = max(bus_start[-1] + bus_s, sm_start[-1] + sm_s)
        panels.append((key, s, bus_s, sm_s, bus_start, sm_start, end))
    width, x0, x1 = 640, 58, 620
    lane_h, panel_h, top = 22, 120, 8
    t_max = max(p[-1] for p in panels)
    height = top + panel_h * len(panels) + 70
    svg = Svg(width, height, title="The bus and the SMs overlap", desc=alt(inputs), id_prefix=ID)
    scale = TimeScale(svg, x0, x1, t_max, lane_h)
    x_at, bar, px_per_s = scale.x_at, scale.bar, scale.px_per_unit

    for i, (key, s, bus_s, sm_s, bus_start, sm_start, end) in enumerate(panels):
        y = top + i * panel_h
        g = svg.group("panel", **{"data-phase": key, "data-tokens": s["tokens"]})
        if key == "decode":
            head, foot = "decode, 1 token: the SMs wait for the bus", \
                f"step ≈ the sum of the trips: {_ms(s['memory_s'])} ms"
        else:
            head, foot = f"prefill, {fmt.comma(s['tokens'])} tokens: the bus waits", \
                f"step ≈ the sum of the arithmetic: {_ms(s['compute_s'])} ms"
        svg.text(x0, y + 16, head, "label bold", parent=g)
        by, sy = y + 26, y + 26 + lane_h + 6
        scale.lane_names(g, ((by, "bus"), (sy, "SMs")), 16)
        # Waiting first (the lane's background up to the step's end), then the work on top.
        bar(g, 0, end, by, "wait", "bus-lane")
        bar(g, 0, end, sy, "wait", "sm-lane")
        for k in range(len(bus_start)):
            bar(g, bus_start[k], bus_s, by, "bus", "bus", **{"data-batch": k + 1})
            svg.rect(f"{x_at(bus_start[k]):.3f}", by, f"{bus_s * px_per_s:.3f}", lane_h, "stroke-bg", parent=g,
                     stroke_width=1)
            bar(g, sm_start[k], sm_s, sy, "compute", "sm", **{"data-batch": k + 1})
            if sm_s * px_per_s < 2:
                xm = x_at(sm_start[k]) + 0.75
                svg.line(xm, sy - 2, xm, sy + lane_h + 2, "stroke-compute", parent=g, stroke_width=1.5)
            else:
                svg.rect(f"{x_at(sm_start[k]):.3f}", sy, f"{sm_s * px_per_s:.3f}", lane_h, "stroke-bg",
                         parent=g, stroke_width=1)
                svg.text(x_at(sm_start[k] + sm_s / 2), sy + 16, str(k + 1), "label bold bg", anchor="middle",
                         parent=g)
            if bus_s * px_per_s >= 10:
                svg.text(x_at(bus_start[k] + bus_s / 2), by + 16, str(k + 1), "label bold bg", anchor="middle",
                         parent=g)
        # The step's length, under the lanes.
        fy = sy + lane_h + 20
        svg.text(x0, fy, foot, "label num", parent=g)
    # The shared axis, then the legend.
    ya = top + panel_h * len(panels) + 2
    scale.axis(ya, 5)
    scale.legend(ya + 46, (("bus", "bus: brings batch k"), ("compute", "SMs: compute batch k"), ("wait", "waiting")))
    return svg.to_string()
