"""`make measure-llama-bench`: llama.cpp's own benchmark on the machine that builds the page,
written where `tokenwalk validate`'s second size check and the article read it
(tokenwalk/data/measurements/llama-bench-build-machine.json).

llama-bench is built from the llama.cpp that the peer extra pins (llama-cpp-python's source
package from the package registry, `PEER_VERSION`, its vendored llama.cpp), CPU backend with
`-DGGML_NATIVE=ON`, under .cache/peer/ (about 25 minutes on two cores the first time, then
kept). It then runs the three model files `make setup` fetches with `-t THREADS -r REPS -o json`,
and the file is written with what ran, where and when. Run it on an otherwise idle machine: the
size check's extrapolation to the smallest model moves by tens of percent with a few percent
of noise in the speeds (README "The size check").

Usage: python -m benchmarks.llama_bench_peer [--llama-bench PATH] [--reps N] [--threads N] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "peer"
PEER_VERSION = "0.3.36"  # pyproject.toml's peer extra
MODELS = [ROOT / ".cache" / "models" / name for name in (
    "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")]
OUT = ROOT / "tokenwalk" / "data" / "measurements" / "llama-bench-build-machine.json"


def _run(cmd: list, **kwargs) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def build_llama_bench() -> Path:
    """The llama-bench binary, built from llama-cpp-python's source package (once)."""
    source = CACHE / f"llama_cpp_python-{PEER_VERSION}"
    if not source.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
              f"llama-cpp-python=={PEER_VERSION}", "-d", str(CACHE)])
        with tarfile.open(CACHE / f"llama_cpp_python-{PEER_VERSION}.tar.gz") as archive:
            archive.extractall(CACHE, filter="data")
    llama = source / "vendor" / "llama.cpp"
    build = llama / "build"
    binary = build / "bin" / "llama-bench"
    if not binary.exists():
        _run(["cmake", "-S", str(llama), "-B", str(build), "-DGGML_NATIVE=ON", "-DLLAMA_CURL=OFF",
              "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
              "-DLLAMA_BUILD_SERVER=OFF"])
        _run(["cmake", "--build", str(build), "--target", "llama-bench", "-j", "2"])
    return binary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-bench", help="a llama-bench binary already built (skips the build)")
    parser.add_argument("--reps", type=int, default=10, help="repetitions of each test (default 10)")
    parser.add_argument("--threads", type=int, default=2, help="threads (default 2: the build machine's cores)")
    parser.add_argument("--out", default=str(OUT), help="file to write (default: the measurement the build reads)")
    args = parser.parse_args(argv)
    missing = [m.name for m in MODELS if not m.is_file()]
    if missing:
        print(f"llama_bench_peer: {missing[0]} is missing (make setup fetches it)", file=sys.stderr)
        return 2
    binary = Path(args.llama_bench) if args.llama_bench else build_llama_bench()
    cmd = [str(binary)] + [a for m in MODELS for a in ("-m", str(m.relative_to(ROOT)))] + [
        "-t", str(args.threads), "-r", str(args.reps), "-o", "json"]
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        print(f"llama_bench_peer: llama-bench failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return 2
    runs = json.loads(done.stdout)
    commit = runs[0].get("build_commit", "unknown") if runs else "unknown"
    today = datetime.date.today().isoformat()
    data = {
        "about": ("llama.cpp's own benchmark, llama-bench, run on the machine that builds the page with the three "
                  "models `make setup` fetches, as it printed them (-o json). tokenwalk.timing.size_check leaves each "
                  "model out in turn, calibrates the machine on the other two (tokenwalk.timing.own_runs, the solve "
                  "that times the laptop) and predicts the third: the size check of the timing law on kernels other "
                  "than tokenwalk's own engine."),
        "measured_by": (f"llama-bench of llama.cpp commit {commit} (the copy vendored in llama-cpp-python {PEER_VERSION}, "
                        f"built with cmake -DGGML_NATIVE=ON, CPU backend), llama-bench -t {args.threads} -r {args.reps} "
                        f"-o json with the three models, {today} (make measure-llama-bench)"),
        "when": today,
        "device": "the build machine's CPU: the device the engine's measurements (engine*.json) ran on through PoCL",
        "machine": "this-machine",
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    for r in runs:
        print(f"{r['model_type']:<28} {'pp' + str(r['n_prompt']) if r['n_prompt'] else 'tg' + str(r['n_gen']):>7} "
              f"{r['avg_ts']:10.2f} ± {r['stddev_ts']:.2f} tok/s")
    print(f"wrote {args.out}; then `tokenwalk validate --summary` and the README's block")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
