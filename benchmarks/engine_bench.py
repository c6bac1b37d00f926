"""`make bench-engine`: tokenwalk's OpenCL engine and llama.cpp on the same GGUF files, with
the same threads, runs interleaved (engine, llama.cpp, engine, ...), each side in a process of
its own, for SmolLM2-135M (Q4_1), Gemma 3 270M (Q4_K_M) and Qwen2.5-Coder 0.5B (Q4_K_M).

load: seconds from the file to the first logits (open, upload or map, one decoded token;
      kernels and pages already cached by the warm-up run).
pp512: a 512-token prompt from an empty cache, tokens per second (llama-bench's pp512), timed
      on its second run after each load: llama-bench runs a test once untimed on the loaded
      model, and both sides' first prompt after a load pays one-time costs (the engine builds
      its launch lists; 15-40 % slower here) that no later prompt does.
tg128: 128 tokens decoded one at a time from an empty cache, tokens per second (tg128).
tg@N: 32 tokens decoded after an N-token prompt (default 6,000, --long 0 skips it): the
      long-context decode, where the KV cache is read as much as the weights.
Bandwidth share: tg128 tok/s x bytes a decode step reads / measured read bandwidth.
launches/step: the kernel launches the engine queues for one decode step (its graph's decode
      launch list; besides them a step fills the row counters once and writes its inputs).
us/launch: a tg128 step's time over its launches, microseconds (host work included).
products alone: each kind of decode product (role and weight layout) timed on its own, 20
      launches in a row, the median of 5 such rounds, microseconds a launch and GB/s of its
      bytes: which kernel is slow.
KV at 32K: bytes of the KV cache each side allocates for a context of 32,768 tokens (or the
      model's own, if shorter): the engine's buffers, llama.cpp's as it reports them (its "KV
      buffer size" lines, in MiB to two decimals), and without llama.cpp the core's count of
      what llama.cpp allocates (tokenwalk.physics.kv_cache.kv_reservation_bytes).
Each cell: mean ± standard deviation over the runs after one warm-up, and the best run (on a
shared machine other processes slow some runs down). The ratio line is engine / llama.cpp
(for load, llama.cpp / engine: above 1 means the engine is faster), means and best runs.

llama.cpp runs as its own tools do by default (flash attention, a sliding-window cache of the
window's size; see PeerSide). It comes from the optional peer (pip install 'tokenwalk[peer]'); without it only the
engine's side is printed. Usage: python -m benchmarks.engine_bench [--model NAME_OR_PATH ...]
[--reps N] [--threads N] [--long N] [--kv-ctx N] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_MODELS = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b")
TG_LONG_TOKENS = 32
KV_CTX_TOKENS = 32768  # the context the KV cache's size is compared at (Gemma 3's and Qwen2.5's own)
# engine / llama.cpp (load: the speed ratio): the engine issue's targets (prefill stays at 1.5x or more,
# decode 1.0x, 1.2x after 6,000 tokens, load within 2x)
TARGETS = {"pp512": 1.5, "tg128": 1.0, "tg_long": 1.2, "load": 0.5}


def _tokens(n: int, vocab: int, seed: int = 0) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(t) for t in rng.integers(100, min(vocab, 32000) - 100, size=n)]


class EngineSide:
    """The OpenCL engine on ``model`` with a cache of ``ctx`` positions."""

    name = "tokenwalk engine"

    def __init__(self, model: Path, ctx: int):
        self.model, self.ctx = model, ctx
        self.engine = None
        self.load()

    def load(self) -> float:
        from tokenwalk.native.engine import Engine

        self.engine = None
        gc.collect()
        t0 = time.perf_counter()
        self.engine = Engine(self.model, ctx_tokens=self.ctx, chunk_tokens=128)
        self.engine.decode(1, 0)
        return time.perf_counter() - t0

    @property
    def vocab(self) -> int:
        return self.engine.config.vocab_size

    def prefill(self, ids) -> None:
        self.engine.prefill(ids)

    def decode(self, n: int, pos0: int) -> None:
        token = 1
        for pos in range(pos0, pos0 + n):
            token = int(np.argmax(self.engine.decode(token, pos)))

    def describe(self) -> dict:
        from tokenwalk.native.measure import measure_bandwidth_gbs

        return {"device": self.engine.device_name(), "bytes_read_per_token": self.engine.bytes_read_per_token,
                "bandwidth_gbs": measure_bandwidth_gbs(self.engine),
                "launches_per_step": self.engine.decode_launches_per_step}

    def products(self, launches: int = 20, rounds: int = 5) -> list[dict]:
        """Each kind of decode product alone: the first layer's matrix of each role and weight
        layout (and the head), ``launches`` plain y = W x launches queued back to back after one
        warm-up, as the step runs them (rows from the launch's counter), the median of ``rounds``
        such rounds (one round put Gemma 3's Q6_K down at 210 us a launch where five gave 73);
        microseconds a launch and GB/s of the matrix's bytes. What a step's time is made of,
        kernel by kernel."""
        from tokenwalk.native.cl.ops import MODE_WRITE, RowCounters, enqueue, matvec

        eng = self.engine
        dev, weights = eng.dev, eng.weights
        seen, rows = set(), []
        mats = [(role, getattr(layer, role, None)) for layer in weights.layers
                for role in ("qkv", "v", "out", "gate_up", "down")] + [("head", weights.head)]
        for role, m in mats:
            if m is None or (role, m.packed.kernel_type) in seen:
                continue
            seen.add((role, m.packed.kernel_type))
            x = dev.upload(np.random.default_rng(0).normal(size=m.packed.cols).astype(np.float32))
            y = dev.zeros(m.packed.rows)
            times = []
            for _ in range(rounds):
                counters = RowCounters(dev, launches + 1)
                ops = [matvec(m, x, y, MODE_WRITE, items=eng.decode_items, counters=counters)
                       for _ in range(launches + 1)]
                enqueue(dev, [counters.zero, ops[0]])
                dev.finish()
                t0 = time.perf_counter()
                enqueue(dev, ops[1:])
                dev.finish()
                times.append((time.perf_counter() - t0) / launches)
            s = statistics.median(times)
            rows.append({"role": role, "layout": m.packed.kernel_type, "rows": m.packed.rows, "cols": m.packed.cols,
                         "bytes": m.nbytes, "us": s * 1e6, "gbs": m.nbytes / s / 1e9})
        return rows

    def kv_bytes_at(self, ctx: int) -> tuple[int, int]:
        """(context, bytes of the KV cache) of an engine opened for ``ctx`` tokens (at most the
        model's context): what its buffers take, sliding-window layers as the engine keeps them."""
        from tokenwalk.native.engine import Engine

        self.engine = None
        gc.collect()
        big = Engine(self.model, ctx_tokens=ctx, chunk_tokens=128)
        return big.ctx_tokens, big.kv_cache_bytes


class PeerSide:
    """llama.cpp through llama-cpp-python, ``threads`` threads, a context of ``ctx``."""

    def __init__(self, model: Path, ctx: int, threads: int):
        import llama_cpp

        self.llama_cpp = llama_cpp
        self.model, self.ctx, self.threads = model, ctx, threads
        self.name = f"llama.cpp (llama-cpp-python {llama_cpp.__version__})"
        self.llm = None
        self.load()

    def load(self) -> float:
        self.llm = None
        gc.collect()
        t0 = time.perf_counter()
        # As llama.cpp's own tools run by default (common_params): flash attention (their "auto"
        # picks it on a CPU) and a sliding-window cache of the window's size. llama-cpp-python's
        # defaults differ (flash attention off, swa_full on: every sliding layer then attends
        # over the whole cache, masked, and decode after 6,000 tokens runs 5-10x slower).
        self.llm = self.llama_cpp.Llama(model_path=str(self.model), n_ctx=self.ctx, n_batch=512, n_ubatch=512,
                                        n_threads=self.threads, n_threads_batch=self.threads, flash_attn=True,
                                        swa_full=False, verbose=False)
        self.llm.eval([1])
        return time.perf_counter() - t0

    @property
    def vocab(self) -> int:
        return self.llm.n_vocab()

    def prefill(self, ids) -> None:
        self.llm.n_tokens = 0  # eval removes the cache's cells from n_tokens on
        self.llm.eval(ids)

    def decode(self, n: int, pos0: int) -> None:
        self.llm.n_tokens = pos0
        token = 1
        for _ in range(n):
            self.llm.eval([token])
            # the last token's logits (llm.scores holds them only with logits_all)
            token = int(np.argmax(np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.vocab,))))

    def describe(self) -> dict:
        from tokenwalk.gguf.header import read_gguf_header

        # llama.cpp reads the file's tensors as stored: all of them per decoded token (tied head included)
        weights = sum(t.n_bytes for t in read_gguf_header(self.model).tensors)
        return {"device": f"CPU, {self.threads} threads", "bytes_read_per_token": weights}

    def kv_bytes_at(self, ctx: int) -> tuple[int, int]:
        """(context, bytes of the KV cache) llama.cpp allocates for ``ctx`` tokens, as run here
        (flash attention, sliding-window layers their window's cells): the sum of the "KV buffer
        size = X MiB" lines it logs while creating the context (two where the model has sliding
        layers)."""
        import ctypes

        from tokenwalk.specs.model import load_model

        ctx = min(ctx, load_model(self.model).context_length)
        lines = []

        @self.llama_cpp.llama_log_callback
        def capture(level, text, user_data):
            lines.append(text.decode("utf-8", "replace"))

        self.llm = None
        gc.collect()
        self.llama_cpp.llama_log_set(capture, ctypes.c_void_p(0))
        try:
            big = self.llama_cpp.Llama(model_path=str(self.model), n_ctx=ctx, n_batch=512, n_ubatch=512,
                                       n_threads=self.threads, n_threads_batch=self.threads, flash_attn=True,
                                       swa_full=False, verbose=False)
        finally:
            from llama_cpp import _logger

            self.llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))
        mib = [float(x) for x in re.findall(r"KV buffer size = +([0-9.]+) MiB", "".join(lines))]
        del big
        return ctx, round(sum(mib) * 2**20) if mib else 0


