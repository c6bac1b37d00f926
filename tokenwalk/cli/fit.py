"""`tokenwalk fit`: fit the timing model on the published llama-bench runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from tokenwalk.errors import TokenwalkError

NAME = "fit"
HELP = "fit the timing model on published llama-bench runs and write data/timing_fit.json"
DESCRIPTION = """\
Fit the timing model on the published llama-bench runs (tokenwalk/data/llama-bench) and
write its coefficients to tokenwalk/data/timing_fit.json, which the pure core (and the
browser) reads. Per backend: the share of the spec bandwidth decode reaches, a fixed
cost per layer, and the share of the FP16 figure prefill reaches. The file also keeps the
leave-one-machine-out error (`tokenwalk validate` prints it in full). A machine timed on
its own measurements (a calibration in its machine spec: the laptop) is not stored: its row,
printed last, is solved from the measurements whenever it is timed, so editing a
measurement needs no refit. Needs numpy and scipy (the `native` extra).

example:
  tokenwalk fit
  tokenwalk fit --output /some/where/timing_fit.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", type=Path, help="folder with benchmarks.json and models.json (default: the package's)")
    parser.add_argument("--output", metavar="FILE", type=Path, help="where to write the fit (default: tokenwalk/data/timing_fit.json)")


def run(args) -> int:
    try:
        from tokenwalk.native import timing_fit
    except ImportError as error:
        raise TokenwalkError(f"fit: needs numpy and scipy (pip install -e '.[native]'): {error}") from None
    from tokenwalk.timing import calibration as timing_calibration
    from tokenwalk.timing import model as timing_model
    from tokenwalk.specs.machine import load_machine

    fit, _ = timing_fit.run_fit(args.data)
    path = timing_fit.write_fit(fit, args.output)
    cv = fit["cross_validation"]
    print(f"wrote {path.name}: {fit['inputs']['decode_runs']} decode and {fit['inputs']['prefill_runs']} prefill runs "
          f"on {fit['inputs']['machines']} machines")
    print(f"{'row':<12}{'bandwidth eff.':>16}{'per layer':>12}{'compute eff.':>14}")
    for name, row in [("default", fit["default"]), *fit["backends"].items()]:
        print(f"{name:<12}{row['bandwidth_efficiency']:>16.2f}{row['layer_overhead_s'] * 1e6:>9.0f} us{row['compute_efficiency']:>14.2f}")
    for name in timing_calibration.calibrated_machines():
        row = timing_model.coefficients(load_machine(name))
        print(f"{name:<12}{row.bandwidth_efficiency:>16.2f}{row.layer_overhead_s * 1e6:>9.0f} us{row.compute_efficiency:>14.2f}"
              f"  (from its measurements, not stored{': ' + row.note if row.note else ''})")
    print(f"leave-one-machine-out median error: decode tg128 {cv['decode_tg128']['median_ape']:.1%}, "
          f"prefill pp512 {cv['prefill_pp512']['median_ape']:.1%} (tokenwalk validate for the details)")
    return 0
