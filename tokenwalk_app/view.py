"""The simulator's results as HTML: one function for the build's static rendering and for
the page (the worker returns this markup), so both show a walk the same way.

Everything drawn comes from a `Walk.to_dict()` (and `browser.explain`): the three numbers,
the stages with time, bytes and bound, a timeline to scale (each stage's width is its
share of the total seconds) and the memory budget to scale (each part's width is its
share of the machine's memory, or of what is asked when that is more). Text is escaped
(a GGUF file's name is the reader's text); sentences are set with the prose's quotes
(`_text`: tokenwalk.format.typeset), names as they are.

Units: seconds, bytes (GB = 1e9).
"""

from __future__ import annotations

from html import escape

from tokenwalk import format as fmt

STAGE_LABELS = {"load": "Load weights from disk", "template": "Fill the chat template", "tokenize": "Tokenize the prompt",
                "prefill": "Prefill (read the prompt)", "decode": "Decode (write the answer)", "stop": "Stop"}
MEMORY_PARTS = (("system_bytes", "system and apps", "sys"), ("weights_bytes", "weights", "weights"),
                ("kv_cache_bytes", "KV cache (reserved)", "kv"), ("free_bytes", "free", "free"))


def _text(sentence: str) -> str:
    """A sentence of the view (a note, an assumption, a warning) escaped, with typographic quotes."""
    return escape(fmt.typeset(sentence))


fmt_s = fmt.seconds
fmt_bytes = fmt.bytes_si
fmt_rate = fmt.rate


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.4f}%" if whole > 0 else "0%"


def _likely(walk: dict, key: str, fmt) -> str:
    """"; likely A–B" from the walk's ranges (the fit's cross-validation band), or ""."""
    band = (walk.get("ranges") or {}).get(key)
    return f"; likely {fmt(band[0])}–{fmt(band[1])}" if band else ""


def _w(key: str, text: str) -> str:
    """A number of the walk in a span naming its Walk.to_dict() key (escaped), so a page or a
    test can find where each number is printed."""
    return f'<span data-walk-key="{escape(key)}">{escape(text)}</span>'


# how the note names a class of device whose own small-model runs set the band
_CLASS_RUNS = {"discrete": "on graphics cards with their own memory",
               "integrated": "on GPUs and CPUs that share system memory",
               "datacentre": "on data-centre accelerators"}


def _band_note(basis: str | None = None, range_class: str | None = None) -> str:
    """The one line under the numbers that says what "likely" means, with the coverage the
    fit recorded (`timing_model.unseen_machine_summary`), or for a model smaller than any
    fitted (`basis` "small models") the small-model check the band comes from: its runs on
    the machine's class of device (`range_class`) where those alone set it."""
    from tokenwalk.timing.model import unseen_machine_summary

    s = unseen_machine_summary()
    if basis == "small models":
        if range_class:
            d, p = (s[f"{phase}_small_models_by_class"][range_class] for phase in ("decode", "prefill"))
            where = ", " + _CLASS_RUNS.get(range_class, f"on {range_class} machines")
        else:
            d, p, where = s["decode_small_models"], s["prefill_small_models"], ""
        return ('<p class="tw-sub tw-sim-band">"Likely": this model is smaller than any the timing model was '
                f'fitted on, so the range is the 10th to 90th percentile of its misses on {d["runs"]} decode and '
                f'{p["runs"]} prefill runs of 0.1B-8B models it never saw{_text(where)} '
                '(<code>tokenwalk validate</code>).</p>')
    return ('<p class="tw-sub tw-sim-band">"Likely": a range meant to hold 8 runs in 10; on chip families the '
            f'timing model was not fitted on it held {escape(fmt.pct(s["decode_coverage"]))} of decode and '
            f'{escape(fmt.pct(s["prefill_coverage"]))} of prefill runs (<code>tokenwalk validate</code>).</p>')


