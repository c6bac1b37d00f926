"""What the CLI does with the engine: sampling, streaming text, the bandwidth probe, and the
article's request measured end to end. Times in seconds, rates in tokens per second,
bandwidth in GB/s (1e9 bytes per second)."""

from __future__ import annotations

import codecs
import datetime
import json
import math
import os
import random
import time
from pathlib import Path

import numpy as np

from tokenwalk.text.chat_template import render_chat
from tokenwalk.errors import TokenwalkError
from tokenwalk.text.tokenizer import Tokenizer, tokenizer_from_metadata

DEFAULT_MODEL = Path(".cache") / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
MEASUREMENTS_FILE = Path(__file__).resolve().parent.parent / "data" / "measurements" / "engine.json"


def model_path(path) -> Path:
    p = Path(path) if path else DEFAULT_MODEL
    if not p.exists():
        hint = "run `make setup` to fetch it, or pass --model PATH" if not path else "pass --model with a .gguf path"
        raise TokenwalkError(f"{p}: model file not found; {hint}")
    return p


def load(path, device=None, ctx_tokens=None, chunk_tokens=None):
    """(engine, tokenizer) for the GGUF at ``path``; the tokenizer reuses the engine's header."""
    from tokenwalk.native.engine import DEFAULT_CHUNK_TOKENS, Engine

    engine = Engine(model_path(path), device=device, ctx_tokens=ctx_tokens,
                    chunk_tokens=chunk_tokens or DEFAULT_CHUNK_TOKENS)
    tok = tokenizer_from_metadata(engine.model.metadata, source=str(path))
    return engine, tok


def picker(temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int | None = None):
    """pick(logits) -> token id, through the core's sampler (tokenwalk.physics.sampling).

    Greedy at temperature 0. Otherwise the sampler gets the 1,000 largest logits only when
    no top-k is set: their softmax share left out is below 1e-6 for this kind of model and
    the draw stays a few milliseconds instead of tens.
    """
    from tokenwalk.physics.sampling import sample

    rng = random.Random(seed)
    if temperature <= 0:
        return lambda logits: int(np.argmax(logits))
    keep = top_k if top_k else 1000

    def pick(logits: np.ndarray) -> int:
        idx = np.argpartition(logits, -keep)[-keep:] if keep < len(logits) else np.arange(len(logits))
        idx = idx[np.argsort(-logits[idx], kind="stable")]
        j = sample(logits[idx].astype(float).tolist(), temperature=temperature, top_p=top_p, top_k=0, rng=rng)
        return int(idx[j])

    return pick


class TextStream:
    """Token ids to text as it arrives: holds back bytes of an unfinished UTF-8 character."""

    def __init__(self, tok: Tokenizer, skip_special: bool = True):
        self.tok = tok
        self.skip_special = skip_special
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __call__(self, token: int) -> str:
        if self.skip_special and self.tok.token_types[token] == 3:
            return ""
        return self.decoder.decode(self.tok.token_bytes(token))

    def flush(self) -> str:
        return self.decoder.decode(b"", final=True)


def chat_prompt(tok: Tokenizer, metadata: dict, prompt: str, system: str | None = None) -> str:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    return render_chat(metadata.get("tokenizer.chat_template"), messages, add_generation_prompt=True)


def measure_bandwidth_gbs(engine, size_bytes: int = 256 * 1024 * 1024, repeats: int = 5) -> float:
    """Read bandwidth of the device's global memory: a kernel sums a buffer larger than any
    cache, each work-item a contiguous chunk; best of ``repeats`` passes."""
    cl = engine.cl
    prg = engine._program("F32")
    items = max(2, engine.device.max_compute_units * 8)
    per_item = size_bytes // 32 // items // 4 * 4  # float8 elements, a multiple of 4
    n_bytes = per_item * items * 32
    buf = cl.Buffer(engine.context, cl.mem_flags.READ_ONLY, size=n_bytes)
    cl.enqueue_fill_buffer(engine.queue, buf, np.float32(1.0), 0, n_bytes)
    sink = cl.Buffer(engine.context, cl.mem_flags.READ_WRITE, size=items * 4)
    kernel = cl.Kernel(prg, "read_bandwidth")
    kernel.set_args(buf, sink, np.int32(per_item))
    engine.queue.finish()
    best = math.inf
    for _ in range(repeats + 1):  # the first pass warms up (page faults, compilation)
        t0 = time.perf_counter()
        cl.enqueue_nd_range_kernel(engine.queue, kernel, (items,), (1,))
        engine.queue.finish()
        best = min(best, time.perf_counter() - t0) if _ else math.inf
    buf.release()
    return n_bytes / best / 1e9


