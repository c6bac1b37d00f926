"""Figure 29, request-trace: the article's request in ten steps, from HTTP to the end-of-turn token.

Qwen3.6 35B-A3B on the laptop (Radeon 860M, 64 GB at 128 GB/s), num_ctx 16,384. The
request's sizes come from content/request/ through the article's namespace (its token
count from a real tokenizer); every time and byte count from `tokenwalk.walk.walk_request`
on that request, the same walk the article's text quotes. Under the ten steps, the
request's time to scale: the cold load (if the model was unloaded), the time to the first
token, and the writing (a test reads the widths back).
"""

from __future__ import annotations

import pathlib

ID = "request-trace"
KIND = "S"
RENDERER = "svg"

NOTE = {"style": "font-size:13px"}
WIDTH = 440  # narrower than the lane figures: this one is mostly text
MAX_CSS_PX = 520  # on a wide column it stops growing, so its text stays near the body text
# The three parts of the trace: which steps, their colour class, their heading.
PHASES = (
    (range(1, 5), "muted", "the text becomes numbers: milliseconds"),
    (range(5, 9), "compute", "prefill: the whole prompt, once"),
    (range(9, 11), "bus", "decode: one token per step"),
)


def _steps(a: dict) -> list[tuple[str, str]]:
    """(what happens, its numbers) for the ten steps."""
    return [
        ("Ollama receives the messages over HTTP", f"localhost:{a['port']}"),
        ("the chat template makes one ChatML string", "system + user + assistant"),
        ("the tokenizer cuts it into token IDs", f"≈ {round(a['prompt_tokens'], -1):,.0f} tokens"),
        ("each ID picks its row of the embeddings", f"{a['width']:,} numbers each"),
        (f"prefill: chunks through all {a['layers']} layers",
         f"{a['chunk_count']} chunks of {a['chunk_tokens']} · ≈ {a['prefill_s']:.0f} s"),
        (f"the {a['kv_layers']} attention layers keep K and V", f"{a['kv_bytes'] / 1e6:.0f} MB of KV cache"),
        ("the LM head scores the last column", f"{a['vocab']:,} logits"),
        ("the sampler draws the first token", f"at ≈ {a['ttft_s']:.0f} s"),
        ("each next token: one decoding step", f"reads ≈ {a['step_bytes'] / 1e9:.2f} GB · ≈ {a['step_s'] * 1e3:.0f} ms"),
        ("the end-of-turn token stops the loop", f"≈ {a['decode_steps']} steps · ≈ {a['decode_s']:.0f} s"),
    ]


def alt(inputs: dict) -> str:
    a = inputs
    steps = "; ".join(f"({i}) {what}: {value}" for i, (what, value) in enumerate(_steps(a), 1))
    return (f"The article's request, {a['model_title']} on the {a['machine_title']}, with num_ctx "
            f"{a['num_ctx']:,}, in ten steps: {steps}. Below, the request's time to scale: a cold load of "
            f"{a['load_s']:.0f} s if the model was unloaded, {a['ttft_s']:.0f} s to the first token, and "
            f"{a['decode_s']:.0f} s of writing.")


def inputs_for(model, machine, request, port: int) -> dict:
    """The trace's numbers for any request on any model and machine (tokenwalk's walk)."""
    from tokenwalk.walk import walk_request

    w = walk_request(model, machine, request)
    prefill, decode = w.stage("prefill"), w.stage("decode")
    return {
        "model": model.name, "machine": machine.name, "port": port,
        "model_title": getattr(model, "title", None) or model.name,
        "machine_title": getattr(machine, "title", None) or machine.name,
        "prompt_tokens": request.prompt_tokens, "output_tokens": request.output_tokens,
        "num_ctx": request.context_tokens, "chunk_tokens": request.chunk_tokens,
        "chunk_count": prefill.detail["chunk_count"],
        "width": model.embedding_length, "layers": model.layers, "kv_layers": model.kv_layers,
        "vocab": model.vocab_size, "compute_units": machine.compute_units,
        "load_s": w.load_s, "prefill_s": w.prefill_s, "ttft_s": w.ttft_s,
        "kv_bytes": prefill.detail["kv_written_bytes"],
        "step_bytes": decode.detail["first_step_bytes"], "step_s": decode.detail["first_step_s"],
        "decode_steps": decode.detail["steps"], "decode_s": w.decode_s,
    }