def _serve(conn, kind: str, model: str, ctx: int, threads: int) -> None:
    """A side in a process of its own: (method, args) in, (result, seconds) out, None ends."""
    try:
        side = EngineSide(Path(model), ctx) if kind == "engine" else PeerSide(Path(model), ctx, threads)
    except ImportError as error:
        conn.send(("missing", str(error), 0))
        return
    conn.send(("ready", side.name, side.vocab))
    while (msg := conn.recv()) is not None:
        method, args = msg
        t0 = time.perf_counter()
        out = getattr(side, method)(*args)
        conn.send((out, time.perf_counter() - t0))


class Remote:
    """One side (the engine or llama.cpp) in its own process. In one process the two slow each
    other down: with PoCL loaded, llama.cpp's decode after 6,000 tokens ran 3-10x slower."""

    def __init__(self, kind: str, model: Path, ctx: int, threads: int):
        mp = multiprocessing.get_context("spawn")
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=_serve, args=(child, kind, str(model), ctx, threads), daemon=True)
        self.proc.start()
        status, self.name, self.vocab = self.conn.recv()
        if status != "ready":
            self.proc.join()
            raise ImportError(self.name)

    def __call__(self, method: str, *args):
        """(result, seconds) of side.method(*args), timed in the side's process."""
        self.conn.send((method, args))
        return self.conn.recv()

    def close(self) -> None:
        self.conn.send(None)
        self.proc.join()


