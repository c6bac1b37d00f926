"""`make bench-engine`: tokenwalk's OpenCL engine and llama.cpp on the same GGUF, one after
the other, with the same threads: pp512 and tg128 (llama-bench's tests), the ratios, and
each one's share of the measured read bandwidth.

pp512: a 512-token prompt from an empty cache, tokens per second.
tg128: 128 tokens decoded one at a time from an empty cache, tokens per second.
Bandwidth share: tg tok/s x bytes a decode step reads / measured read bandwidth.
Each cell: mean ± standard deviation over the runs, and the best run (on a shared machine
the other processes slow some runs down; llama.cpp's spinning threads suffer most).

llama.cpp comes from the optional peer (pip install 'tokenwalk[peer]'); without it only the
engine's side is printed. Usage: python -m benchmarks.engine_bench [--model PATH] [--reps N]
[--threads N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_MODEL = Path(".cache") / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _tokens(n: int, vocab: int, seed: int = 0) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(t) for t in rng.integers(100, vocab - 100, size=n)]


def bench_engine(model: Path, reps: int, chunk: int) -> dict:
    from tokenwalk.native.engine import Engine

    engine = Engine(model, ctx_tokens=640, chunk_tokens=chunk)
    prompt = _tokens(512, engine.config.vocab_size)
    pp, tg = [], []
    for rep in range(reps + 1):  # the first run warms up (kernel variants compile on first use)
        t0 = time.perf_counter()
        engine.prefill(prompt)
        pp.append(512 / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        token = 1
        for pos in range(128):
            token = int(np.argmax(engine.decode(token, pos)))
        tg.append(128 / (time.perf_counter() - t0))
        if rep == 0:
            pp.clear(), tg.clear()
    from tokenwalk.native.measure import measure_bandwidth_gbs

    return {"name": "tokenwalk engine", "device": engine.device_name(), "pp512": pp, "tg128": tg,
            "bytes_read_per_token": engine.bytes_read_per_token, "bandwidth_gbs": measure_bandwidth_gbs(engine),
            "chunk_tokens": chunk}


def bench_llamacpp(model: Path, reps: int, threads: int) -> dict | None:
    try:
        import llama_cpp
    except ImportError:
        return None
    llm = llama_cpp.Llama(model_path=str(model), n_ctx=640, n_batch=512, n_ubatch=512, n_threads=threads,
                          n_threads_batch=threads, verbose=False)
    prompt = _tokens(512, llm.n_vocab())
    pp, tg = [], []
    for rep in range(reps + 1):  # the first run warms up, as llama-bench does
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        pp.append(512 / (time.perf_counter() - t0))
        llm.reset()
        t0 = time.perf_counter()
        token = 1
        for _ in range(128):
            llm.eval([token])
            token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        tg.append(128 / (time.perf_counter() - t0))
        if rep == 0:
            pp.clear(), tg.clear()
    # llama.cpp reads the file's tensors as stored: all of them per decoded token (tied head included).
    from tokenwalk.gguf.header import read_gguf_header

    weights = sum(t.n_bytes for t in read_gguf_header(model).tensors)
    return {"name": f"llama.cpp (llama-cpp-python {llama_cpp.__version__})", "device": f"CPU, {threads} threads",
            "pp512": pp, "tg128": tg, "bytes_read_per_token": weights}


def _fmt(xs):
    return f"{statistics.mean(xs):7.1f} ± {statistics.pstdev(xs):5.1f} (best {max(xs):6.1f})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--reps", type=int, default=5, help="timed runs after one warm-up run (default 5)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="llama.cpp threads (PoCL uses one thread per core: keep them equal)")
    parser.add_argument("--chunk", type=int, default=128, help="engine prefill chunk in tokens")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.model.exists():
        print(f"engine_bench: {args.model}: model file not found (run make setup)", file=sys.stderr)
        return 2
    ours = bench_engine(args.model, args.reps, args.chunk)
    peer = bench_llamacpp(args.model, args.reps, args.threads)
    bw = ours["bandwidth_gbs"]
    rows = [ours] + ([peer] if peer else [])
    print(f"model {args.model.name} · read bandwidth {bw:.1f} GB/s (OpenCL kernel) · {args.reps} runs each")
    print(f"{'':38} {'pp512 tok/s':>29} {'tg128 tok/s':>29} {'MB/token':>9} {'bw share':>9}")
    for r in rows:
        share = statistics.mean(r["tg128"]) * r["bytes_read_per_token"] / (bw * 1e9)
        r["bandwidth_share"] = share
        print(f"{r['name'][:38]:38} {_fmt(r['pp512']):>29} {_fmt(r['tg128']):>29} "
              f"{r['bytes_read_per_token'] / 1e6:9.1f} {share:9.1%}")
    if peer:
        pp_ratio = statistics.mean(ours["pp512"]) / statistics.mean(peer["pp512"])
        tg_ratio = statistics.mean(ours["tg128"]) / statistics.mean(peer["tg128"])
        best_pp = max(ours["pp512"]) / max(peer["pp512"])
        best_tg = max(ours["tg128"]) / max(peer["tg128"])
        print(f"engine / llama.cpp, means: prefill {pp_ratio:.2f} (target >= 0.5), decode {tg_ratio:.2f} "
              f"(target >= 0.8); best runs: prefill {best_pp:.2f}, decode {best_tg:.2f}")
        ours["ratio_pp512"], ours["ratio_tg128"] = pp_ratio, tg_ratio
    else:
        print("llama.cpp not installed (pip install 'tokenwalk[peer]'): engine only")
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