def inputs(ctx) -> dict:
    from tokenwalk.walk import Request

    n, ex = ctx.n, ctx.scenario.laptop_request
    request = Request(prompt_tokens=n["request_prompt_tokens"], output_tokens=n["request_output_tokens"],
                      num_ctx=n["request_num_ctx"], chunk_tokens=n["request_chunk_tokens"],
                      kv_type=n["request_kv_type"])
    return inputs_for(ex.model, ex.machine, request, n["ollama_port"])


def render(inputs: dict, out: pathlib.Path) -> str:
    """A narrow drawing (440 units, capped at MAX_CSS_PX on wide screens): ten steps of text read
    at about 11 px on a 360 px phone instead of 7 px in a 640-unit one."""
    from figures._svg import Svg

    a = inputs
    steps = _steps(a)
    width, row_h, head_h, top = WIDTH, 44, 30, 4
    num_x, text_x = 24, 46
    y = top
    layout = []
    for members, cls, heading in PHASES:
        layout.append(("heading", y, cls, heading))
        y += head_h
        for i in members:
            layout.append(("step", y, cls, i))
            y += row_h
        y += 4
    strip_y = y + 34
    height = strip_y + 84
    svg = Svg(width, height, title="The request in ten steps", desc=alt(a), id_prefix=ID)
    svg.root.set("style", f"max-width:{MAX_CSS_PX}px;margin:0 auto")
    group_top = {}
    for kind, y, cls, what in layout:
        if kind == "heading":
            svg.text(6, y + 20, what, "label bold")
            group_top[cls] = y + head_h
            continue
        i = what
        desc, value = steps[i - 1]
        g = svg.group("trace-step", **{"data-step": i})
        svg.circle(num_x, y + 15, 11, "bg", parent=g)
        svg.circle(num_x, y + 15, 11, f"stroke-{cls}", parent=g, stroke_width=2)
        svg.text(num_x, y + 20, str(i), "label bold num", anchor="middle", parent=g, style="font-size:13px")
        svg.text(text_x, y + 20, desc, "label", parent=g)
        svg.text(text_x, y + 38, value, "label num bold", parent=g)
    # A thin band down the left of each group, in its colour.
    for members, cls, _ in PHASES:
        y0 = group_top[cls]
        svg.rect(6, y0 + 3, 5, row_h * len(members) - 8, cls, rx=2)

    # The request's time, to scale: load (if cold), to the first token, writing.
    x0, x1 = 6, width - 6
    parts = [("load", a["load_s"], "accent", f"cold load {a['load_s']:.0f} s"),
             ("first-token", a["ttft_s"], "compute", f"first token {a['ttft_s']:.0f} s"),
             ("decode", a["decode_s"], "bus", f"writing {a['decode_s']:.0f} s")]
    total = sum(p[1] for p in parts)
    px_per_s = (x1 - x0) / total
    svg.root.set("data-px-per-s", f"{px_per_s:.6g}")
    svg.text(x0, strip_y - 10, "the request's time, to scale", "label bold")
    x = x0
    for k, (key, seconds, cls, label) in enumerate(parts):
        w = seconds * px_per_s
        svg.rect(f"{x:.3f}", strip_y, f"{w:.3f}", 24, cls, fill_opacity=0.35 if key == "load" else 1,
                 **{"data-part": key, "data-s": f"{seconds:.6g}"})
        svg.line(x, strip_y + 24, x, strip_y + 32, "stroke-muted")
        anchor, lx = ("end", x + w) if k == len(parts) - 1 else ("start", x)
        svg.text(lx, strip_y + 48, label, "label num", anchor=anchor)
        x += w
    svg.text(x0, strip_y + 72, "the load: only if the model was unloaded", "note", **NOTE)
    return svg.to_string()