def bench_model(model: Path, reps: int, threads: int, long_tokens: int, kv_ctx: int = KV_CTX_TOKENS) -> list[dict]:
    ctx = max(640, long_tokens + TG_LONG_TOKENS + 8)
    sides = [Remote("engine", model, ctx, threads)]
    try:
        sides.append(Remote("peer", model, ctx, threads))
    except ImportError:
        pass
    results = [{"name": s.name, "model": model.name, "load": [], "pp512": [], "tg128": [], "tg_long": []}
               for s in sides]
    prompt = _tokens(512, sides[0].vocab)
    for rep in range(reps + 1):  # the first run warms up (kernels compile, pages come in)
        for side, r in zip(sides, results, strict=True):
            load_s, _ = side("load")
            side("prefill", prompt)  # untimed, as llama-bench's warm-up run
            _, pp_s = side("prefill", prompt)
            _, tg_s = side("decode", 128, 0)
            if rep:
                r["load"].append(load_s), r["pp512"].append(512 / pp_s), r["tg128"].append(128 / tg_s)
    if long_tokens:
        long_prompt = _tokens(long_tokens, sides[0].vocab, seed=1)
        for side in sides:
            side("prefill", long_prompt)  # once per side; the decode runs rewrite the same positions
        for rep in range(reps + 1):
            for side, r in zip(sides, results, strict=True):
                _, tg_s = side("decode", TG_LONG_TOKENS, long_tokens)
                if rep:
                    r["tg_long"].append(TG_LONG_TOKENS / tg_s)
    results[0]["products"] = sides[0]("products")[0]  # the engine's, alone, before the cache is reopened
    for side, r in zip(sides, results, strict=True):
        r.update(side("describe")[0])
        if kv_ctx:  # last: it reopens the model with a cache of kv_ctx positions
            r["kv_ctx"], r["kv_bytes"] = side("kv_bytes_at", kv_ctx)[0]
        side.close()
    if kv_ctx:  # what llama.cpp allocates, counted from the header (beside its own report, if it ran)
        from tokenwalk.physics.kv_cache import kv_reservation_bytes
        from tokenwalk.specs.model import load_model

        spec = load_model(model)
        ctx = min(kv_ctx, spec.context_length)
        results[0]["peer_kv_model"] = {"kv_ctx": ctx, "kv_bytes": int(kv_reservation_bytes(spec, ctx))}
    return results