def numbers_html(walk: dict) -> str:
    load = escape("— (warm: already in memory)") if walk["warm"] else _w("load_s", fmt_s(walk["load_s"]))
    cells = [
        ("load", "Load", load, escape("from disk, before the first token" if not walk["warm"] else "keep-alive")),
        # counted from a model in memory: a cold start's load comes before it, not inside it,
        # so a cold start also says when its first token comes from the request, load included
        ("ttft", "Time to first token", _w("ttft_s", fmt_s(walk["ttft_s"])),
         ("" if walk["warm"] else f"after the load: {escape(_from_disk(walk))} from the request; ")
         + f"prefill {_w('prefill_tok_s', fmt_rate(walk['prefill_tok_s']))}{escape(_likely(walk, 'ttft_s', fmt_s))}"),
        ("decode", "Decode", _w("decode_tok_s", fmt_rate(walk["decode_tok_s"])) if walk["output_tokens"] else "—",
         f"{walk['output_tokens']:,} tokens in {_w('decode_s', fmt_s(walk['decode_s']))}"
         f"{escape(_likely(walk, 'decode_tok_s', fmt_rate))}"),
    ]
    note = _band_note(walk.get("range_basis"), walk.get("range_class")) if walk.get("ranges") else ""
    return '<dl class="tw-sim-numbers">' + "".join(
        f'<div data-number="{key}"><dt>{label}</dt><dd><span class="tw-big">{value}</span>'
        f'<span class="tw-sub">{sub}</span></dd></div>' for key, label, value, sub in cells) + "</dl>" + note


def _stage_detail(stage: dict) -> str:
    """What moves in a stage, as markup (text escaped; the numbers the article quotes in data-walk-key spans)."""
    name = stage["name"]
    if name == "load":
        # the rate's reason in full is in the explanation below the table ("Assumed")
        source = "measured cold load" if stage["rate_from"] == "measured" else "the disk's spec rate"
        return escape(f"{fmt_bytes(stage['bytes'])} at {fmt.significant(stage['effective_gbs'], 2)} GB/s ({source})")
    if name == "tokenize":
        return escape(f"{stage['tokens']:,} tokens")
    if name == "prefill":
        experts = (f" ({fmt.significant(stage['expert_rows'], 3)} rows an expert, shape: {stage['shape_pair']})"
                   if "expert_rows" in stage else "")
        return (escape(f"{stage['chunk_count']:,} chunks of {stage['chunk_tokens']:,} tokens{experts}; "
                       f"{fmt_bytes(stage['bytes'])} moved; KV cache written ")
                + _w("kv_written_bytes", fmt_bytes(stage["kv_written_bytes"])))
    if name == "decode":
        per = stage["tokens_per_step"]
        steps = f"{stage['steps']:,} steps" + (f" of {per:.2f} tokens (speculative)" if per != 1 else "")
        return (f"{escape(steps)}; {_w('first_step_s', fmt_s(stage['first_step_s']))} → "
                f"{escape(fmt.seconds_after(stage['first_step_s'], stage['last_step_s']))} a step; "
                f"{_w('first_step_bytes', fmt_bytes(stage['first_step_bytes']))} read a step at first")
    if name == "stop":
        return _text(stage.get("reason", ""))
    return ""


def _stage_seconds(stage: dict) -> str:
    text = fmt_s(stage["seconds"])
    return _w("prefill_s", text) if stage["name"] == "prefill" else escape(text)


def stages_html(walk: dict) -> str:
    rows = "".join(
        f'<tr data-stage="{escape(s["name"])}"><th scope="row"><span class="tw-swatch tw-st-{escape(s["name"])}">'
        f'</span>{escape(STAGE_LABELS.get(s["name"], s["name"]))}</th><td class="tw-num">{_stage_seconds(s)}</td>'
        f'<td>{escape(s["bound"])}</td><td>{_stage_detail(s)}</td></tr>' for s in walk["stages"])
    return ('<table class="tw-sim-stages"><caption>The request, stage by stage</caption><thead><tr>'
            '<th scope="col">stage</th><th scope="col">time</th><th scope="col">bound</th><th scope="col">what moves</th>'
            f'</tr></thead><tbody>{rows}</tbody><tfoot><tr><th scope="row">total</th>'
            f'<td class="tw-num">{escape(fmt_s(walk["total_s"]))}</td><td></td><td></td></tr></tfoot></table>')