def machine_memory_bytes() -> int | None:
    """Physical memory of this machine in bytes (page size x physical pages, as the OS
    reports them); None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def request_messages(tok: Tokenizer, metadata: dict, ctx_tokens: int, output_tokens: int,
                     request_dir: Path) -> tuple[str, dict]:
    """A request (request.json in ``request_dir``) as a prompt (system prompt, patient history, question), the
    history cut by whole paragraphs from its start until prompt + output fit ``ctx_tokens``."""
    try:
        spec = json.loads((request_dir / "request.json").read_text())
        system = (request_dir / spec["system_prompt_file"]).read_text().strip()
        history = (request_dir / spec["history_file"]).read_text().strip()
        question = (request_dir / spec["question_file"]).read_text().strip()
    except (OSError, KeyError, ValueError) as error:
        raise TokenwalkError(f"{request_dir}: the request's files cannot be read ({error})") from None
    paragraphs = history.split("\n\n")
    template = metadata.get("tokenizer.chat_template")
    dropped = 0
    while True:
        body = "\n\n".join(paragraphs[dropped:])
        text = render_chat(template, [{"role": "system", "content": system},
                                      {"role": "user", "content": f"{body}\n\n{question}"}])
        n = len(tok.encode(text))
        if n + output_tokens <= ctx_tokens or dropped >= len(paragraphs):
            break
        # drop roughly as many paragraphs as the excess needs (at least one)
        excess = n + output_tokens - ctx_tokens
        per_par = max(1, n // max(1, len(paragraphs) - dropped))
        dropped += max(1, excess // per_par // 2)
    info = {"history_paragraphs": len(paragraphs), "history_paragraphs_dropped": min(dropped, len(paragraphs)),
            "output_tokens_requested": output_tokens}
    return text, info


def measure(request_dir: Path, model=None, device=None, ctx_tokens=None, output_tokens=None,
            chunk_tokens=None) -> dict:
    """Run a request once and return what the measurements file holds. ``request_dir`` holds
    request.json and the files it names (the caller passes it: the CLI gives the article's)."""
    request_dir = Path(request_dir)
    t0 = time.perf_counter()
    engine, tok = load(model, device=device, ctx_tokens=ctx_tokens, chunk_tokens=chunk_tokens)
    load_s = time.perf_counter() - t0
    spec = json.loads((request_dir / "request.json").read_text()) if (request_dir / "request.json").exists() else {}
    if output_tokens is None:
        output_tokens = int(spec.get("output_tokens", {}).get("value", 300))
    text, info = request_messages(tok, engine.model.metadata, engine.ctx_tokens, output_tokens, request_dir)
    ids = tok.encode(text)
    bandwidth = measure_bandwidth_gbs(engine)
    # ignore_eos: measure a full answer's length, as llama-bench does
    out, stats = engine.generate(ids, max_tokens=output_tokens, pick=picker(0.0), is_stop=None)
    bytes_per_token = engine.bytes_read_per_token
    share = stats.decode_tok_s * bytes_per_token / (bandwidth * 1e9) if bandwidth else 0.0
    # At a long context the KV cache is read too: fp16 keys and values of every layer, at the
    # mean position of the decode steps.
    cfg = engine.config
    kv_bytes_per_position = 2 * cfg.layers * cfg.head_count_kv * cfg.head_dim * 2
    kv_read = kv_bytes_per_position * (len(ids) + stats.output_tokens / 2)
    share_kv = stats.decode_tok_s * (bytes_per_token + kv_read) / (bandwidth * 1e9) if bandwidth else 0.0
    d = engine.device
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    src = f"tokenwalk measure, {now}"

    def v(value, unit, what):
        return {"value": value, "unit": unit, "what": what, "source": src}

    memory = machine_memory_bytes()
    extra = {"memory_bytes": v(memory, "bytes", "physical memory of the machine (page size x physical pages)")} \
        if memory else {}
    return {
        "what": "The article's request run by tokenwalk's own OpenCL engine on the machine that built this page.",
        "where": f"{d.name.strip()} ({d.platform.name.strip()}, {d.max_compute_units} compute units, "
                 f"OpenCL device)",
        "when": now,
        "how": ("tokenwalk measure: load the GGUF (weights repacked, still quantized, onto the device), "
                "tokenize the request with the model's own tokenizer and chat template, prefill in chunks of "
                f"{engine.chunk_tokens} tokens, decode greedily {output_tokens} tokens (end of turn ignored); "
                "bandwidth from an OpenCL kernel reading a 256 MiB buffer."),
        "model": Path(engine.model.path).name,
        "values": {
            "device": v(engine.device_name(), "", "the OpenCL device that ran the engine"),
            "load_s": v(round(load_s, 3), "s", "model file to device, kernels compiled"),
            "prompt_tokens": v(len(ids), "tokens", "tokens of the request (system prompt, history, question, template)"),
            "output_tokens": v(stats.output_tokens, "tokens", "tokens decoded"),
            "ctx_tokens": v(engine.ctx_tokens, "tokens", "context the KV cache was sized for"),
            "prefill_chunk_tokens": v(engine.chunk_tokens, "tokens", "prompt tokens per prefill step"),
            "prefill_tok_s": v(round(stats.prefill_tok_s, 2), "tok/s", "prompt tokens per second of prefill"),
            "ttft_s": v(round(stats.ttft_s, 3), "s", "time to first token: prefill and the first sampling"),
            "decode_tok_s": v(round(stats.decode_tok_s, 2), "tok/s", "decode steps per second after the first token"),
            "bytes_read_per_token": v(int(bytes_per_token), "bytes",
                                      "weights a decode step reads on the device (all matrices, norms, tied head)"),
            "measured_bandwidth_gbs": v(round(bandwidth, 2), "GB/s", "read bandwidth of the device's memory (OpenCL kernel)"),
            "decode_bandwidth_share": v(round(share, 4), "", "decode_tok_s x bytes_read_per_token / measured bandwidth"),
            "kv_bytes_read_per_token": v(int(kv_read), "bytes",
                                         "fp16 keys and values a decode step reads at the mean decode position"),
            "decode_bandwidth_share_with_kv": v(round(share_kv, 4), "",
                                                "decode_tok_s x (bytes_read_per_token + kv_bytes_read_per_token) "
                                                "/ measured bandwidth"),
            "history_paragraphs_dropped": v(info["history_paragraphs_dropped"], "paragraphs",
                                            "history paragraphs cut from the start to fit the context"),
            **extra,
        },
    }
