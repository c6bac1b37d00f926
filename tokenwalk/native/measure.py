"""Measuring a request end to end with the engine: load, prefill, decode, and the share of
the device's read bandwidth a decode step uses.

The request is given by the caller (``Request``, or ``read_request`` on a request.json that
names its text files); nothing here knows where an article keeps it. Times in seconds,
rates in tokens per second, bandwidth in GB/s (1e9 bytes per second), sizes in bytes.
"""

from __future__ import annotations

import datetime
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from tokenwalk.data_refs import read_json_file
from tokenwalk.errors import TokenwalkError
from tokenwalk.native.cl.ops import read_bandwidth_gbs
from tokenwalk.native.generate import load, picker
from tokenwalk.native.kv_cache import kv_bytes_read
from tokenwalk.text.chat_template import render_chat
from tokenwalk.text.tokenizer import Tokenizer

DEFAULT_OUTPUT_TOKENS = 300


@dataclass(frozen=True)
class Request:
    """A request as a chat: a system prompt, a history (paragraphs separated by blank lines,
    cut from its start to fit a context) and a question; ``output_tokens`` to decode."""

    system: str
    history: str
    question: str
    output_tokens: int = DEFAULT_OUTPUT_TOKENS


def read_request(path) -> Request:
    """The request described by the JSON file at ``path``: ``system_prompt_file``,
    ``history_file`` and ``question_file`` (paths relative to the JSON file) and, optionally,
    ``output_tokens: {"value": N}``."""
    path = Path(path)
    spec = read_json_file(path, missing="request file not found; pass --request with a request.json")
    try:
        texts = [(path.parent / spec[key]).read_text(encoding="utf-8").strip()
                 for key in ("system_prompt_file", "history_file", "question_file")]
        output_tokens = int(spec.get("output_tokens", {}).get("value", DEFAULT_OUTPUT_TOKENS))
    except (OSError, KeyError, ValueError, TypeError, AttributeError) as error:
        raise TokenwalkError(f"{path}: the request's files cannot be read ({error})") from None
    return Request(*texts, output_tokens=output_tokens)


def measure_bandwidth_gbs(engine, size_bytes: int = 256 * 1024 * 1024, repeats: int = 5) -> float:
    """Read bandwidth of the engine's device in GB/s (best of ``repeats`` passes over a buffer
    of ``size_bytes``, larger than any cache)."""
    return read_bandwidth_gbs(engine.dev, engine.programs, size_bytes, repeats)


