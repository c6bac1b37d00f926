"""Figure 29, request-trace: the article's request in ten steps, from HTTP to the end-of-turn token.

Qwen3.6 35B-A3B on the laptop (Radeon 860M, 64 GB at 128 GB/s), num_ctx 16,384. The
request's sizes come from content/request/ through the article's namespace (its token
count from a real tokenizer); every time and byte count from the request's walk as the
namespace holds it (`n.walk`, tokenwalk.walk.walk_request), the walk the article's text quotes. Under the ten steps, the
request's time to scale: the cold load (if the model was unloaded), the time to the first
token, and the writing (a test reads the widths back).
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

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


def _steps(a: dict) -> list[tuple[str, list]]:
    """(what happens, its numbers) for the ten steps. The numbers are a list of plain text and
    (quantity, text) pairs: a quantity the article also prints, in the same format as there
    (tokenwalk.format, article/numbers/quantities.py), drawn in a tspan that names it."""
    counted = f", by {a['counted_by']}'s count" if a.get("counted_by") else ""
    return [
        ("Ollama receives the messages over HTTP", [f"localhost:{a['port']}"]),
        ("the chat template makes one ChatML string", ["system + user + assistant"]),
        ("the tokenizer cuts it into token IDs",
         [("request_prompt_tokens", fmt.comma(a["prompt_tokens"])), f" tokens{counted}"]),
        ("each ID picks its row of the embeddings", [f"{fmt.comma(a['width'])} numbers each"]),
        (f"prefill: chunks through all {fmt.count(a['layers'])} layers",
         [f"{fmt.count(a['chunk_count'])} chunks of {fmt.count(a['chunk_tokens'])} · ",
          ("request_prefill_s", fmt.seconds(a["prefill_s"]))]),
        (f"the {fmt.count(a['kv_layers'])} attention layers keep K and V",
         [("request_kv_prompt", fmt.bytes_si(a["kv_bytes"])), " of KV cache"]),
        ("the LM head scores the last column", [f"{fmt.comma(a['vocab'])} logits"]),
        ("the sampler draws the first token", ["at ", ("request_ttft_s", fmt.seconds(a["ttft_s"]))]),
        ("each next token: one decoding step",
         ["reads ", ("request_step_bytes", fmt.bytes_si(a["step_bytes"])), " (weights + KV) · ",
          ("request_step_s", fmt.seconds(a["step_s"]))]),
        ("the end-of-turn token stops the loop",
         [f"{fmt.count(a['decode_steps'])} steps · ", ("request_decode_s", fmt.seconds(a["decode_s"]))]),
    ]


def _plain(parts: list) -> str:
    return "".join(p if isinstance(p, str) else p[1] for p in parts)


def _strip(a: dict) -> list:
    """The time strip's parts: (key, seconds, colour class, label parts)."""
    return [("load", a["load_s"], "accent", ["cold load ", ("cold_load_s", fmt.seconds(a["load_s"]))]),
            ("first-token", a["ttft_s"], "compute", ["first token ", ("request_ttft_s", fmt.seconds(a["ttft_s"]))]),
            ("decode", a["decode_s"], "bus", ["writing ", ("request_decode_s", fmt.seconds(a["decode_s"]))])]


def alt(inputs: dict) -> str:
    a = inputs
    steps = "; ".join(f"({i}) {what}: {_plain(value)}" for i, (what, value) in enumerate(_steps(a), 1))
    load, first, writing = (p[3][1][1] for p in _strip(a))
    return (f"The article's request, {a['model_title']} on the {a['machine_title']}, with num_ctx "
            f"{fmt.comma(a['num_ctx'])}, in ten steps, timed by TokenWalk's timing model: {steps}. Below, the request's "
            f"time to scale: a cold load of {load} if the model was unloaded, {first} to the first token, and "
            f"{writing} of writing.")


def inputs(ctx) -> dict:
    """The request's walk as the namespace holds it (`n.walk`, the one the prose quotes), with
    the model's sizes the steps name."""
    n = ctx.n
    w = n["walk"]
    stages = {stage["name"]: stage for stage in w["stages"]}
    prefill, decode = stages["prefill"], stages["decode"]
    return {
        "model": w["model"], "machine": w["machine"], "port": n["ollama_port"],
        # the tokenizer's family name ("SmolLM2"), short enough for the step's line on a phone
        "counted_by": n["token_count_tokenizer"].split("-")[0],
        "model_title": n["request_model_title"], "machine_title": n["request_machine_title"],
        "prompt_tokens": w["prompt_tokens"], "output_tokens": w["output_tokens"],
        "num_ctx": w["num_ctx"], "chunk_tokens": prefill["chunk_tokens"], "chunk_count": prefill["chunk_count"],
        "width": n["qwen_width"], "layers": n["qwen_layers"], "kv_layers": n["qwen_kv_layers"],
        "vocab": n["qwen_vocab"],
        "load_s": w["load_s"], "prefill_s": w["prefill_s"], "ttft_s": w["ttft_s"],
        "kv_bytes": prefill["kv_written_bytes"],
        "step_bytes": decode["first_step_bytes"], "step_s": decode["first_step_s"],
        "decode_steps": decode["steps"], "decode_s": w["decode_s"],
    }


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
        _parts_text(svg, text_x, y + 38, value, "label num bold", parent=g)
    # A thin band down the left of each group, in its colour.
    for members, cls, _ in PHASES:
        y0 = group_top[cls]
        svg.rect(6, y0 + 3, 5, row_h * len(members) - 8, cls, rx=2)

    # The request's time, to scale: load (if cold), to the first token, writing.
    x0, x1 = 6, width - 6
    parts = _strip(a)
    total = sum(p[1] for p in parts)
    px_per_s = (x1 - x0) / total
    svg.root.set("data-px-per-s", f"{px_per_s:.6g}")
    svg.text(x0, strip_y - 10, "the request's time, to scale (timing model)", "label bold")
    x = x0
    for k, (key, seconds, cls, label) in enumerate(parts):
        w = seconds * px_per_s
        svg.rect(f"{x:.3f}", strip_y, f"{w:.3f}", 24, cls, fill_opacity=0.35 if key == "load" else 1,
                 **{"data-part": key, "data-s": f"{seconds:.6g}"})
        svg.line(x, strip_y + 24, x, strip_y + 32, "stroke-muted")
        anchor, lx = ("end", x + w) if k == len(parts) - 1 else ("start", x)
        _parts_text(svg, lx, strip_y + 48, label, "label num", anchor=anchor)
        x += w
    svg.text(x0, strip_y + 72, "the load (measured): only if the model was unloaded", "note", **NOTE)
    return svg.to_string()


def _parts_text(svg, x, y, parts: list, cls: str, anchor: str = "start", parent=None):
    """One text line of plain strings and (quantity, text) pairs; each quantity in a tspan with
    data-q (its name in article/numbers/quantities.py), so a test can read it back."""
    from xml.etree import ElementTree as ET

    node = svg.text(x, y, "", cls, anchor=anchor, parent=parent)
    node.text, last = "", None
    for part in parts:
        if isinstance(part, str):
            part = fmt.typeset(part)  # as svg.text sets a label: "by Qwen’s count"
            if last is None:
                node.text += part
            else:
                last.tail = (last.tail or "") + part
            continue
        last = ET.SubElement(node, "tspan", {"data-q": part[0]})
        last.text = part[1]
    return node
