"""`tokenwalk measure`: the article's request on this machine, with the OpenCL engine."""

from __future__ import annotations

import json
import shlex
import sys

NAME = "measure"
HELP = "run the article's request with the OpenCL engine and write data/measurements/engine.json"
DESCRIPTION = """\
Run a request (by default the article's, content/request/request.json: system prompt,
patient history cut to fit the context, question) through the engine and record: device,
load_s, prompt_tokens, prefill_tok_s, ttft_s, decode_tok_s, bytes_read_per_token,
measured_bandwidth_gbs (an OpenCL read kernel) and decode_bandwidth_share. The build reads the file it writes.
Run from the repository root (the default paths are relative to it).

examples:
  tokenwalk measure --json
  tokenwalk measure --model gemma3-270m --out gemma3-measurements.json
  tokenwalk measure --model qwen2.5-coder-0.5b --repeats 3 --note "machine shared with other work"
"""


DEFAULT_CTX_TOKENS = 8192  # the request (about 6,600 tokens) and 300 output tokens fit; a larger
# cache (Gemma 3 allows 32,768) would only add to the load time the measurement reports
ARTICLE_WHAT = "The article's request run by tokenwalk's own OpenCL engine on the machine that built this page."


def _checked(field: str):
    from tokenwalk.cli._args import checked
    from tokenwalk.specs.schema import GENERATION_DOMAINS

    return checked(field, GENERATION_DOMAINS)


def add_arguments(parser):
    parser.add_argument("--model", help="GGUF file, or smollm2-135m / gemma3-270m / qwen2.5-coder-0.5b for the files `make setup` "
                        "fetches (default: smollm2-135m)")
    parser.add_argument("--request", help="request.json naming the system prompt, history and question files "
                        "(default: content/request/request.json, the article's)")
    parser.add_argument("--json", action="store_true", help="also print the measurements as JSON")
    parser.add_argument("--out", help="file to write (default: tokenwalk/data/measurements/engine.json for SmolLM2, "
                        "engine-<name>.json for another model given by name; the page shows both)")
    parser.add_argument("--device", help="OpenCL PLATFORM:DEVICE indices (default: PYOPENCL_CTX, else the CPU)")
    parser.add_argument("--ctx", type=_checked("ctx_tokens"), help=f"context in tokens (default: the model's, at most "
                        f"{DEFAULT_CTX_TOKENS:,}: the article's request and its answer fit)")
    parser.add_argument("--output-tokens", type=_checked("output_tokens"), help="tokens to decode (default: the request's, 300)")
    parser.add_argument("--chunk", type=_checked("chunk_tokens"), default=128, help="prefill chunk in tokens (default 128)")
    parser.add_argument("--repeats", type=_repeats, default=1,
                        help=f"runs in a row, each timed value the median of them (1 to {MAX_REPEATS}; default 1)")
    parser.add_argument("--note", default="", help="what else to record of the machine's state "
                        "(with --repeats; the load average is recorded anyway)")


MAX_REPEATS = 9  # a run of the article's request takes about a minute on two cores


def _repeats(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= MAX_REPEATS:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_REPEATS}, not {value}")
    return value


def writable_out(out) -> None:
    """Refuse, before minutes of measuring, a path the measurements could not be written to:
    a folder, a FIFO or device, a file or folder without write permission, a parent that is
    a file. Raises TokenwalkError naming the path."""
    import os
    from pathlib import Path

    from tokenwalk.errors import TokenwalkError, check_regular_file

    out = Path(out)
    if out.exists():
        try:
            check_regular_file(out)
        except TokenwalkError as error:
            raise TokenwalkError(f"--out {error}") from None
        if not os.access(out, os.W_OK):
            raise TokenwalkError(f"{out}: --out: cannot write the measurements there (no permission)")
        return
    parent = out.parent
    while not parent.exists() and parent != parent.parent:  # measure makes the missing folders
        parent = parent.parent
    if not parent.is_dir():
        raise TokenwalkError(f"{out}: --out: {parent} is not a folder; cannot write the measurements there")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TokenwalkError(f"{out}: --out: cannot write in {parent} (no permission)")


def _command(args) -> str:
    """The command line that measured (the options that change what is measured; not --out or
    --json, which only say where the result goes)."""
    options = [("--model", args.model), ("--request", args.request), ("--device", args.device), ("--ctx", args.ctx),
               ("--output-tokens", args.output_tokens), ("--chunk", args.chunk if args.chunk != 128 else None),
               ("--repeats", args.repeats), ("--note", args.note or None)]
    return " ".join(["tokenwalk measure", *(f"{flag} {shlex.quote(str(value))}" for flag, value in options
                                            if value is not None)])


def run(args) -> int:
    from pathlib import Path

    from tokenwalk.cli._paths import ARTICLE_REQUEST, found, measurements_file, model_path
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.native.measure import load_average, measure, median_of_runs, read_request

    out = Path(args.out) if args.out else measurements_file(args.model)
    writable_out(out)  # before the model loads and the request runs, not after
    request = read_request(args.request or found(ARTICLE_REQUEST))
    what = {"what": ARTICLE_WHAT} if not args.request else {}
    path = model_path(args.model)
    before = load_average()
    runs = []
    for i in range(args.repeats):
        runs.append(measure(path, request, device=args.device, ctx_tokens=args.ctx or DEFAULT_CTX_TOKENS,
                            output_tokens=args.output_tokens, chunk_tokens=args.chunk, **what))
        if args.repeats > 1:  # a run takes about a minute: say how far it is
            got = runs[-1]["values"]
            print(f"run {i + 1} of {args.repeats}: prefill {got['prefill_tok_s']['value']} tok/s, "
                  f"decode {got['decode_tok_s']['value']} tok/s", file=sys.stderr)
    if args.repeats == 1:
        result = runs[0]
    else:
        try:
            result = median_of_runs(runs, _command(args), (before, load_average()), args.note)
        except ValueError as error:
            raise TokenwalkError(f"{out}: the {args.repeats} runs cannot be combined ({error})") from None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        raise TokenwalkError(f"{out}: cannot write the measurements ({error.strerror})") from None
    vals = {k: v["value"] for k, v in result["values"].items()}
    if args.json:
        print(json.dumps(vals, indent=2, ensure_ascii=False))
    else:
        print(f"{vals['device']}\nload {vals['load_s']} s · prompt {vals['prompt_tokens']} tokens · prefill "
              f"{vals['prefill_tok_s']} tok/s · first token {vals['ttft_s']} s · decode {vals['decode_tok_s']} tok/s\n"
              f"bandwidth {vals['measured_bandwidth_gbs']} GB/s · a decode step reads "
              f"{vals['bytes_read_per_token'] / 1e6:.1f} MB of weights "
              f"(+ {vals['kv_bytes_read_per_token'] / 1e6:.1f} MB of KV cache) · "
              f"decode uses {vals['decode_bandwidth_share']:.0%} of the bandwidth "
              f"({vals['decode_bandwidth_share_with_kv']:.0%} with the cache)")
    print(f"wrote {out}", file=sys.stderr)
    return 0