def machine_memory_bytes() -> int | None:
    """Physical memory of this machine in bytes (page size x physical pages, as the OS
    reports them); None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def request_prompt(tok: Tokenizer, metadata: dict, request: Request, ctx_tokens: int,
                   output_tokens: int) -> tuple[str, dict]:
    """``request`` as a prompt in the model's chat template (system prompt; history and
    question as the user's turn), the history cut by whole paragraphs from its start until
    prompt + output fit ``ctx_tokens``."""
    paragraphs = request.history.split("\n\n")
    template = metadata.get("tokenizer.chat_template")
    dropped = 0
    while True:
        body = "\n\n".join(paragraphs[dropped:])
        text = render_chat(template, [{"role": "system", "content": request.system},
                                      {"role": "user", "content": f"{body}\n\n{request.question}"}])
        n = len(tok.encode(text, add_special=True))
        if n + output_tokens <= ctx_tokens or dropped >= len(paragraphs):
            break
        # drop roughly as many paragraphs as the excess needs (at least one)
        excess = n + output_tokens - ctx_tokens
        per_par = max(1, n // max(1, len(paragraphs) - dropped))
        dropped += max(1, excess // per_par // 2)
    info = {"history_paragraphs": len(paragraphs), "history_paragraphs_dropped": min(dropped, len(paragraphs)),
            "output_tokens_requested": output_tokens}
    return text, info


def measure(model, request: Request, device=None, ctx_tokens=None, output_tokens=None, chunk_tokens=None,
            what: str = "A request run by tokenwalk's own OpenCL engine.") -> dict:
    """Run ``request`` once on the GGUF at ``model`` and return a measurements file's content
    (``what`` describes the run in the file)."""
    t0 = time.perf_counter()
    engine, tok = load(model, device=device, ctx_tokens=ctx_tokens, chunk_tokens=chunk_tokens)
    load_s = time.perf_counter() - t0
    if output_tokens is None:
        output_tokens = request.output_tokens
    text, info = request_prompt(tok, engine.model.metadata, request, engine.ctx_tokens, output_tokens)
    ids = tok.encode(text, add_special=True)  # BOS where the file asks (Gemma)
    bandwidth = measure_bandwidth_gbs(engine)
    # ignore_eos: measure a full answer's length, as llama-bench does
    out, stats = engine.generate(ids, max_tokens=output_tokens, pick=picker(0.0), is_stop=None)
    bytes_per_token = engine.bytes_read_per_token
    share = stats.decode_tok_s * bytes_per_token / (bandwidth * 1e9) if bandwidth else 0.0
    # At a long context the KV cache is read too: fp16 keys and values of every layer (a
    # sliding-window layer's window only), at the mean position of the decode steps.
    kv_read = kv_bytes_read(engine.config, len(ids) + stats.output_tokens / 2)
    share_kv = stats.decode_tok_s * (bytes_per_token + kv_read) / (bandwidth * 1e9) if bandwidth else 0.0
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    src = f"tokenwalk measure, {now}"

    def v(value, unit, what):
        return {"value": value, "unit": unit, "what": what, "source": src}

    memory = machine_memory_bytes()
    extra = {"memory_bytes": v(memory, "bytes", "physical memory of the machine (page size x physical pages)")} \
        if memory else {}
    return {
        "what": what,
        "where": engine.dev.name(", OpenCL device"),
        "when": now,
        "how": ("tokenwalk measure: load the GGUF (weights repacked, still quantized, onto the device), "
                "tokenize the request with the model's own tokenizer and chat template, prefill in chunks of "
                f"{engine.chunk_tokens} tokens, decode greedily {output_tokens} tokens (end of turn ignored); "
                "bandwidth from an OpenCL kernel reading a 256 MiB buffer."),
        "model": Path(engine.model.path).name,
        "values": {
            "device": v(engine.device_name(), "", "the OpenCL device that ran the engine"),
            "load_s": v(round(load_s, 3), "s", "model file to device, kernels compiled"),
            "prompt_tokens": v(len(ids), "tokens",
                               "tokens of the request (system prompt, history, question, template)"),
            "output_tokens": v(stats.output_tokens, "tokens", "tokens decoded"),
            "ctx_tokens": v(engine.ctx_tokens, "tokens", "context the KV cache was sized for"),
            "prefill_chunk_tokens": v(engine.chunk_tokens, "tokens", "prompt tokens per prefill step"),
            "prefill_tok_s": v(round(stats.prefill_tok_s, 2), "tok/s", "prompt tokens per second of prefill"),
            "ttft_s": v(round(stats.ttft_s, 3), "s", "time to first token: prefill and the first sampling"),
            "decode_tok_s": v(round(stats.decode_tok_s, 2), "tok/s", "decode steps per second after the first token"),
            "decode_launches_per_step": v(engine.decode_launches_per_step, "launches",
                                          "kernels a decode step launches (the engine's graph, counted at load)"),
            "bytes_read_per_token": v(int(bytes_per_token), "bytes",
                                      "weights a decode step reads on the device (all matrices, norms, tied head)"),
            "measured_bandwidth_gbs": v(round(bandwidth, 2), "GB/s",
                                        "read bandwidth of the device's memory (OpenCL kernel)"),
            "decode_bandwidth_share": v(round(share, 4), "",
                                        "decode_tok_s x bytes_read_per_token / measured bandwidth"),
            "kv_bytes_read_per_token": v(int(kv_read), "bytes",
                                         "fp16 keys and values a decode step reads at the mean decode position "
                                         "(sliding-window layers: their window)"),
            "decode_bandwidth_share_with_kv": v(round(share_kv, 4), "",
                                                "decode_tok_s x (bytes_read_per_token + kv_bytes_read_per_token) "
                                                "/ measured bandwidth"),
            "history_paragraphs_dropped": v(info["history_paragraphs_dropped"], "paragraphs",
                                            "history paragraphs cut from the start to fit the context"),
            **extra,
        },
    }


# Values a run measures (the rest follow from the model and the request, the same in every run),
# and the shares computed from them, recomputed from the medians so that they stay their quotient.
TIMED_VALUES = ("load_s", "prefill_tok_s", "ttft_s", "decode_tok_s", "measured_bandwidth_gbs")
_ROUNDING = {"load_s": 3, "prefill_tok_s": 2, "ttft_s": 3, "decode_tok_s": 2, "measured_bandwidth_gbs": 2}


def load_average() -> float | None:
    """The one-minute load average of this machine (processes running or waiting for a core),
    None where the OS does not say."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def machine_cpu() -> str:
    """The CPU as the OS names it ('model name' in /proc/cpuinfo) and the logical CPUs it
    gives this process; 'unknown CPU' where it does not say."""
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{name or 'unknown CPU'}, {count} logical CPUs"