def _fmt(xs, digits=1, best=max):
    if not xs:
        return "-"
    return f"{statistics.mean(xs):.{digits}f} ± {statistics.pstdev(xs):.{digits}f} (best {best(xs):.{digits}f})"


def report(results: list[dict], long_tokens: int) -> None:
    ours = results[0]
    bw = ours["bandwidth_gbs"]
    print(f"\n{ours['model']} · {ours['device']} · read bandwidth {bw:.1f} GB/s (OpenCL kernel) · "
          f"{len(ours['pp512'])} runs each after a warm-up")
    tg_long = f"tg@{long_tokens}" if long_tokens else "tg@long"
    print(f"{'':34} {'load s':>24} {'pp512 tok/s':>26} {'tg128 tok/s':>26} {tg_long + ' tok/s':>26} "
          f"{'MB/token':>9} {'bw share':>9}")
    for r in results:
        r["bandwidth_share"] = statistics.mean(r["tg128"]) * r["bytes_read_per_token"] / (bw * 1e9)
        print(f"{r['name'][:34]:34} {_fmt(r['load'], 2, min):>24} {_fmt(r['pp512']):>26} {_fmt(r['tg128']):>26} "
              f"{_fmt(r['tg_long']):>26} {r['bytes_read_per_token'] / 1e6:9.1f} {r['bandwidth_share']:9.1%}")
    step_us = 1e6 / statistics.mean(ours["tg128"])
    ours["us_per_launch"] = step_us / ours["launches_per_step"]
    print(f"engine decode step: {ours['launches_per_step']} kernel launches, {step_us:.0f} us a step (tg128 mean), "
          f"{ours['us_per_launch']:.1f} us per launch")
    if ours.get("products"):
        print("engine decode products alone (first layer's of each role and layout, and the head; "
              "median of 5 rounds of 20 launches in a row):")
        for pr in ours["products"]:
            print(f"  {pr['role']:8} {pr['layout']:5} {pr['rows']:>7,} x {pr['cols']:<6,} {pr['bytes'] / 1e6:8.2f} MB "
                  f"{pr['us']:9.0f} us {pr['gbs']:6.1f} GB/s")
    for r in results:
        if "kv_bytes" in r:
            print(f"KV cache at {r['kv_ctx']:,} tokens, {r['name']}: {r['kv_bytes']:,} bytes ({r['kv_bytes'] / 2**20:.1f} MiB)")
    if "peer_kv_model" in ours:
        kv = ours["peer_kv_model"]
        print(f"KV cache at {kv['kv_ctx']:,} tokens, llama.cpp's allocation as the core counts it: "
              f"{kv['kv_bytes']:,} bytes ({kv['kv_bytes'] / 2**20:.1f} MiB)")
    if len(results) < 2:
        print("llama.cpp not installed (pip install 'tokenwalk[peer]'): engine only")
        return
    peer = results[1]
    parts = []
    ours["ratios"] = {}
    for key, label in (("load", "load"), ("pp512", "prefill"), ("tg128", "decode"), ("tg_long", tg_long)):
        if not ours[key] or not peer[key]:
            continue
        if key == "load":  # a time: the ratio of speeds is llama.cpp's time over the engine's
            mean = statistics.mean(peer[key]) / statistics.mean(ours[key])
            best = min(peer[key]) / min(ours[key])
        else:
            mean = statistics.mean(ours[key]) / statistics.mean(peer[key])
            best = max(ours[key]) / max(peer[key])
        ours["ratios"][key] = mean
        mark = "meets" if mean >= TARGETS[key] else "below"
        parts.append(f"{label} {mean:.2f} (best runs {best:.2f}; target >= {TARGETS[key]:.1f}: {mark})")
    print("engine / llama.cpp speed, means: " + "; ".join(parts))


