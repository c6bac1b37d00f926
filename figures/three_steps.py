"""Figure 15, three-steps: steps of 1, 295 and 2,048 tokens on one time axis, to scale.

Dense 7B in fp16 through its 32 layers on one H100 SXM (`tokenwalk.physics.roofline.step_time`, in
the namespace's n.d7_three_steps).
In each step the bus brings the weights while the SMs compute, both from the start; the
step ends when the slower one ends, and the faster one waits. 295 is the most tokens a
step carries before compute outlasts the weights' trip (`batching.max_users_same_step`);
2,048 is the article's prompt (data/cited/article.json). Every bar's width is its
milliseconds at one scale, shared by the three steps (a test reads it back).
"""

from __future__ import annotations

import pathlib

from figures._lanes import ms_text as _ms
from tokenwalk import format as fmt

ID = "three-steps"
KIND = "S"
RENDERER = "svg"


def alt(inputs: dict) -> str:
    parts = []
    for s in inputs["steps"]:
        parts.append(f"{fmt.count(s['tokens'])} token{'s' if s['tokens'] != 1 else ''}: bus {_ms(s['memory_s'])} ms, "
                     f"SMs {_ms(s['compute_s'])} ms, step {_ms(s['step_s'])} ms ({s['bound']}-bound, "
                     f"{fmt.significant(s['tok_s'])} tokens a second)")
    return (f"Three steps of the dense 7B in fp16 through its {fmt.count(inputs['layers'])} layers on one H100 SXM, "
            "drawn to scale on one time axis, each with the bus bringing the weights and the SMs computing at the "
            "same time: "
            + "; ".join(parts) + ". The step lasts as long as the slower of the two.")


def inputs(ctx) -> dict:
    """The three steps as the namespace holds them (article/numbers/h100.py: n.d7_three_steps)."""
    n = ctx.n
    return {"model": n["d7_name"], "machine": n["h100_name"], "layers": n["d7_layers"], "steps": n["d7_three_steps"]}


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._lanes import TimeScale
    from figures._svg import Svg

    steps = inputs["steps"]
    width, x0, x1 = 640, 58, 620
    lane_h, block_h, top = 20, 96, 8
    t_max = max(s["step_s"] for s in steps)
    height = top + block_h * len(steps) + 76
    svg = Svg(width, height, title="Three steps on one time axis", desc=alt(inputs), id_prefix=ID)
    scale = TimeScale(svg, x0, x1, t_max, lane_h)
    bar, px_per_s = scale.bar, scale.px_per_unit

    for i, s in enumerate(steps):
        y = top + i * block_h
        g = svg.group("step", **{"data-tokens": s["tokens"], "data-step-ms": f"{s['step_s'] * 1e3:.6g}"})
        if s["tokens"] == 1:
            head = "1 token (decode)"
        elif s["bound"] == "compute":
            head = f"{fmt.count(s['tokens'])} tokens (prefill)"
        else:
            head = f"{fmt.count(s['tokens'])} tokens (balance)"
        svg.text(x0, y + 16, head, "label bold", parent=g)
        svg.text(x1, y + 16, f"step {_ms(s['step_s'])} ms · {fmt.significant(s['tok_s'])} tok/s", "label num",
                 anchor="end", parent=g)
        by, sy = y + 26, y + 26 + lane_h + 6
        scale.lane_names(g, ((by, "bus"), (sy, "SMs")), 15)
        # Both start at 0; the faster one waits until the step ends.
        bar(g, 0, s["memory_s"], by, "bus", "bus")
        bar(g, 0, s["compute_s"], sy, "compute", "sm")
        if s["memory_s"] < s["step_s"]:
            bar(g, s["memory_s"], s["step_s"] - s["memory_s"], by, "wait", "bus-wait")
        if s["compute_s"] < s["step_s"]:
            bar(g, s["compute_s"], s["step_s"] - s["compute_s"], sy, "wait", "sm-wait")
        if s["compute_s"] * px_per_s < 2:
            # A hairline at this scale: mark where it is.
            svg.line(x0 + 0.75, sy - 2, x0 + 0.75, sy + lane_h + 2, "stroke-compute", parent=g, stroke_width=1.5)
        # Labels on or beside the bars.
        for lane_y, seconds in ((by, s["memory_s"]), (sy, s["compute_s"])):
            end = x0 + seconds * px_per_s
            label = f"{_ms(seconds)} ms"
            waits = seconds < 0.99 * s["step_s"]  # 4.17 against 4.18 ms is no wait worth drawing a word for
            if waits:
                label += " · then waits"
            if end > x0 + 120 and not waits:
                # Inside its own bar, in the background colour (readable on the bar in both themes).
                svg.text(end - 6, lane_y + 15, label, "label num bold bg", anchor="end", parent=g)
            else:
                svg.text(end + 6, lane_y + 15, label, "label num", parent=g)
    # The shared axis, then the legend.
    ya = top + block_h * len(steps) + 4
    scale.axis(ya, 5)
    scale.legend(ya + 44, (("bus", "bus: brings the weights"), ("compute", "SMs: compute"), ("wait", "waiting")))
    return svg.to_string()