def timeline_html(walk: dict) -> str:
    total = walk["total_s"]
    parts = "".join(
        f'<span class="tw-seg tw-st-{escape(s["name"])}" style="width:{_pct(s["seconds"], total)}" '
        f'title="{escape(STAGE_LABELS.get(s["name"], s["name"]))}: {escape(fmt_s(s["seconds"]))}"></span>'
        for s in walk["stages"] if s["seconds"] > 0)
    return (f'<div class="tw-sim-bar-block"><p class="tw-bar-title">Timeline to scale: {escape(fmt_s(total))} '
            f'from the request to the last token</p><div class="tw-bar" role="img" aria-label="'
            + escape("; ".join(f"{s['name']} {fmt_s(s['seconds'])}" for s in walk["stages"] if s["seconds"] > 0))
            + f'">{parts}</div></div>')


def memory_html(walk: dict) -> str:
    m = walk["memory"]
    asked = m["system_bytes"] + m["weights_bytes"] + m["kv_cache_bytes"]
    whole = max(m["total_bytes"], asked)
    segs, legend = [], []
    for key, label, css in MEMORY_PARTS:
        value = max(m[key], 0.0)
        if value > 0:
            segs.append(f'<span class="tw-seg tw-mem-{css}" style="width:{_pct(value, whole)}" '
                        f'title="{escape(label)}: {escape(fmt_bytes(value))}"></span>')
        legend.append(f'<li><span class="tw-swatch tw-mem-{css}"></span>{escape(label)} '
                      f'<b>{_w("memory_" + key, fmt_bytes(value))}</b></li>')
    verdict = "fits" if m["fits"] else f"does not fit: {fmt_bytes(asked - m['total_bytes'])} short"
    return (f'<div class="tw-sim-bar-block"><p class="tw-bar-title">Memory to scale: {escape(fmt_bytes(m["total_bytes"]))} '
            f'on the machine, {escape(verdict)}</p><div class="tw-bar" role="img" aria-label="'
            + escape("; ".join(f"{label} {fmt_bytes(max(m[key], 0.0))}" for key, label, _ in MEMORY_PARTS))
            + f'">{"".join(segs)}</div><ul class="tw-legend">{"".join(legend)}</ul>'
            f'<p class="tw-sub">KV cache {escape(fmt_bytes(walk["kv_bytes_per_token"]))} a token '
            f'({escape(walk["kv_type"])}), {walk["num_ctx"]:,} tokens reserved'
            + (f' for each of {walk["users"]} users' if walk["users"] > 1 else "") + "</p></div>")


def provenance_html(explanation: dict) -> str:
    parts = []
    for key, title in (("measured", "Measured"), ("computed", "Computed"), ("assumed", "Assumed")):
        items = explanation.get(key) or (["nothing for this model and machine"] if key == "measured" else [])
        parts.append(f'<div data-kind="{key}"><h4>{title}</h4><ul>'
                     + "".join(f"<li>{_text(x)}</li>" for x in items) + "</ul></div>")
    return '<div class="tw-sim-provenance">' + "".join(parts) + "</div>"


def _from_disk(walk: dict) -> str:
    """A cold start's first token counted from the request: the load, then the time to first token."""
    return fmt_s(walk["load_s"] + walk["ttft_s"])


def live_summary(walk: dict) -> str:
    """One sentence for screen readers after each update: the three numbers."""
    load = ("warm start" if walk["warm"]
            else f"cold start, first token {_from_disk(walk)} after the request; load {fmt_s(walk['load_s'])}")
    decode = f"decode {fmt_rate(walk['decode_tok_s'])}" if walk["output_tokens"] else "no output tokens"
    fits = "" if walk["memory"]["fits"] else "; does not fit in memory"
    return (f"{load}, time to first token {fmt_s(walk['ttft_s'])} (prefill {fmt_rate(walk['prefill_tok_s'])}), "
            f"{decode}{fits}.")


