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
cost per kernel launch (a step's launches counted from the model's architecture), and the
share of the FP16 figure prefill reaches. The file also keeps the
leave-one-machine-out error (`tokenwalk validate` prints it in full). A machine timed on
its own measurements (a calibration in its machine spec: the laptop) is not stored: its row,
printed last, is solved from the measurements whenever it is timed, so editing a
measurement needs no refit. The file records a hash of its inputs (the published runs and
the fit's code): `make test` fails when they change without a refit, and --check (what
`make refit-check` runs) refits and names every number that moved. The result is the same
with any number of cores or BLAS threads. About seven minutes on two cores. Needs numpy and
scipy (the `native` extra).

example:
  tokenwalk fit
  tokenwalk fit --check --jobs 1
  tokenwalk fit --output /some/where/timing_fit.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", type=Path, help="folder with benchmarks.json and models.json (default: the package's)")
    parser.add_argument("--output", metavar="FILE", type=Path, help="where to write the fit (default: tokenwalk/data/timing_fit.json)")
    parser.add_argument("--check", action="store_true",
                        help="refit and compare with the committed timing_fit.json instead of writing: each number that "
                             "moved, and by how much (exit status 1 if any did)")
    parser.add_argument("--jobs", metavar="N", type=int, default=None,
                        help="worker processes for the refits (default: one per core; the result does not depend on it)")


def run(args) -> int:
    try:
        from tokenwalk.timing.fit import folds, refit
    except ImportError as error:
        raise TokenwalkError(f"fit: needs numpy and scipy (pip install -e '.[native]'): {error}") from None
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.timing import calibration as timing_calibration
    from tokenwalk.timing import model as timing_model

    if args.jobs is not None and args.jobs < 1:
        raise TokenwalkError("fit: --jobs must be a whole number of at least 1")
    if args.check and args.output:
        raise TokenwalkError("fit: --check compares with the committed file and writes nothing: drop --output")
    folds.JOBS = args.jobs
    fit, _ = refit.run_fit(args.data)
    if args.check:
        moved = refit.differences(fit, timing_model.load_fit())
        for line in moved:
            print(f"moved: {line}")
        print(f"refit {'differs from' if moved else 'matches'} the committed {timing_model.FIT_PATH.name}"
              f"{f': {len(moved)} difference(s)' if moved else ''} (floats within "
              f"{refit.REFIT_RTOL:.0%} or {refit.REFIT_ATOL:g}; counts, names and the structure exactly)")
        return 1 if moved else 0
    path = refit.write_fit(fit, args.output)
    cv = fit["cross_validation"]
    print(f"wrote {path.name}: {fit['inputs']['decode_runs']} decode and {fit['inputs']['prefill_runs']} prefill runs "
          f"on {fit['inputs']['machines']} machines ({fit['inputs']['chips']} chips, "
          f"{fit['inputs']['families']} families)")
    print("structures compared by leave-one-family-out error (decode median, p90; prefill median; "
          "shortfall against the targets 7 %, 30 %, 20 %: the smallest is chosen):")
    width = max(map(len, fit["structures_compared"])) + 2
    for name, s in fit["structures_compared"].items():
        mark = "  <- chosen" if name == fit["structure"] else ""
        print(f"  {name:<{width}}{s['decode_median_ape']:>7.1%}{s['decode_p90_ape']:>8.1%}"
              f"{s['prefill_median_ape']:>8.1%}{s['shortfall']:>8.1%}{mark}")
    print("coefficients, each with its 10th-90th percentile over fits on resampled chip families:")
    print(f"{'row':<20}{'bandwidth eff.':>22}{'per launch (us)':>22}{'compute eff.':>22}")

    def cell(row: dict, param: str, scale: float = 1.0, fmt: str = ".2f") -> str:
        lo, hi = row.get("range_p10_p90", {}).get(param, [None, None])
        spread = f" ({lo * scale:{fmt}}-{hi * scale:{fmt}})" if lo is not None else ""
        return f"{row[param] * scale:{fmt}}{spread}"

    for name, row in [("default", fit["default"]), *fit["backends"].items()]:
        print(f"{name:<20}{cell(row, 'bandwidth_efficiency'):>22}{cell(row, 'launch_cost_s', 1e6, '.2f'):>22}"
              f"{cell(row, 'compute_efficiency'):>22}")
    if fit.get("quant_compute_factor"):
        spread = fit.get("quant_compute_factor_p10_p90", {})
        print("prefill compute factor by weight format (Q4_0 = 1): " + ", ".join(
            f"{q} {v:.2f}" + (f" ({spread[q][0]:.2f}-{spread[q][1]:.2f})" if q in spread else "")
            for q, v in fit["quant_compute_factor"].items()))
    for key, efficiency in (("year_trend", "bandwidth"), ("compute_year_trend", "compute")):
        trend = fit.get(key)
        if trend:
            spread = trend.get("range_p10_p90")
            print(f"{efficiency} efficiency x {timing_model.year_trend_formula(trend)}"
                  + (f", rate {spread[0]:.3f}-{spread[1]:.3f} over the resampled fits" if spread else ""))
    for name in timing_calibration.calibrated_machines():
        row = timing_model.coefficients(load_machine(name))
        print(f"{name:<20}{row.bandwidth_efficiency:>22.2f}{row.launch_cost_s * 1e6:>22.2f}"
              f"{row.compute_efficiency:>22.2f}  (from its measurements, not stored{': ' + row.note if row.note else ''})")
    print(f"leave-one-family-out median error: decode {cv['decode']['median_ape']:.1%} "
          f"(p90 {cv['decode']['p90_ape']:.1%}), prefill {cv['prefill']['median_ape']:.1%}; "
          f"likely range holds {cv['decode_coverage']:.0%} (decode), "
          f"{cv['prefill_coverage']:.0%} (prefill) (tokenwalk validate for the details)")
    return 0
