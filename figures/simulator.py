"""TokenWalk, the simulator (static part): the walk of the article's request on its model
and machine, stage by stage, with the timeline and the memory budget to scale and the
three numbers; the form that content/static/interactive/simulator.js brings to life; and

Domain: tokenwalk.walk on the request of content/request/request.json (prompt tokens
counted by the article's namespace), presets from tokenwalk/data/models and machines.
The results panel is tokenwalk_app.view.walk_html, the same code the page runs.
"""

from __future__ import annotations

import html
import json
import pathlib

from tokenwalk import format as fmt
from tokenwalk_app.entry import SETTINGS_DEFAULTS, explain, form_choices
from tokenwalk_app.view import fmt_rate, fmt_s, live_summary, walk_html

ID = "simulator"
KIND = "I"
RENDERER = "svg"

KV_TYPES = ("f16", "q8_0", "q4_0")  # the walk CLI's choices
# How the form names each kind of memory (tokenwalk.specs.machine.MEMORY_KINDS): with the
# generations a spec sheet prints, so a reader finds theirs.
MEMORY_EXAMPLES = {"HBM": "HBM (HBM2, HBM2e, HBM3…)", "GDDR": "GDDR (GDDR6, GDDR6X, GDDR7…)",
                   "LPDDR": "LPDDR (LPDDR5, LPDDR5X…)", "DDR": "DDR (DDR4, DDR5…)"}
# How the form names each chip maker (tokenwalk.specs.machine.VENDORS): with the product names
# a spec sheet prints, so a reader of a laptop's or a server's sheet finds the chip's maker.
VENDOR_EXAMPLES = {"AMD": "AMD (Radeon, Instinct, Ryzen…)", "Apple": "Apple (M1, M2, M3, M4…)",
                   "Intel": "Intel (Arc, Core, Xeon…)", "NVIDIA": "NVIDIA (GeForce, Quadro, A100, H100…)"}


def inputs(ctx) -> dict:
    walk = ctx.n["walk"]
    defaults = {"model": walk["model"], "machine": walk["machine"], "prompt_tokens": walk["prompt_tokens"],
                "output_tokens": walk["output_tokens"], "num_ctx": walk["num_ctx"], "kv_type": walk["kv_type"],
                "chunk_tokens": walk["chunk_tokens"], "warm": walk["warm"], "users": walk["users"],
                "spec_alpha": walk["spec_alpha"], "spec_gamma": walk["spec_gamma"]}
    choices = form_choices()
    return {"walk": walk, "explain": explain(walk), "defaults": defaults, "models": choices["models"],
            "machines": choices["machines"], "kv_types": list(KV_TYPES),
            "backends": [["", "Not known"]] + [[b, b] for b in choices["backends"]],
            "vendors": [["", "Not known"]] + [[v, VENDOR_EXAMPLES.get(v, v)] for v in choices["vendors"]],
            "device_classes": [["", "Not known"]] + [[c, c.capitalize()] for c in choices["device_classes"]],
            "memory_types": [["", "Not known"]] + [[k, MEMORY_EXAMPLES.get(k, k)] for k in choices["memory_kinds"]],
            "hints": choices["hints"]}


def alt(inputs: dict) -> str:
    w = inputs["walk"]
    start = ("warm, time to first token" if w["warm"] else
             f"a cold start: load {fmt_s(w['load_s'])}, then time to first token")
    after = "" if w["warm"] else f"so the first token comes {fmt_s(w['load_s'] + w['ttft_s'])} after the request; "
    return (f"TokenWalk, the simulator. Without JavaScript it shows the article's request: {fmt.comma(w['prompt_tokens'])} "
            f"prompt tokens and {w['output_tokens']} output tokens on {w['model']} and {w['machine']}, {start} "
            f"{fmt_s(w['ttft_s'])} (prefill {fmt_rate(w['prefill_tok_s'])}), {after}"
            f"decode {fmt_rate(w['decode_tok_s'])}, by TokenWalk's timing model, stage by stage with the timeline and "
            "memory to scale.")


ALT = alt


def _field(name: str, label: str, control: str, hint: str = "") -> str:
    hint_html = f'<span class="tw-hint" id="tw-sim-{name}-hint">{hint}</span>' if hint else ""
    return f'<div class="tw-field" data-field="{name}"><label for="tw-sim-{name}">{label}</label>{control}{hint_html}</div>'


