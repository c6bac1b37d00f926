"""Tokenizer benchmark (`make bench`): large vocabularies read from their GGUF file, built, and
the article's request (system prompt, patient history and question in ChatML) tokenized.

    python -m benchmarks.tokenizer_bench [--runs N] [VOCAB ...]

VOCAB is a file stem of llama.cpp's tokenizer test set in .cache/llama-vocab/ (default: qwen2,
151,936 entries, the Qwen family's vocabulary; llama-bpe, Llama 3's 128,256; gemma-4, 262,144)
or a .gguf path. Each line: the file's tokenizer metadata read, the tokenizer built (ids,
merge ranks, special tokens), the request tokenized (a fresh tokenizer: no cached words), the
total, wall-clock and CPU seconds, best of the runs (other processes slow some runs down).
Target: under 1 s in total for the 150,000-entry vocabulary.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOCABS = ROOT / ".cache" / "llama-vocab"
DEFAULT = ("qwen2", "llama-bpe", "gemma-4")
TARGET_S = 1.0


def request_text() -> str:
    """The article's request as the model receives it (ChatML, as article/numbers/request.py)."""
    from article.scenario import read_request
    from tokenwalk.text.chat_template import render_chat

    r = read_request()
    messages = [{"role": "system", "content": r.system}, {"role": "user", "content": r.history + "\n\n" + r.question}]
    return render_chat(None, messages, add_generation_prompt=True)


def measure(path: Path, text: str) -> dict:
    from tokenwalk.gguf.header import read_gguf_header
    from tokenwalk.text.tokenizer import tokenizer_from_metadata

    marks = [(time.perf_counter(), time.process_time())]
    metadata = dict(read_gguf_header(path).metadata)
    marks.append((time.perf_counter(), time.process_time()))
    tok = tokenizer_from_metadata(metadata, source=str(path))
    marks.append((time.perf_counter(), time.process_time()))
    ids = tok.encode(text)
    marks.append((time.perf_counter(), time.process_time()))
    wall = [b[0] - a[0] for a, b in zip(marks, marks[1:], strict=False)]
    cpu = [b[1] - a[1] for a, b in zip(marks, marks[1:], strict=False)]
    return {"read_s": wall[0], "build_s": wall[1], "tokenize_s": wall[2], "total_s": sum(wall),
            "cpu_s": sum(cpu), "tokens": len(ids), "vocab": tok.vocab_size}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vocabs", nargs="*", default=list(DEFAULT))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    text = request_text()
    print(f"tokenizer: the article's request ({len(text):,} characters), best of {args.runs} runs")
    print(f"{'vocabulary':<16}{'entries':>9}{'tokens':>8}{'read s':>8}{'build s':>9}{'tokenize s':>12}"
          f"{'total s':>9}{'cpu s':>7}")
    for name in args.vocabs:
        path = Path(name) if name.endswith(".gguf") else VOCABS / f"ggml-vocab-{name}.gguf"
        if not path.exists():
            print(f"{name}: {path} is missing (run `make setup`)", file=sys.stderr)
            return 2
        runs = [measure(path, text) for _ in range(args.runs)]
        best = min(runs, key=lambda r: r["total_s"])
        flag = "" if best["total_s"] < TARGET_S or best["vocab"] > 200_000 else f"  (over the {TARGET_S:g} s target)"
        print(f"{name:<16}{best['vocab']:>9,}{best['tokens']:>8,}{best['read_s']:>8.2f}{best['build_s']:>9.2f}"
              f"{best['tokenize_s']:>12.3f}{best['total_s']:>9.2f}{best['cpu_s']:>7.2f}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
