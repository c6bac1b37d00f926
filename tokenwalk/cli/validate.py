"""`tokenwalk validate`: how wrong the timing model is on machines it has not seen."""

from __future__ import annotations

import argparse
from pathlib import Path

from tokenwalk.errors import TokenwalkError
from tokenwalk.timing import model as timing_model
from tokenwalk.timing.llama_bench import chip_name, every_published_run, is_small_model_run
from tokenwalk.timing.model import SMALL_MODEL_TARGETS, TARGETS

NAME = "validate"
HELP = ("leave-one-family-out and leave-one-machine-out error of the timing model "
        "on published llama-bench runs")
DESCRIPTION = """\
Cross-validate the timing model two ways: leave one family out (all the chips of one
family, machines.json's `family`: every M2, every RDNA3 card, predicted by a fit on the
other families: what a machine the model has never seen can expect) and leave one machine
out (each chip, its listed variants such as an 8 GB and a 16 GB M1 together). With
--summary, only the leave-one-family-out headline that `tokenwalk fit` recorded in
timing_fit.json, each number beside its target (fast: nothing is refitted; the README
quotes this output). For decode
(tg) and prefill (pp) separately: the median and 90th percentile of the absolute
percentage error of the predicted tokens per second, overall, by backend and by device
class, and the coverage of the likely range (the share of left-out runs inside the
10th-90th percentile band of the other families' left-out errors: 80 % if the range
holds). Then the worst points of each phase with what the data say about them. Prefill
is checked only where the machine has an FP16 figure. The structure is the one
`tokenwalk fit` chose (timing_fit.json), or --structure (any of the candidates in
timing_fit.json's structures_compared). Needs numpy and scipy, but for --summary.

example:
  tokenwalk validate
  tokenwalk validate --structure backend --worst 20
  tokenwalk validate --summary
"""

COVERAGE_TARGET = (0.75, 0.85)  # the 80 % likely range should hold this share of left-out runs


def summary_lines(s: dict) -> list[str]:
    """The headline of `unseen_machine_summary` as text, each number beside its target."""
    def pc(share: float, decimals: int = 1) -> str:
        return f"{share * 100:.{decimals}f} %"

    def mark(ok: bool) -> str:
        return "met" if ok else "not met"

    lo, hi = COVERAGE_TARGET
    return [
        f"Timing model ({s['structure']}) on chip families it was not fitted on "
        f"(each of {s['families']} families left out in turn):",
        f"  decode   {s['decode_runs']:>4} runs: median error {pc(s['decode_median_ape'])} (target 7 %, "
        f"{mark(s['decode_median_ape'] <= TARGETS['decode_median_ape'])}), "
        f"p90 {pc(s['decode_p90_ape'])} (target 30 %, {mark(s['decode_p90_ape'] <= TARGETS['decode_p90_ape'])})",
        f"  prefill  {s['prefill_runs']:>4} runs: median error {pc(s['prefill_median_ape'])} (target 20 %, "
        f"{mark(s['prefill_median_ape'] <= TARGETS['prefill_median_ape'])}), p90 {pc(s['prefill_p90_ape'])}",
        f"  80 % likely range holds {pc(s['decode_coverage'], 0)} of decode runs, {pc(s['prefill_coverage'], 0)} of "
        f"prefill runs (target 75-85 %, "
        f"{mark(all(lo <= s[k] <= hi for k in ('decode_coverage', 'prefill_coverage')))})",
    ] + _small_lines(s) + _trend_line(s.get("year_trend"), s.get("trend_until_year")) + _trend_line(
        s.get("compute_year_trend"), s.get("compute_trend_until_year"), "compute") + _twin_line(
        s.get("decode_twin_spread"))


def _small_lines(s: dict) -> list[str]:
    """The small models' check (benchmarks-small.json, 0.1B-8B), each number beside its target."""
    lines = []
    for phase in ("decode", "prefill"):
        v = s.get(f"{phase}_small_models")
        if not v or not v.get("runs"):
            continue
        median, p90 = (SMALL_MODEL_TARGETS[f"{phase}_{k}_ape"] for k in ("median", "p90"))
        lines.append(
            f"  small models, {phase}: {v['runs']} runs of 0.1B-8B models on {v['machines']} machines: median "
            f"{v['median_ape'] * 100:.1f} % (target {median * 100:.0f} %, {'met' if v['median_ape'] <= median else 'not met'}), "
            f"p90 {v['p90_ape'] * 100:.1f} % (target {p90 * 100:.0f} %, {'met' if v['p90_ape'] <= p90 else 'not met'})")
        by_class = s.get(f"{phase}_small_models_by_class") or {}
        if len(by_class) > 1:  # where the misses sit: graphics cards apart from chips sharing system memory
            lines.append("    by class: " + "; ".join(
                f"{name} {c['runs']} runs, median {c['median_ape'] * 100:.1f} %, p90 {c['p90_ape'] * 100:.1f} %"
                for name, c in by_class.items() if c.get("runs")))
    return lines


