"""`make bench-engine`: tokenwalk's OpenCL engine and llama.cpp on the same GGUF files, with
the same threads, runs interleaved (engine, llama.cpp, engine, ...), each side in a process of
its own, for SmolLM2-135M (Q4_1) and Gemma 3 270M (Q4_K_M).

load: seconds from the file to the first logits (open, upload or map, one decoded token;
      kernels and pages already cached by the warm-up run).
pp512: a 512-token prompt from an empty cache, tokens per second (llama-bench's pp512).
tg128: 128 tokens decoded one at a time from an empty cache, tokens per second (tg128).
tg@N: 32 tokens decoded after an N-token prompt (default 6,000, --long 0 skips it): the
      long-context decode, where the KV cache is read as much as the weights.
Bandwidth share: tg128 tok/s x bytes a decode step reads / measured read bandwidth.
Each cell: mean ± standard deviation over the runs after one warm-up, and the best run (on a
shared machine other processes slow some runs down). The ratio line is engine / llama.cpp
(for load, llama.cpp / engine: above 1 means the engine is faster), means and best runs.

llama.cpp runs as its own tools do by default (flash attention, a sliding-window cache of the
window's size; see PeerSide). It comes from the optional peer (pip install 'tokenwalk[peer]'); without it only the
engine's side is printed. Usage: python -m benchmarks.engine_bench [--model NAME_OR_PATH ...]
[--reps N] [--threads N] [--long N] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_MODELS = ("smollm2-135m", "gemma3-270m")
TG_LONG_TOKENS = 32
TARGETS = {"pp512": 1.0, "tg128": 1.0, "tg_long": 1.0, "load": 0.5}  # engine / llama.cpp (load: speed ratio)


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
                "bandwidth_gbs": measure_bandwidth_gbs(self.engine)}


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


def bench_model(model: Path, reps: int, threads: int, long_tokens: int) -> list[dict]:
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
    for side, r in zip(sides, results, strict=True):
        r.update(side("describe")[0])
        side.close()
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=list(DEFAULT_MODELS),
                        help="model preset names or .gguf paths (default: smollm2-135m gemma3-270m)")
    parser.add_argument("--reps", type=int, default=3, help="timed runs after one warm-up run (default 3)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="llama.cpp threads (PoCL uses one thread per core: keep them equal)")
    parser.add_argument("--long", type=int, default=6000,
                        help="prompt tokens before the long-context decode (default 6000; 0 skips it)")
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
        results = bench_model(path, args.reps, args.threads, args.long)
        report(results, args.long)
        everything.extend(results)
    if args.json:
        print(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
