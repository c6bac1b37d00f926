"""`tokenwalk validate`: how wrong the timing model is, machine by machine."""

from __future__ import annotations

import argparse
from pathlib import Path

from tokenwalk.errors import TokenwalkError

NAME = "validate"
HELP = "leave-one-machine-out error of the timing model on published llama-bench runs"
DESCRIPTION = """\
Cross-validate the timing model: every machine of the published llama-bench runs is
predicted by a fit on all the other machines (leave one machine out; a chip's variants,
such as an 8 GB and a 16 GB M1, are left out together), and the absolute
percentage error of the predicted tokens per second is summarised for decode (tg) and
prefill (pp) separately: median and 90th percentile, overall and per backend, then the
ten worst points of each phase with what the data say about them. Prefill is checked
only where the machine has an FP16 figure. Needs numpy and scipy (the `native` extra).

example:
  tokenwalk validate
  tokenwalk validate --worst 20
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", type=Path, help="folder with benchmarks.json and models.json (default: the package's)")
    parser.add_argument("--worst", metavar="N", type=int, default=10, help="worst points to list per phase (default 10)")


def _line(label: str, s: dict) -> str:
    if not s.get("runs"):
        return f"  {label:<22}{0:>6}{0:>10}{'-':>10}{'-':>10}"
    return f"  {label:<22}{s['runs']:>6}{s['machines']:>10}{s['median_ape']:>10.1%}{s['p90_ape']:>10.1%}"


def run(args) -> int:
    try:
        from tokenwalk.native import timing_fit
    except ImportError as error:
        raise TokenwalkError(f"validate: needs numpy and scipy (pip install -e '.[native]'): {error}") from None
    runs = [r for r in timing_fit.load_runs(args.data) if timing_fit.usable(r)]
    rows = timing_fit.leave_one_machine_out(timing_fit.features(runs))
    print("Timing model, leave-one-machine-out cross-validation on published llama-bench runs")
    print("(each chip, its listed variants together, predicted by a fit that never saw it;")
    print(" error = |predicted / measured tok/s - 1|)")
    titles = {"decode": "decode (tg: one stream from an empty context)",
              "prefill": "prefill (pp: one prompt step; machines with an FP16 figure)"}
    headline = {"decode": "tg128", "prefill": "pp512"}
    for phase in ("decode", "prefill"):
        print()
        print(titles[phase])
        print(f"  {'':<22}{'runs':>6}{'chips':>10}{'median':>10}{'p90':>10}")
        tests = sorted({r["test"] for r in rows if r["phase"] == phase})
        print(_line(f"{headline[phase]}, all backends", timing_fit.summarise(rows, phase, headline[phase])))
        for backend in sorted({r["backend"] for r in rows if r["phase"] == phase}):
            print(_line(f"  {backend}", timing_fit.summarise(rows, phase, headline[phase], backend)))
        if len(tests) > 1:
            print(_line(f"all {'/'.join(tests)}", timing_fit.summarise(rows, phase)))
            for backend in sorted({r["backend"] for r in rows if r["phase"] == phase}):
                print(_line(f"  {backend}", timing_fit.summarise(rows, phase, None, backend)))
    for phase in ("decode", "prefill"):
        print()
        print(f"worst {args.worst} {phase} points (measured -> predicted tok/s, error; why)")
        worst = sorted((r for r in rows if r["phase"] == phase), key=lambda r: -r["ape"])[: args.worst]
        for r in worst:
            print(f"  {r['ape']:>6.0%}  {r['run'].label}")
            print(f"          {r['measured_tok_s']:.1f} -> {r['predicted_tok_s']:.1f}; {timing_fit.reason(r, rows)}")
    return 0
