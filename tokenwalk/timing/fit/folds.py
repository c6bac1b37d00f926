"""The fit checked: leave-one-family-out and leave-one-machine-out cross-validation, the
choice between structures, the bootstrap of the parameters and the summaries `tokenwalk
validate` prints (numpy). Each group of runs is predicted by a fit that never saw it.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from tokenwalk.timing import model as timing_model
from tokenwalk.timing.fit.solve import (
    MIN_MACHINES,
    STRUCTURES,
    Features,
    features,
    fit_coefficients,
    predict_s,
    structure_of,
)
from tokenwalk.timing.llama_bench import BenchRun, chip_name

BOOTSTRAP_SAMPLES = 100  # resamples of the chip families for the parameters' uncertainty
BOOTSTRAP_SEED = 14
BAND = (10, 90)  # percentiles of the left-out speed ratios: the likely range holds 80 %

_FOLD_FEATURES: Features | None = None  # the runs a worker process predicts (forked with it)
JOBS: int | None = None  # worker processes for the folds (`tokenwalk fit --jobs`); None: one per core


def _fold(task: tuple) -> tuple:
    test, train, structure = task
    coeffs = fit_coefficients(_FOLD_FEATURES, train, structure=structure)
    return coeffs, predict_s(_FOLD_FEATURES, coeffs, test)


def _folds(f: Features, tasks: list) -> list:
    """`_fold` of each (test, train, structure) task, on as many processes as the machine has
    cores (each is a whole fit; they share nothing)."""
    global _FOLD_FEATURES
    _FOLD_FEATURES = f
    jobs = min(len(tasks), JOBS or os.cpu_count() or 1)
    if jobs < 2 or multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
        return [_fold(task) for task in tasks]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(_fold, tasks))


def leave_out(f: Features, by: str = "family", structure: dict | str = "backend x class+quant") -> list[dict]:
    """Each group of runs predicted by a fit on all the other groups' runs (every row of the
    fit, since the weight-format factors and the year trend are fitted on all of them).

    by="chip": one chip at a time (`llama_bench.chip_name`: the variants of one chip that
    the data list separately, 8 GB and 16 GB, a Vulkan row, together); by="family": all the
    chips of one family (machines.json: every M2, every RDNA3 card) together.

    Returns one row per run: measured and predicted tok/s, speed ratio (measured /
    predicted), absolute percentage error of the predicted speed, and the fit's row used.
    """
    groups = f.families if by == "family" else f.chips
    structure = structure_of(structure)
    tasks = [(np.flatnonzero(groups == name), np.flatnonzero(groups != name), structure) for name in sorted(set(groups))]
    return _predicted_rows(f, tasks)


def held_out(f: Features, fitted: np.ndarray, structure: dict | str) -> list[dict]:
    """The runs outside the boolean mask `fitted` (the small models' check), each chip family's
    predicted by a fit on the fitted runs of the other families: never fitted on, and never
    predicted by a fit that saw their family. Rows as `leave_out`'s."""
    structure = structure_of(structure)
    groups = f.families
    tasks = [(np.flatnonzero(~fitted & (groups == name)), np.flatnonzero(fitted & (groups != name)), structure)
             for name in sorted(set(groups[~fitted]))]
    return _predicted_rows(f, tasks)


def _predicted_rows(f: Features, tasks: list) -> list[dict]:
    """One row per test run of each (test, train, structure) task, predicted by its fold's fit."""
    rows = []
    for (test, train, _), (coeffs, pred) in zip(tasks, _folds(f, tasks), strict=True):
        knee = (coeffs.get("year_trend") or {}).get("until_year")
        compute_knee = (coeffs.get("compute_year_trend") or {}).get("until_year")
        for i, p in zip(test, pred, strict=True):
            run = f.runs[i]
            measured = run.tok_s
            predicted = f.tokens[i] / p
            key = timing_model.row_key(coeffs["backends"], run.backend, run.machine.device_class,
                                     run.machine.vendor, run.machine.memory_type) or "default"
            same = [j for j in train if f.runs[j].backend == run.backend and f.runs[j].phase == run.phase]
            rows.append({
                "index": run.index, "run": run, "phase": run.phase, "test": run.test, "backend": run.backend,
                "machine": str(f.chips[i]), "family": str(f.families[i]), "device_class": str(f.classes[i]),
                "measured_tok_s": measured, "predicted_tok_s": predicted,
                "speed_ratio": measured / predicted, "ape": abs(predicted / measured - 1.0), "row": key,
                "backend_machines_in_fit": len({str(f.chips[j]) for j in same}), "trend_until_year": knee,
                "compute_trend_until_year": compute_knee,
            })
    return rows


def leave_one_machine_out(f: Features, structure: dict | str = "backend x class+quant") -> list[dict]:
    """`leave_out` by chip."""
    return leave_out(f, "chip", structure)


def summarise(rows: list, phase: str, test: str | None = None, backend: str | None = None,
              device_class: str | None = None) -> dict:
    sel = [r for r in rows if r["phase"] == phase and (test is None or r["test"] == test)
           and (backend is None or r["backend"] == backend)
           and (device_class is None or r["device_class"] == device_class)]
    if not sel:
        return {"runs": 0, "machines": 0}
    ape = np.array([r["ape"] for r in sel])
    ratio = np.array([r["speed_ratio"] for r in sel])
    return {
        "runs": len(sel), "machines": len({r["machine"] for r in sel}), "families": len({r["family"] for r in sel}),
        "median_ape": round(float(np.median(ape)), 4), "p90_ape": round(float(np.percentile(ape, 90)), 4),
        "speed_ratio_p10": round(float(np.percentile(ratio, BAND[0])), 4),
        "speed_ratio_p90": round(float(np.percentile(ratio, BAND[1])), 4),
    }


def coverage(rows: list, phase: str, band: tuple = BAND) -> float:
    """Share of the left-out runs of `phase` inside the likely range, the range itself taken
    without their family: each family's runs are checked against the `band` percentiles of
    the other families' left-out speed ratios, so no run helps set the range it is checked on."""
    sel = [r for r in rows if r["phase"] == phase]
    inside = 0
    for r in sel:
        others = np.array([o["speed_ratio"] for o in sel if o["family"] != r["family"]])
        low, high = np.percentile(others, band[0]), np.percentile(others, band[1])
        inside += low <= r["speed_ratio"] <= high
    return round(inside / len(sel), 4) if sel else 0.0


def calibrated_band(rows: list, phase: str, share: float = 0.80) -> tuple[float, float]:
    """The narrowest symmetric percentiles (q, 100 - q), q from 10 down in steps of 0.5,
    whose `coverage` reaches `share`: families cluster, so the 10th-90th percentile of all
    left-out runs holds fewer than 80 % of a new family's runs."""
    q = float(BAND[0])
    while q > 0.5 and coverage(rows, phase, (q, 100 - q)) < share:
        q -= 0.5
    return q, 100 - q


def validation(rows: list) -> dict:
    """The summary `tokenwalk validate` prints and timing_fit.json keeps, for one leave-out."""
    out = {}
    for phase, headline in (("decode", "tg128"), ("prefill", "pp512")):
        sel = [r for r in rows if r["phase"] == phase]
        out[phase] = summarise(rows, phase)
        out[f"{phase}_{headline}"] = summarise(rows, phase, headline)
        out[f"{phase}_by_backend"] = {b: summarise(rows, phase, None, b) for b in sorted({r["backend"] for r in sel})}
        out[f"{phase}_by_device_class"] = {c: summarise(rows, phase, None, None, c)
                                           for c in sorted({r["device_class"] for r in sel})}
        out[f"{phase}_coverage_p10_p90"] = coverage(rows, phase)
        band = calibrated_band(rows, phase)
        ratios = np.array([r["speed_ratio"] for r in sel])
        out[f"{phase}_range"] = {
            "percentiles": list(band), "coverage": coverage(rows, phase, band),
            "speed_ratio_low": round(float(np.percentile(ratios, band[0])), 4),
            "speed_ratio_high": round(float(np.percentile(ratios, band[1])), 4)}
        out[f"{phase}_coverage"] = out[f"{phase}_range"]["coverage"]
    return out


def small_model_check(runs: list, small_runs: list, structure: dict | str) -> dict:
    """The small models' check: `small_runs` (benchmarks-small.json's, never fitted) predicted
    family by family by fits on `runs` without that family (`held_out`). {"decode_small_models",
    "prefill_small_models"}: `summarise` of each phase; "<phase>_small_models_by_class": the
    same per class of device that has runs ({"discrete": ..., "integrated": ...}: a graphics
    card misses differently from a chip sharing system memory); rows under "rows"."""
    f = features(list(runs) + list(small_runs))
    fitted = np.arange(len(runs) + len(small_runs)) < len(runs)
    rows = held_out(f, fitted, structure)
    out = {"rows": rows}
    for phase in ("decode", "prefill"):
        out[f"{phase}_small_models"] = summarise(rows, phase)
        classes = sorted({r["device_class"] for r in rows if r["phase"] == phase} - {""})
        out[f"{phase}_small_models_by_class"] = {c: summarise(rows, phase, device_class=c) for c in classes}
    return out


def twin_key(run: BenchRun) -> tuple:
    """Everything the model is told about a run: its backend, chip family (and with it the
    maker and the year), class of device, memory type, spec bandwidth, for prefill the FP16
    figure too, and the model, format and test. Two runs with one key are the same prediction."""
    m = run.machine
    return (run.phase, run.backend, run.family, m.device_class, m.vendor, m.memory_type, m.bandwidth_gbs,
            m.fp16_tflops if run.phase == "prefill" else None, run.model.name, run.quant, run.test)


def twin_spread(runs: list, phase: str) -> dict:
    """The error a spec-sheet model cannot go below on these data: runs of different chips
    the model is told the same things about (`twin_key`: the RTX 2060 SUPER and the 2070 SUPER,
    Turing cards of 448 GB/s under CUDA, one model, format and test). The best such a model can
    do is the group's mean speed; each run's error is taken against it (log speeds, a chip's
    runs averaged first; each deviation scaled by sqrt(n / (n - 1)) for a group of n chips,
    since the mean is taken with the run itself). A floor under the leave-one-family-out
    errors, which add not knowing the family on top. Returns {"runs", "chips", "groups",
    "median_ape", "p90_ape"} ({"runs": 0} without two chips in any group)."""
    groups: dict = {}
    for run in runs:
        if run.phase == phase:
            groups.setdefault(twin_key(run), {}).setdefault(chip_name(run.machine.name), []).append(math.log(run.tok_s))
    apes, chips, used = [], 0, 0
    for members in groups.values():
        n = len(members)
        if n < 2:
            continue
        used, chips = used + 1, chips + n
        mean = float(np.mean([np.mean(logs) for logs in members.values()]))
        apes += [abs(math.expm1((mean - x) * math.sqrt(n / (n - 1)))) for logs in members.values() for x in logs]
    if not apes:
        return {"runs": 0}
    return {"runs": len(apes), "chips": chips, "groups": used,
            "median_ape": round(float(np.median(apes)), 4), "p90_ape": round(float(np.percentile(apes, 90)), 4)}


def score(summary: dict) -> float:
    """Median error of decode and prefill, and a quarter of decode's p90: `choose`'s tie-break."""
    return summary["decode"]["median_ape"] + summary["prefill"]["median_ape"] + summary["decode"]["p90_ape"] / 4


def shortfall(summary: dict) -> float:
    """How far a structure misses the targets (timing_model.TARGETS), summed over the three
    errors: 0 when it meets them all. A structure that lowers an error already below its
    target earns nothing for it, so prefill, within its target, cannot buy a structure that
    misses decode's by more."""
    return sum(max(0.0, summary[key.split("_", 1)[0]][key.split("_", 1)[1]] - target)
               for key, target in timing_model.TARGETS.items())


def choose(f: Features) -> tuple[str, dict, list]:
    """The structure with the smallest leave-one-family-out `shortfall` against the targets
    (ties: the smallest `score`), every structure's errors and the chosen one's left-out rows."""
    scores, rows = {}, {}
    for name in STRUCTURES:
        rows[name] = leave_out(f, "family", name)
        summary = validation(rows[name])
        scores[name] = {"shortfall": round(shortfall(summary), 4), "score": round(score(summary), 4),
                        "decode_median_ape": summary["decode"]["median_ape"],
                        "decode_p90_ape": summary["decode"]["p90_ape"],
                        "prefill_median_ape": summary["prefill"]["median_ape"]}
    chosen = min(scores, key=lambda name: (scores[name]["shortfall"], scores[name]["score"]))
    return chosen, scores, rows[chosen]


def held_structure(structure: str | dict, coeffs: dict) -> dict:
    """The structure with the year its trend levels off held at the one `coeffs` (the fit on
    all runs) found, for the checks that refit hundreds of times (leave one machine out, the
    bootstrap): searching it again in each (a dozen fits apiece) would add about 25 minutes
    on two cores. Leave one family out searches it again in each fold (`leave_out` on the
    structure itself)."""
    structure = structure_of(structure)
    knee = (coeffs.get("year_trend") or {}).get("until_year")
    compute_knee = (coeffs.get("compute_year_trend") or {}).get("until_year")
    if structure.get("compute_year") and compute_knee is not None:
        structure = dict(structure, compute_knee=compute_knee)
    return dict(structure, knee=knee) if structure.get("year_levels_off") and knee is not None else structure


def cross_validate(f: Features, structure: str, family_rows: list | None = None) -> tuple[dict, list, list]:
    """The fit on all runs, its leave-one-family-out rows (`family_rows` when already computed)
    and its leave-one-machine-out rows (the levelling year held, `held_structure`)."""
    coeffs = fit_coefficients(f, structure=structure)
    family_rows = family_rows if family_rows is not None else leave_out(f, "family", structure)
    return coeffs, family_rows, leave_out(f, "chip", held_structure(structure, coeffs))


def knee_years(rows: list, key: str = "trend_until_year") -> dict:
    """How many left-out groups' fits levelled the trend off in each year: {"2021": 17, ...}
    ({} without such a trend); key "compute_trend_until_year": the compute efficiency's trend."""
    groups = {(r["family"], r[key]) for r in rows if r.get(key) is not None}
    counts: dict = {}
    for _, year in groups:
        counts[str(year)] = counts.get(str(year), 0) + 1
    return dict(sorted(counts.items()))


def bootstrap(f: Features, structure: str | dict, samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> dict:
    """The 10th and 90th percentiles of each fitted parameter over fits on resampled chip
    families (families drawn with replacement, each with all its runs): {row: {param: [lo, hi]}}
    and {"quant_compute_factor": {quant: [lo, hi]}}. A row missing from a resample (its
    backend drawn without enough chips) is left out of that resample."""
    rng = np.random.default_rng(seed)
    names = np.array(sorted(set(f.families)))
    structure = structure_of(structure)
    tasks = []
    for _ in range(samples):
        picked = rng.choice(names, size=len(names), replace=True)
        tasks.append((np.array([], int), np.concatenate([np.flatnonzero(f.families == name) for name in picked]),
                      structure))
    draws: dict = {}
    for coeffs, _ in _folds(f, tasks):
        for key, row in [("default", coeffs["default"]), *coeffs["backends"].items()]:
            for param in ("bandwidth_efficiency", "launch_cost_s", "compute_efficiency"):
                draws.setdefault(key, {}).setdefault(param, []).append(row[param])
        for quant, factor in coeffs["quant_compute_factor"].items():
            draws.setdefault("quant_compute_factor", {}).setdefault(quant, []).append(factor)
        for trend in ("year_trend", "compute_year_trend"):
            if coeffs.get(trend):
                draws.setdefault(trend, {}).setdefault("per_year", []).append(coeffs[trend]["per_year"])
    return {key: {param: [round(float(np.percentile(v, 10)), 9), round(float(np.percentile(v, 90)), 9)]
                  for param, v in params.items()} for key, params in draws.items()}


def reason(row: dict, rows: list) -> str:
    """Why a point is far off, from what the data say about it."""
    run: BenchRun = row["run"]
    same = [r for r in rows if r["backend"] == row["backend"] and r["phase"] == row["phase"]
            and r["machine"] != row["machine"]]
    parts = []
    if row["row"] == "default" or row["backend_machines_in_fit"] < MIN_MACHINES:
        parts.append(f"only {row['backend_machines_in_fit']} other {row['backend']} machine(s): default coefficients")
    if run.phase == "decode":
        share = run.bandwidth_share
        typical = float(np.median([r["run"].bandwidth_share for r in same])) if same else math.nan
        parts.append(f"reaches {share:.0%} of spec bandwidth, {row['backend']} runs typically {typical:.0%}")
    else:
        reached = run.compute_share
        others = [r["run"] for r in same]
        typical = float(np.median([o.compute_share for o in others])) if others else math.nan
        figure = "its cores' FP32 vector peak" if run.backend == "CPU" else "its FP16 figure"
        parts.append(f"reaches {reached:.0%} of {figure} ({run.machine.fp16_tflops:.4g} TFLOP/s), "
                     f"{row['backend']} runs typically {typical:.0%}")
    if run.test not in ("tg128", "pp512"):
        parts.append(f"{run.test}, not the usual test")
    if run.model.layers != 32:
        parts.append(f"{run.model.layers} layers")
    year = run.source_year
    if year and year <= 2024:
        parts.append(f"source from {year} (older llama.cpp build)")
    return "; ".join(parts)
