"""`tokenwalk walk`: one request from the disk to the last token, stage by stage."""

from __future__ import annotations

import argparse
import sys

from tokenwalk import format as fmt
from tokenwalk.errors import TokenwalkError, printable

NAME = "walk"
HELP = "walk one request on a model and a machine: load, prefill (time to first token), decode"
DESCRIPTION = """\
Walk one request on a model and a machine: load from disk, chat template, tokenize,
prefill in chunks, decode token by token with the KV cache growing, stop. Prints each
stage's time, bytes and bound (disk, cpu, memory or compute) and the three numbers a
user feels: load time, time to first token (prefill tok/s) and decode tok/s.

Decode and prefill times come from the timing model fitted on published llama-bench
runs (`tokenwalk validate` prints its error); load is the file over the disk's
bandwidth, calibrated on the laptop's measured cold load. They are estimates.

MODEL is a preset name, a .gguf file (header only is read) or a .json model spec;
MACHINE is a preset name or a .json machine spec.

example:
  tokenwalk walk --model qwen3.6-35b-a3b --machine laptop-860m --prompt-tokens 6500 --output-tokens 300
"""


def _checked(field: str):
    """A request field's argparse type, checked against `REQUEST_DOMAINS` (as the page's form)."""
    from tokenwalk.cli._args import checked
    from tokenwalk.specs.schema import REQUEST_DOMAINS

    return checked(field, REQUEST_DOMAINS)


def _presets_epilog() -> str:
    try:
        from tokenwalk.specs.machine import MEASURED_MACHINE, has_measured_machine, list_machine_presets
        from tokenwalk.specs.model import list_model_presets

        models, machines = list_model_presets(), list_machine_presets()
        if has_measured_machine():  # the build machine, from `tokenwalk measure`
            machines = machines + [MEASURED_MACHINE]
    except (ImportError, TokenwalkError):  # presets not available: help still works
        return ""
    return f"model presets:   {', '.join(models)}\nmachine presets: {', '.join(machines)}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _presets_epilog()
    parser.add_argument("--model", required=True, metavar="MODEL", help="preset name, .gguf file or .json spec")
    parser.add_argument("--machine", required=True, metavar="MACHINE", help="preset name or .json spec")
    parser.add_argument("--prompt-tokens", required=True, type=_checked("prompt_tokens"), metavar="N",
                        help="tokens in the prompt (template included)")
    parser.add_argument("--output-tokens", required=True, type=_checked("output_tokens"), metavar="K",
                        help="tokens of the answer")
    parser.add_argument("--num-ctx", type=_checked("num_ctx"), metavar="C",
                        help="context reserved at load (default: prompt + output)")
    parser.add_argument("--kv-type", default="f16", choices=["f16", "q8_0", "q4_0"], help="KV cache type (default f16)")
    parser.add_argument("--chunk", type=_checked("chunk_tokens"), default=512, metavar="N",
                        help="prefill chunk in tokens (default 512, as Ollama)")
    parser.add_argument("--warm", action="store_true", help="the model is already loaded: skip the load")
    parser.add_argument("--users", type=_checked("users"), default=1, metavar="U",
                        help="conversations decoded together (default 1)")
    parser.add_argument("--spec-alpha", type=_checked("spec_alpha"), metavar="A", help="speculative decoding: acceptance rate")
    parser.add_argument("--spec-gamma", type=_checked("spec_gamma"), metavar="G", help="speculative decoding: draft tokens per round")
    parser.add_argument("--runs", metavar="FILE",
                        help="time MACHINE on your own llama-bench runs: what llama-bench printed (its table, -o json "
                             "or -o jsonl) saved in a file; each test is matched to a preset or to MODEL by its count "
                             "of weights")
    parser.add_argument("--json", action="store_true", help="print the walk as JSON")


def run(args) -> int:
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.specs.model import load_model
    from tokenwalk.walk import Request, walk_request

    model = load_model(args.model)
    machine = load_machine(args.machine)
    request = Request(
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        num_ctx=args.num_ctx,
        kv_type=args.kv_type,
        chunk_tokens=args.chunk,
        warm=args.warm,
        users=args.users,
        spec_alpha=args.spec_alpha,
        spec_gamma=args.spec_gamma,
    )
    calibration = None
    if getattr(args, "runs", None):
        machine, calibration = _calibrated(machine, model, args.model, args.runs)
    walk = walk_request(model, machine, request)
    for warning in walk.warnings:
        print(f"tokenwalk walk: warning: {printable(warning)}", file=sys.stderr)
    if args.json:
        from tokenwalk.cli import dump_json

        sys.stdout.write(dump_json(walk.to_dict()) + "\n")
    else:
        from dataclasses import replace

        # names from files: no raw newline or control character reaches the table
        sys.stdout.write(format_walk(replace(walk, model=printable(walk.model), machine=printable(walk.machine))))
        if calibration is not None:
            sys.stdout.write(format_runs(calibration))
    return 0