def _number(name: str, value, *, step="1", minimum="1", maximum=None, hint="", placeholder="") -> str:
    attrs = f'type="number" id="tw-sim-{name}" name="{name}" step="{step}" min="{minimum}" inputmode="decimal"'
    if maximum is not None:
        attrs += f' max="{maximum}"'
    if value is not None:
        attrs += f' value="{html.escape(str(value))}"'
    if placeholder:
        attrs += f' placeholder="{html.escape(placeholder)}"'
    if hint:
        attrs += f' aria-describedby="tw-sim-{name}-hint"'
    return f"<input {attrs}>"


def _select(name: str, options: list[tuple[str, str]], selected: str, hint: bool = False) -> str:
    opts = "".join(f'<option value="{html.escape(v)}"{" selected" if v == selected else ""}>{html.escape(fmt.typeset(t))}</option>'
                   for v, t in options)
    described = f' aria-describedby="tw-sim-{name}-hint"' if hint else ""
    return f'<select id="tw-sim-{name}" name="{name}"{described}>{opts}</select>'


# The reader's own llama-bench runs time the chosen machine (tokenwalk_app.entry._calibrated):
# pasted or read from a file here, never sent anywhere.
RUNS_FIELD = (
    '<details class="tw-runs" data-field="runs"><summary>Time it on your own llama-bench runs</summary>'
    '<label for="tw-sim-runs">What <code>llama-bench</code> printed: its table, or its <code>-o json</code></label>'
    '<textarea id="tw-sim-runs" name="runs" rows="4" spellcheck="false" autocomplete="off" '
    'aria-describedby="tw-sim-runs-hint" placeholder="| model | size | params | backend | … | test | t/s |">'
    '</textarea>'
    '<label class="tw-runs-file" for="tw-sim-runs-file">or its file</label>'
    '<input type="file" id="tw-sim-runs-file" name="runs_file" accept=".json,.jsonl,.txt,application/json,text/plain">'
    '<span class="tw-hint" id="tw-sim-runs-hint">Run <code>llama-bench -m your-model.gguf</code> on the '
    'machine chosen above (its spec sheet gives the bandwidth and FP16 figures) and paste what it prints: the machine is '
    'then timed on your speeds, with the code that times the article’s laptop on its own. Each test is matched to a '
    'preset or to a GGUF file picked under Model by its count of weights. Nothing leaves your browser.</span>'
    '</details>')