def median_of_runs(runs: list[dict], command: str, loads: tuple = (None, None), note: str = "") -> dict:
    """One measurements file from ``runs`` (``measure``'s results for one model and request):
    each timed value (TIMED_VALUES) the median of the runs', the bandwidth shares recomputed
    from those medians, everything else as the runs agree on it. On a machine shared with other
    work a median sets aside the runs another process slowed; every run's timed values are kept
    under "runs". ``command`` is the command line that measured them, ``loads`` the one-minute
    load average before and after them, ``note`` what else the measurer says of the machine's
    state. ValueError when the runs measured different things."""
    if not runs:
        raise ValueError("no runs to combine")
    first = runs[0]
    for run in runs[1:]:
        for key, entry in run["values"].items():
            if key not in TIMED_VALUES and not key.startswith("decode_bandwidth_share") \
                    and entry["value"] != first["values"][key]["value"]:
                raise ValueError(f"the runs differ in {key}: {first['values'][key]['value']} and {entry['value']}")
    out = {**first, "values": {k: dict(e) for k, e in first["values"].items()}}
    values = out["values"]
    for key in TIMED_VALUES:
        median = statistics.median(run["values"][key]["value"] for run in runs)
        values[key]["value"] = round(median, _ROUNDING[key])
        values[key]["what"] += f" (median of {len(runs)} runs)"
    decode, bandwidth = values["decode_tok_s"]["value"], values["measured_bandwidth_gbs"]["value"]
    weights, kv = values["bytes_read_per_token"]["value"], values["kv_bytes_read_per_token"]["value"]
    values["decode_bandwidth_share"]["value"] = round(decode * weights / (bandwidth * 1e9), 4)
    values["decode_bandwidth_share_with_kv"]["value"] = round(decode * (weights + kv) / (bandwidth * 1e9), 4)
    out["how"] = (f"{first['how']} Run {len(runs)} times in a row, each loading the model again; each timed "
                  "value is the median of the runs (every run's under \"runs\").")
    before, after = loads
    state = [] if before is None else [f"one-minute load average {before:g} before the runs, {after:g} after them"]
    out["conditions"] = "; ".join(state + ([note] if note else [])) or "not recorded"
    out["cpu"] = machine_cpu()
    out["command"] = command
    out["runs"] = [{key: run["values"][key]["value"] for key in TIMED_VALUES} for run in runs]
    return out