def _twin_line(twins: dict | None) -> list[str]:
    """Decode's floor on the data: how far cards the model cannot tell apart are from their group's mean."""
    if not twins or not twins.get("runs"):
        return []
    return [f"  floor: {twins['runs']} decode runs of {twins['chips']} cards the model is told the same things about "
            f"({twins['groups']} groups) sit a median {twins['median_ape'] * 100:.1f} % (p90 "
            f"{twins['p90_ape'] * 100:.1f} %) from their group's mean speed"]


def _trend_line(trend: dict | None, until_counts: dict | None = None, efficiency: str = "bandwidth") -> list[str]:
    """The fitted year trend, its rate's 10th-90th percentile over resampled families and,
    where it levels off, in how many left-out families' fits its year won."""
    if not trend:
        return []
    spread = trend.get("range_p10_p90")
    band = f"; rate {spread[0]:.3f}-{spread[1]:.3f} over resampled families (10-90 %)" if spread else ""
    if trend.get("until_year") is not None and until_counts:
        won = until_counts.get(str(trend["until_year"]), 0)
        band += f"; levels off in {trend['until_year']} in {won} of {sum(until_counts.values())} left-out fits"
    return [f"  year trend: {efficiency} efficiency x {timing_model.year_trend_formula(trend)}{band}"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR", type=Path, help="folder with benchmarks.json and models.json (default: the package's)")
    parser.add_argument("--worst", metavar="N", type=int, default=10, help="worst points to list per phase (default 10)")
    parser.add_argument("--structure", metavar="NAME", help="model structure to validate (default: the fit's; "
                        "see timing_fit.json's structures_compared for the names)")
    parser.add_argument("--summary", action="store_true",
                        help="print only the leave-one-family-out headline the fit recorded (no refit; what the README quotes)")


def _line(label: str, s: dict) -> str:
    if not s.get("runs"):
        return f"  {label:<24}{0:>6}{0:>7}{0:>7}{'-':>9}{'-':>9}"
    return (f"  {label:<24}{s['runs']:>6}{s['machines']:>7}{s.get('families', 0):>7}"
            f"{s['median_ape']:>9.1%}{s['p90_ape']:>9.1%}")


def print_validation(title: str, v: dict) -> None:
    print(title)
    for phase, headline in (("decode", "tg128"), ("prefill", "pp512")):
        print(f"  {phase}{'':<18}{'runs':>6}{'chips':>7}{'famil.':>7}{'median':>9}{'p90':>9}")
        print(_line(f"all {phase} tests", v[phase]))
        print(_line(headline, v[f"{phase}_{headline}"]))
        if v.get(f"{phase}_small_models"):
            print(_line("small models (0.1B-8B)", v[f"{phase}_small_models"]))
        for backend, s in v[f"{phase}_by_backend"].items():
            print(_line(f"  {backend}", s))
        for device_class, s in v[f"{phase}_by_device_class"].items():
            print(_line(f"  {device_class or 'class unknown'}", s))
        band = v[f"{phase}_range"]
        print(f"  likely range ({phase}): {v[f'{phase}_coverage']:.0%} of left-out runs inside (stated: 80 %; "
              f"percentiles {band['percentiles'][0]:g}-{band['percentiles'][1]:g} of the left-out errors; "
              f"the 10-90 band would hold {v[f'{phase}_coverage_p10_p90']:.0%})")


def size_check_lines() -> list[str]:
    """The build machine's size checks (`tokenwalk.timing.size_check`), each model beside the
    targets: on the engine's measurements, then on llama.cpp's own llama-bench runs; or one
    line each saying why it cannot run."""
    from tokenwalk.timing import size_check

    t = size_check.TARGETS
    targets = f"targets: decode within {t['decode_ape'] * 100:.0f} %, prefill within {t['prefill_ape'] * 100:.0f} %"
    lines = []
    for title, check in (("Size check on the build machine (each model predicted from the engine's measurements of "
                          f"the other two; {targets}):", size_check.leave_one_model_out),
                         ("The same with llama.cpp's kernels (llama-bench's tg128 and pp512 on the build machine, "
                          f"{size_check.LLAMA_BENCH_FILE}; {targets}):", size_check.llama_bench_leave_one_model_out)):
        try:
            rows = check()
        except TokenwalkError as error:
            lines.append(f"{title.split(' (')[0]}: not run: {error}")
            continue
        lines.append(title)
        for r in rows:
            ok = r.decode_ape <= t["decode_ape"] and r.prefill_ape <= t["prefill_ape"]
            lines.append(f"  {r.left_out:<20} decode {r.decode_measured:.1f} -> {r.decode_predicted:.1f} tok/s "
                         f"({r.decode_ape * 100:.1f} %), prefill {r.prefill_measured:.1f} -> {r.prefill_predicted:.1f} tok/s "
                         f"({r.prefill_ape * 100:.1f} %): {'met' if ok else 'not met'}")
    return lines


def shape_check_lines() -> list[str]:
    """The prefill shape's check (`tokenwalk.timing.shape_check`): each published dense/MoE pair's
    MoE prefill predicted from its dense one with the other pairs' rows_half, and without the
    shape; or one line saying why it cannot run."""
    from tokenwalk.timing import shape_check

    title = "Prefill by shape (data/prefill_shape.json): each pair's MoE prefill from its dense one"
    try:
        rows = shape_check.held_out()
    except TokenwalkError as error:
        return [f"{title}: not run: {error}"]
    lines = [f"{title}, with the other pairs' rows_half (what a backend without a pair gets) and without the shape:"]
    for r in rows:
        lines.append(f"  {r.pair:<11} {r.moe_measured_tok_s:.0f} tok/s measured (rows_half {r.rows_half:.0f}); "
                     f"with {r.others_rows_half:.0f}: {r.moe_from_others_tok_s:.0f} ({r.others_ape * 100:.0f} %); "
                     f"without: {r.moe_without_shape_tok_s:.0f} ({r.without_shape_ape * 100:.0f} %)")
    return lines


def run(args) -> int:
    if args.summary:
        print("\n".join(summary_lines(timing_model.unseen_machine_summary()) + size_check_lines()
                        + shape_check_lines()))
        return 0
    try:
        from tokenwalk.timing.fit import folds, solve
    except ImportError as error:
        raise TokenwalkError(f"validate: needs numpy and scipy (pip install -e '.[native]'): {error}") from None

    structure = args.structure or timing_model.load_fit().get("structure", "backend")
    if structure not in solve.STRUCTURES:
        raise TokenwalkError(f"validate: --structure must be one of {', '.join(solve.STRUCTURES)}")
    everything = every_published_run(args.data)
    runs = [r for r in everything if solve.usable(r) and not is_small_model_run(r)]
    outside = [r for r in everything if r.out_of_domain]
    f = solve.features(runs)
    _, family_rows, chip_rows = folds.cross_validate(f, structure)
    small = folds.small_model_check(runs, [r for r in everything if solve.usable(r) and is_small_model_run(r)], structure)
    print(f"Timing model ({structure}), cross-validated on published llama-bench runs")
    print("(error = |predicted / measured tok/s - 1|; each group predicted by a fit that never saw it)")
    print()
    print_validation("leave one family out (all the chips of a family together)",
                     {**folds.validation(family_rows), **{k: v for k, v in small.items() if k != "rows"}})
    print()
    print_validation("leave one machine out (each chip, its variants together)", folds.validation(chip_rows))
    print()
    print("small models (0.1B-8B, benchmarks-small.json): never fitted, each family predicted by a fit without it")
    for r in sorted(small["rows"], key=lambda r: -r["ape"]):
        print(f"  {r['ape']:>6.0%}  {r['run'].label}  [{r['family']}; row {r['row']}]  "
              f"{r['measured_tok_s']:.1f} -> {r['predicted_tok_s']:.1f}")
    if outside:
        print()
        print(f"not predicted: {len(outside)} runs the machine's spec cannot describe, for these reasons:")
        reasons: dict = {}
        for run in outside:
            reasons.setdefault(run.out_of_domain, []).append(run)
        for why, runs_of in reasons.items():
            names = sorted({chip_name(r.machine.name) for r in runs_of})
            print(f"  {len(runs_of)} run{'s' * (len(runs_of) != 1)} on {', '.join(names)}: {why}")
    print()
    print("twins: runs of different cards the model is told the same things about (family, class, maker, memory,")
    print("bandwidth, FP16 figure for prefill, model, format, test), each against its group's mean speed")
    for phase in ("decode", "prefill"):
        t = folds.twin_spread(runs, phase)
        groups = t.get("groups", 0)
        print(f"  {phase:<8}{t['runs']:>4} runs, {t.get('chips', 0)} cards in {groups} group{'s' * (groups != 1)}"
              + (f": median {t['median_ape']:.1%}, p90 {t['p90_ape']:.1%}" if t["runs"] else ""))
    for phase in ("decode", "prefill"):
        print()
        print(f"worst {args.worst} {phase} points, family left out (measured -> predicted tok/s, error; why)")
        worst = sorted((r for r in family_rows if r["phase"] == phase), key=lambda r: -r["ape"])[: args.worst]
        for r in worst:
            print(f"  {r['ape']:>6.0%}  {r['run'].label}  [{r['family']}, {r['device_class'] or '?'}; row {r['row']}]")
            why = folds.reason(r, family_rows)
            print(f"          {r['measured_tok_s']:.1f} -> {r['predicted_tok_s']:.1f}; {why}")
    return 0