def _calibrated(machine, model, model_arg: str, runs_path: str):
    """`machine` calibrated on the llama-bench runs in the file `runs_path`
    (`tokenwalk.timing.own_runs`), matched to the presets and to MODEL."""
    from tokenwalk.errors import check_regular_file
    from tokenwalk.timing import own_runs

    check_regular_file(runs_path, TokenwalkError)
    try:
        with open(runs_path, encoding="utf-8") as handle:
            text = handle.read(own_runs.MAX_TEXT_CHARS + 1)
    except FileNotFoundError:
        raise TokenwalkError(f"{runs_path}: file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TokenwalkError(f"{runs_path}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    runs, notes = own_runs.read_runs(text, runs_path)
    for note in notes:
        print(f"tokenwalk walk: note: {note}", file=sys.stderr)
    calibration = own_runs.calibrate_on_presets(machine, runs, {model_arg: model}, label=runs_path,
                                                pick="give that model's GGUF file as --model")[0]
    return calibration.machine, calibration


def format_runs(calibration) -> str:
    """The reader's runs beside the published fit's and the calibration's predictions."""
    rows = [("test", "model", "measured", "published fit", "on your runs", "")]
    for r in calibration.rows:
        predicted = [f"{r[k]:,.1f} ({round(100 * (r[k] / r['measured_tok_s'] - 1)):+d} %)" if r[k] else "-"
                     for k in ("fit_tok_s", "calibrated_tok_s")]
        rows.append((r["test"], printable(r["model"] or "not here (pick its GGUF as --model)"),
                     f"{r['measured_tok_s']:,.1f}", *predicted, "solved on" if r["used"] else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["your runs (tok/s)"] + ["  " + "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i])
                                                      for i, c in enumerate(row[:5])) + "  " + row[5] for row in rows]
    c = calibration.coefficients
    lines += [f"solved          bandwidth efficiency {c['bandwidth_efficiency']:g}, "
              f"{c['launch_cost_s'] * 1e6:.3g} us a launch, compute efficiency {c['compute_efficiency']:g}"]
    if calibration.note:
        lines.append(f"note            {printable(calibration.note)}")
    return "\n".join(lines) + "\n"


def _seconds(value: float) -> str:
    if value == 0:
        return "0"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.1f} s"


def _bytes(value: float) -> str:
    if value <= 0:
        return "-"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value:.0f} B"


def _note(stage) -> str:
    d = stage.to_dict()
    if stage.name == "load":
        return f"at {fmt.significant(d['effective_gbs'], 2)} GB/s, {d['why']}"
    if stage.name == "tokenize":
        return f"{d['tokens']:,} tokens"
    if stage.name == "prefill":
        chunks = f"{d['chunk_count']} chunk" + ("s" if d["chunk_count"] != 1 else "")
        experts = (f", {fmt.significant(d['expert_rows'], 3)} rows an expert (shape: {d['shape_pair']})"
                   if "expert_rows" in d else "")
        return f"{chunks} of {d['chunk_tokens']}{experts}; KV written {_bytes(d['kv_written_bytes'])}"
    if stage.name == "decode":
        unit = "round" if d["tokens_per_step"] != 1 else "step"
        steps = f"{d['steps']:,} {unit}" + ("s" if d["steps"] != 1 else "")
        return (f"{steps} of {_seconds(d['first_step_s'])}–{_seconds(d['last_step_s'])}, "
                f"{_bytes(d['first_step_bytes'])} read per {unit}")
    return d.get("reason", "")


def format_walk(walk) -> str:
    """The walk as a plain-text table and the three numbers."""
    r = walk.request
    lines = [f"{walk.model} on {walk.machine}: {r.prompt_tokens:,} prompt tokens, {r.output_tokens:,} output tokens, "
             f"num_ctx {r.context_tokens:,}, KV {r.kv_type}" + (f", {r.users} users" if r.users > 1 else ""), ""]
    rows = [("stage", "time", "bytes", "bound", "")]
    rows += [(s.name, _seconds(s.seconds), _bytes(s.bytes), s.bound, _note(s)) for s in walk.stages]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) if i in (0, 3) else cell.rjust(widths[i])
                               for i, cell in enumerate(row[:4])) + "  " + row[4])
    memory = walk.memory
    lines += [
        "",
        f"load            {_seconds(walk.load_s)}" + ("  (warm: already in memory)" if r.warm else ""),
        f"first token     {_seconds(walk.ttft_s)}  (prefill {walk.prefill_tok_s:,.0f} tok/s)",
        f"decode          {walk.decode_tok_s:,.1f} tok/s  ({_seconds(walk.decode_s)} for {r.output_tokens:,} tokens)",
        f"total           {_seconds(walk.total_s)}",
        f"memory          weights {_bytes(walk.weights_bytes)} + KV cache {_bytes(walk.kv_cache_bytes)}"
        + (f" + system {_bytes(memory['system_bytes'])}" if memory["system_bytes"] else "")
        + f" of {_bytes(memory['total_bytes'])}: "
        + (f"{_bytes(memory['free_bytes'])} free" if memory["fits"] else "DOES NOT FIT"),
        "",
    ]
    # values of the model or machine written from memory, which no opened page confirmed
    lines += [f"note            {printable(note)}" for note in walk.notes] + ([""] if walk.notes else [])
    return "\n".join(lines)