def form_html(inputs: dict) -> str:
    d = inputs["defaults"]
    laptop = next((m for m in inputs["machines"] if m["name"] == d["machine"]), inputs["machines"][0])
    models = [(m["name"], m["title"]) for m in inputs["models"]] + [("gguf", "A GGUF file from your disk…")]
    machines = [(m["name"], m["title"]) for m in inputs["machines"]] + [("custom", "Your own numbers…")]
    model = (_field("model", "Model", _select("model", models, d["model"]))
             + '<div class="tw-field tw-gguf" data-field="gguf" hidden><label for="tw-sim-gguf">GGUF file</label>'
             '<input type="file" id="tw-sim-gguf" name="gguf" accept=".gguf" aria-describedby="tw-sim-gguf-hint">'
             '<span class="tw-hint" id="tw-sim-gguf-hint">Only the file’s header is read, here in your browser; '
             'the file is never uploaded or sent anywhere.</span><output class="tw-gguf-info" for="tw-sim-gguf" '
             'aria-live="polite"></output></div>')
    hints = {k: html.escape(fmt.typeset(v)) for k, v in inputs["hints"].items()}
    custom = ('<div class="tw-custom" data-field="custom" hidden>'
              + _field("bandwidth_gbs", "Memory bandwidth (GB/s)",
                       _number("bandwidth_gbs", laptop["bandwidth_gbs"], step="any", minimum="0.001", hint="1"),
                       hints["bandwidth_gbs"])
              + _field("fp16_tflops", "FP16 compute (TFLOP/s)",
                       _number("fp16_tflops", laptop["fp16_tflops"], step="any", minimum="0.001", hint="1"),
                       hints["fp16_tflops"])
              + _field("memory_gb", "Memory (GB)", _number("memory_gb", laptop["memory_gb"], step="any", minimum="0.001"))
              + _field("architecture_year", "Year of its chip family",
                       _number("architecture_year", None, minimum="1970", maximum="2100", hint="1",
                               placeholder="not known"), hints["architecture_year"])
              + _field("backend", "Backend", _select("backend", inputs["backends"], "", hint=True), hints["backend"])
              + _field("vendor", "Chip maker", _select("vendor", inputs["vendors"], "", hint=True), hints["vendor"])
              + _field("device_class", "Kind of device", _select("device_class", inputs["device_classes"], "", hint=True),
                       hints["device_class"])
              + _field("memory_type", "Memory type", _select("memory_type", inputs["memory_types"], "", hint=True),
                       hints["memory_type"])
              + "</div>")
    request = (_field("prompt_tokens", "Prompt tokens", _number("prompt_tokens", d["prompt_tokens"],
                                                                hint=f"the article’s request: {fmt.comma(d['prompt_tokens'])}"),
                      f"the article’s request: {fmt.comma(d['prompt_tokens'])}")
               + _field("output_tokens", "Output tokens", _number("output_tokens", d["output_tokens"], minimum="0"))
               + _field("num_ctx", "num_ctx (context reserved)",
                        _number("num_ctx", d["num_ctx"], placeholder="prompt + output", hint="1"),
                        "empty: prompt + output"))
    engine = (_field("kv_type", "KV cache type", _select("kv_type", [(k, k) for k in inputs["kv_types"]], d["kv_type"]))
              + _field("chunk_tokens", "Prefill chunk (tokens)", _number("chunk_tokens", d["chunk_tokens"]))
              + _field("users", "Users in the batch", _number("users", d["users"]))
              + '<div class="tw-field tw-check" data-field="warm"><input type="checkbox" id="tw-sim-warm" name="warm"'
              + (" checked" if d["warm"] else "") + '><label for="tw-sim-warm">Warm start (model kept in memory)</label></div>'
              + '<div class="tw-field tw-check" data-field="spec"><input type="checkbox" id="tw-sim-spec" name="spec"'
              + (" checked" if d["spec_alpha"] is not None else "")
              + '><label for="tw-sim-spec">Speculative decoding</label></div>'
              + _field("spec_alpha", "Acceptance rate α", _number("spec_alpha", d["spec_alpha"] or 0.7, step="0.05",
                                                                   minimum="0", maximum="0.99"))
              + _field("spec_gamma", "Draft tokens per round γ", _number("spec_gamma", d["spec_gamma"] or 4)))
    return ('<form class="tw-sim-form" novalidate aria-label="TokenWalk settings">'
            f'<fieldset><legend>Model</legend>{model}</fieldset>'
            f'<fieldset><legend>Machine</legend>{_field("machine", "Machine", _select("machine", machines, d["machine"]))}'
            f'{custom}{RUNS_FIELD}</fieldset>'
            f'<fieldset><legend>Request</legend>{request}</fieldset>'
            f'<fieldset><legend>Engine</legend>{engine}</fieldset>'
            '<div class="tw-sim-actions"><button type="button" class="tw-start" data-action="reset">'
            'Back to the article’s request</button> <button type="button" data-action="share">Copy a link to this '
            'scenario</button></div></form>')


def render(inputs: dict, out: pathlib.Path) -> str:
    attrs = {
        "class": "tw-interactive tw-simulator",
        "data-figure": ID,
        "data-defaults": json.dumps(inputs["defaults"]),
        "data-settings-defaults": json.dumps(SETTINGS_DEFAULTS),
    }
    attr_text = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    return (f"<div {attr_text}>"
            '<p class="tw-nojs">This is the walk of the article’s request, computed when the page was built. '
            'The interactive version, where you choose the model, the machine and the settings, needs JavaScript.</p>'
            f"{form_html(inputs)}"
            '<p class="tw-status" role="status"></p>'
            f'<div class="tw-sim-result">{walk_html(inputs["walk"], inputs["explain"])}</div>'
            f'<p class="tw-live" aria-live="polite">{html.escape(live_summary(inputs["walk"]))}</p>'
            "</div>")
