"""Figure 20, chunked-prefill: a chunk of prompt riding in a decode step, four steps on one axis.

Dense 7B in fp16 through its 32 layers on one H100 SXM (`tokenwalk.physics.chunked_prefill`):
50 users decoding; the same step with the prompt tokens that fit free (up to the balance
point); with 1,000 prompt tokens (the step grows for everyone); and the same work as two
separate steps (two trips of the weights). The SMs' lane splits the decode tokens' and the
prompt tokens' arithmetic (each `step_time` of its own tokens; compute is linear in tokens,
a test checks the two add up to the mixed step). Every bar's width is its milliseconds at
one scale shared by the four steps.
"""

from __future__ import annotations

import pathlib

from figures._lanes import ms_text as _ms
from tokenwalk import format as fmt

ID = "chunked-prefill"
KIND = "S"
RENDERER = "svg"


def alt(inputs: dict) -> str:
    u, free, p = inputs["users"], inputs["free_tokens"], inputs["prompt_tokens"]
    a, b, c, d = (inputs["steps"][k] for k in ("decode", "ride", "mixed", "separate"))
    return (f"Four steps of the dense 7B in fp16 through its 32 layers on one H100 SXM, to scale on one time axis, "
            f"each with a bus lane (the weights) and an SM lane (the arithmetic). {u} users decoding: "
            f"{_ms(a['step_s'])} ms, SMs busy {fmt.pct(a['sm_busy_share'])}. The same plus {free} prompt "
            f"tokens: still {_ms(b['step_s'])} ms, the prefill rides free. Plus {fmt.comma(p)} prompt tokens: "
            f"{_ms(c['step_s'])} ms, and the {u} users wait too. The same work as two separate steps: "
            f"{_ms(d['decode_s'], 1)} + {_ms(d['prefill_s'], 1)} = {_ms(d['step_s'], 1)} ms, two trips of the weights.")


def inputs(ctx) -> dict:
    """The H100 example's four steps (decode, the free ride, the mixed step, two separate
    steps), as the namespace has them (chunk_*)."""
    n = ctx.n
    s = 1e-3  # the namespace's milliseconds, in seconds

    def mixed(prompt, key):
        if key == "users":
            memory, compute, step, share = (n["chunk_users_memory_ms"], n["chunk_users_compute_ms"],
                                            n["chunk_users_step_ms"], n["chunk_users_sm_share"])
            prompt_compute = 0.0
        else:
            memory, compute, step, share = (n[f"chunk_{key}_memory_ms"], n[f"chunk_{key}_compute_ms"],
                                            n[f"chunk_{key}_ms"], n[f"chunk_{key}_sm_share"])
            prompt_compute = n[f"chunk_{key}_prompt_compute_ms"]
        return {"prompt_tokens": prompt, "memory_s": memory * s, "compute_s": compute * s, "step_s": step * s,
                "sm_busy_share": share, "decode_compute_s": n["chunk_users_compute_ms"] * s,
                "prompt_compute_s": prompt_compute * s}

    return {
        "users": n["chunk_users"], "prompt_tokens": n["chunk_mixed_tokens"],
        "free_tokens": n["chunk_free_ride_tokens"],
        "steps": {
            "decode": mixed(0, "users"),
            "ride": mixed(n["chunk_free_ride_tokens"], "ride"),
            "mixed": mixed(n["chunk_mixed_tokens"], "mixed"),
            "separate": {"decode_s": n["chunk_separate_decode_ms"] * s,
                         "decode_memory_s": n["chunk_separate_decode_memory_ms"] * s,
                         "decode_compute_s": n["chunk_separate_decode_compute_ms"] * s,
                         "prefill_s": n["chunk_separate_prefill_ms"] * s,
                         "prefill_memory_s": n["chunk_separate_prefill_memory_ms"] * s,
                         "prefill_compute_s": n["chunk_separate_prefill_compute_ms"] * s,
                         "step_s": n["chunk_separate_ms"] * s},
        },
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._lanes import TimeScale
    from figures._svg import Svg

    u, free, p = inputs["users"], inputs["free_tokens"], inputs["prompt_tokens"]
    st = inputs["steps"]
    width, x0, x1 = 640, 58, 620
    lane_h, row_h, top = 18, 84, 8
    t_max = max(st["decode"]["step_s"], st["ride"]["step_s"], st["mixed"]["step_s"], st["separate"]["step_s"])
    height = top + row_h * 4 + 72
    svg = Svg(width, height, title="A chunk of prompt in a decode step", desc=alt(inputs), id_prefix=ID)
    scale = TimeScale(svg, x0, x1, t_max, lane_h)
    x_at, bar = scale.x_at, scale.bar

    rows = [
        ("decode", f"{u} users decoding",
         f"{_ms(st['decode']['step_s'])} ms · SMs busy {fmt.pct(st['decode']['sm_busy_share'])}"),
        ("ride", f"{u} + {free} prompt tokens", f"{_ms(st['ride']['step_s'])} ms · the prefill rides free"),
        ("mixed", f"{u} + {fmt.comma(p)} prompt tokens", f"≈ {_ms(st['mixed']['step_s'])} ms · the {u} users wait too"),
        ("separate", "the same as two steps",
         f"{_ms(st['separate']['decode_s'], 1)} + {_ms(st['separate']['prefill_s'], 1)} = "
         f"{_ms(st['separate']['step_s'], 1)} ms · two trips"),
    ]
    for i, (key, head, tail) in enumerate(rows):
        y = top + i * row_h
        s = st[key]
        g = svg.group("step", **{"data-step": key, "data-step-ms": f"{s['step_s'] * 1e3:.6g}"})
        svg.text(x0, y + 16, head, "label bold", parent=g)
        svg.text(x1, y + 16, tail, "label num", anchor="end", parent=g)
        by, sy = y + 24, y + 24 + lane_h + 5
        scale.lane_names(g, ((by, "bus"), (sy, "SMs")), 14)
        bar(g, 0, s["step_s"], by, "wait", "bus-lane")
        bar(g, 0, s["step_s"], sy, "wait", "sm-lane")
        if key != "separate":
            bar(g, 0, s["memory_s"], by, "bus", "bus")
            bar(g, 0, s["decode_compute_s"], sy, "compute", "sm-decode")
            bar(g, s["decode_compute_s"], s["prompt_compute_s"], sy, "compute", "sm-prompt", fill_opacity=0.45)
        else:
            # One step for the users, then one for the prompt: the weights cross twice.
            t2 = s["decode_s"]
            bar(g, 0, s["decode_memory_s"], by, "bus", "bus")
            bar(g, t2, s["prefill_memory_s"], by, "bus", "bus")
            bar(g, 0, s["decode_compute_s"], sy, "compute", "sm-decode")
            bar(g, t2, s["prefill_compute_s"], sy, "compute", "sm-prompt", fill_opacity=0.45)
            svg.line(x_at(t2), by - 3, x_at(t2), sy + lane_h + 3, "stroke-fg", parent=g, stroke_width=1.5)
    # The shared axis, then the legend.
    ya = top + row_h * 4 + 2
    scale.axis(ya, 2)
    scale.legend(ya + 46, (("bus", "bus: weights"), ("compute", f"SMs: {u} decode"),
                           ("compute", "SMs: prefill", {"fill_opacity": 0.45}), ("wait", "waiting")),
                 pad=36, per_char=7.4)
    return svg.to_string()