def _median_ratio(ours: dict, peer: dict, key: str) -> str:
    """Engine / llama.cpp speed from the runs' medians (for load, a time: llama.cpp's over the engine's)."""
    if not ours[key] or not peer[key]:
        return "-"
    a, b = statistics.median(ours[key]), statistics.median(peer[key])
    return f"{(b / a if key == 'load' else a / b):.2f}"


def summary_table(everything: list[dict], long_tokens: int) -> str:
    """Every model's runs as one Markdown table (the README's): medians of the runs, the
    engine's launches per decode step and microseconds per launch, the KV cache at 32K, and
    for each model with llama.cpp beside it a row of engine / llama.cpp speeds."""
    def med(xs, digits=1):
        return f"{statistics.median(xs):,.{digits}f}" if xs else "-"

    def kv(r):
        return f"{r['kv_bytes'] / 2**20:,.1f} MiB at {r['kv_ctx']:,}" if r.get("kv_bytes") else "-"

    tg_long = f"tg@{long_tokens:,}" if long_tokens else "tg@long"
    lines = [f"| | load s | pp512 tok/s | tg128 tok/s | {tg_long} tok/s | launches/step | µs/launch | KV cache |",
             "|---|---|---|---|---|---|---|---|"]
    for model in dict.fromkeys(r["model"] for r in everything):
        ours, *peers = [r for r in everything if r["model"] == model]
        lines.append(f"| {model}, engine | {med(ours['load'], 2)} | {med(ours['pp512'])} | {med(ours['tg128'])} | "
                     f"{med(ours['tg_long'])} | {ours['launches_per_step']} | "
                     f"{1e6 / statistics.median(ours['tg128']) / ours['launches_per_step']:.1f} | {kv(ours)} |")
        for peer in peers:
            lines.append(f"| {model}, llama.cpp | {med(peer['load'], 2)} | {med(peer['pp512'])} | "
                         f"{med(peer['tg128'])} | {med(peer['tg_long'])} | | | {kv(peer)} |")
            cells = [_median_ratio(ours, peer, key) for key in ("load", "pp512", "tg128", "tg_long")]
            lines.append(f"| engine / llama.cpp (speed) | {' | '.join(cells)} | | | |")
        if not peers and "peer_kv_model" in ours:
            k = ours["peer_kv_model"]
            lines.append(f"| {model}, llama.cpp (not run; its KV cache as the core counts it) | | | | | | | "
                         f"{k['kv_bytes'] / 2**20:,.1f} MiB at {k['kv_ctx']:,} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=list(DEFAULT_MODELS),
                        help=f"model preset names or .gguf paths (default: {' '.join(DEFAULT_MODELS)})")
    parser.add_argument("--reps", type=int, default=3, help="timed runs after one warm-up run (default 3)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="llama.cpp threads (PoCL uses one thread per core: keep them equal)")
    parser.add_argument("--long", type=int, default=6000,
                        help="prompt tokens before the long-context decode (default 6000; 0 skips it)")
    parser.add_argument("--kv-ctx", type=int, default=KV_CTX_TOKENS,
                        help=f"context at which to compare the KV caches' sizes (default {KV_CTX_TOKENS}; 0 skips it)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from tokenwalk.cli._paths import model_path
    from tokenwalk.errors import TokenwalkError

    everything = []
    for name in args.model:
        try:
            path = Path(model_path(name))
        except TokenwalkError as error:
            print(f"engine_bench: {error}", file=sys.stderr)
            return 2
        if not path.exists():
            print(f"engine_bench: {path}: model file not found (run make setup)", file=sys.stderr)
            return 2
        results = bench_model(path, args.reps, args.threads, args.long, args.kv_ctx)
        report(results, args.long)
        everything.extend(results)
    print(f"\nmedians of {args.reps} runs after a warm-up:\n{summary_table(everything, args.long)}")
    if args.json:
        print(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