def walk_html(walk: dict, explanation: dict | None = None, runs: dict | None = None) -> str:
    """The whole result panel of one walk (with the table of the reader's runs, `runs_html`,
    when the machine is calibrated on them)."""
    head = (f'<p class="tw-sim-head"><b>{escape(walk["model"])}</b> on <b>{escape(walk["machine"])}</b>: '
            + _w("prompt_tokens", f'{walk["prompt_tokens"]:,}')
            + f' prompt tokens, {walk["output_tokens"]:,} output tokens, '
            f'num_ctx {walk["num_ctx"]:,}, KV {escape(walk["kv_type"])}, chunks of {walk["chunk_tokens"]:,}, '
            + ("warm" if walk["warm"] else f"cold start: the first token {escape(_from_disk(walk))} "
               "after the request, the load included")
            + (f', {walk["users"]} users' if walk["users"] > 1 else "")
            + (f', speculative α {walk["spec_alpha"]:g} γ {walk["spec_gamma"]}' if walk["spec_alpha"] is not None else "")
            + "</p>")
    warnings = "".join(f'<p class="tw-warning">{_text(w)}</p>' for w in walk["warnings"])
    # values of the chosen model or machine written from memory, named so the reader can check them
    notes = "".join(f'<p class="tw-note">{_text(n)}</p>' for n in walk.get("notes", ()))
    return (head + numbers_html(walk) + warnings + notes + (runs_html(runs) if runs else "") + timeline_html(walk)
            + stages_html(walk) + memory_html(walk) + (provenance_html(explanation) if explanation else ""))


def _error(predicted: float, measured: float) -> str:
    """How far a prediction is from a measurement, signed: "+12 %", "−40 %"."""
    percent = round((predicted / measured - 1.0) * 100)
    return ("+" if percent >= 0 else "−") + f"{abs(percent)} %"


def runs_html(runs: dict) -> str:
    """The reader's own llama-bench runs (`entry._calibrated`): each test's measurement beside
    the published fit's prediction and the prediction of the machine calibrated on them, and
    the three coefficients solved. Text from the reader's paste (llama-bench's model_type) is escaped."""
    rows, unmatched = [], 0
    for r in runs["rows"]:
        test = escape(r["test"]) + ('<span class="tw-sub">solved on</span>' if r["used"] else "")
        if r["model"]:
            model = escape(r["title"])
            fit, own = (f'{escape(fmt.comma(r[key], 0) if r[key] >= 100 else fmt.significant(r[key], 3))}'
                        f'<span class="tw-err">{_error(r[key], r["measured_tok_s"])}</span>'
                        for key in ("fit_tok_s", "calibrated_tok_s"))
        else:
            unmatched += 1
            model = escape(f"not here: {r['params']:,} weights, {fmt_bytes(r['size_bytes'])}")
            fit = own = "—"
        measured = r["measured_tok_s"]
        rows.append(f'<tr data-run="{r["row"]}"><td>{test}</td><td>{model}</td><td class="tw-num">'
                    f'{escape(fmt.comma(measured, 0) if measured >= 100 else fmt.significant(measured, 3))}</td>'
                    f'<td class="tw-num">{fit}</td><td class="tw-num">{own}</td></tr>')
    c = runs["coefficients"]
    solved = (f'On your runs, {escape(runs["machine"])} reads at {escape(fmt.pct(c["bandwidth_efficiency"], 1))} of '
              f'{escape(fmt.bandwidth(runs["bandwidth_gbs"]))}, pays {escape(fmt.significant(c["launch_cost_s"] * 1e6, 2))} µs '
              'a kernel launch')
    if runs.get("fp16_tflops"):
        solved += (f' and does its arithmetic at {escape(fmt.pct(c["compute_efficiency"], 1))} of '
                   f'{escape(runs["compute_figure"])}, {escape(fmt.significant(runs["fp16_tflops"], 3))} TFLOP/s')
    solved += "; the walk above uses these."
    if unmatched:
        solved += " A test of a model that is not here counts once you pick its GGUF file under Model."
    note = f'<p class="tw-sub">{_text(runs["note"])}.</p>' if runs.get("note") else ""
    if runs.get("walk_model_below_runs"):
        note += ('<p class="tw-note" data-runs-note="below">This model reads less per kernel launch than every model '
                 'your decode runs were solved on, so its speed leans on the cost per launch, which those runs fix least '
                 'well: run llama-bench on a model this small too.</p>')
    return ('<div class="tw-sim-runs"><table><caption>Your runs in tok/s, measured and predicted</caption><thead><tr>'
            '<th scope="col">test</th><th scope="col">model</th><th scope="col" class="tw-num">measured</th>'
            '<th scope="col" class="tw-num">published fit</th><th scope="col" class="tw-num">on your runs</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table><p class="tw-sub">{solved}</p>{note}</div>')
