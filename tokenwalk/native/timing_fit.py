"""Fit the timing model on published llama-bench runs and cross-validate it (numpy, scipy).

What is fitted, per backend (CUDA, Metal, ROCm, Vulkan, CPU), and why:

- decode: bandwidth_efficiency (the share of the spec bandwidth the reads reach) and
  layer_overhead_s (a fixed cost per layer per step). Two numbers because the published
  runs show two effects: every chip reaches only part of its spec bandwidth, and the share
  falls when a step reads little per layer (Q4_0 against F16, the largest chips).
- prefill: compute_efficiency (the share of the FP16 figure that matrix products reach),
  one number, fitted after the decode pair (which also bounds a prefill step from below).
- "default": the same three numbers fitted on all GPU runs together, for a machine whose
  backend is unknown or has fewer than MIN_MACHINES machines.

Loss: log(predicted / measured), a robust soft-L1 (close to the median of the ratios), so
one odd run (a transcription, a broken build) does not drag a backend's numbers; structures
named "wide decode loss" fit decode's rows with a wider scale (WIDE_DECODE_SCALE).

Checked by leave-one-machine-out cross-validation: each machine is predicted by a fit
that never saw it. A machine timed on its own measurements (the article's laptop) is not
fitted here: the pure core solves its coefficients from them when it is timed
(`tokenwalk.timing.calibration`), so this file holds only what needs numpy. The pure
evaluation is `tokenwalk.timing.model`; the per-run features (roofline bytes and
operations) are taken from the core so the two cannot disagree.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from tokenwalk.physics import roofline
from tokenwalk.timing import model as timing_model
from tokenwalk.timing.llama_bench import DATA_DIR, BenchRun, chip_name, load_runs
from tokenwalk.timing.model import BOUNDS, FIT_PATH, predict_run_tok_s, rounded

MIN_MACHINES = 2  # a backend needs this many machines with runs to get a row of its own
SOFT_L1_SCALE = 0.05  # residuals (log ratio) beyond ~5 % count linearly, not squared
# A structure's "decode_loss_scale" widens that for decode alone: what is left of decode's error
# after a row is mostly whole families 10-20 % off it (Pascal, Ada), which a 5 % scale treats as
# outliers, so the row follows the backend's largest families; at 30 % each family pulls its
# weight, and a run off by a factor of two (a broken build, a transcription) still counts linearly.
WIDE_DECODE_SCALE = 0.3


# The structures `tokenwalk fit` chooses between by leave-one-family-out error (`choose`):
# by_class: rows per backend and class of device ("ROCm/discrete") where the data have
# MIN_MACHINES chips of that pair, else the backend's row; by_vendor: rows per backend and
# maker ("Vulkan/Intel") where a backend runs on several makers' chips (Vulkan: Intel,
# AMD, NVIDIA, Apple through MoltenVK); quant: a factor per weight format on the compute
# efficiency of prefill (the dequantisation cost, which kernels exist); quant_decode: one on
# the bandwidth efficiency of decode too; year: a trend of the bandwidth efficiency with the
# year the chip's family first shipped, one rate for every backend (newer families reach more
# of their spec bandwidth: Pascal below its CUDA row, Ada above); HBM: the cards whose memory is
# HBM (machines.json memory_type: A100, H100, V100, MI50 ...) get rows of their own ("CUDA/HBM")
# instead of their class's (a stream reaches a smaller share of an HBM card's bandwidth: the
# data-centre cards with GDDR, L40 and T4, decode like the discrete ones); wide decode loss: decode's
# rows fitted with WIDE_DECODE_SCALE (above). Each is kept as a candidate because the data
# could have chosen it: the comparison is in timing_fit.json (`structures_compared`). The
# vendor rows reach a machine through its `vendor` (a preset's field, the simulator's "Chip
# maker"); the published runs take it from machines.json or the machine's name.
STRUCTURES = {
    "backend": {"by_class": False, "quant": False, "quant_decode": False},
    "backend+quant": {"by_class": False, "quant": True, "quant_decode": False},
    "backend x class": {"by_class": True, "quant": False, "quant_decode": False},
    "backend x class+quant": {"by_class": True, "quant": True, "quant_decode": False},
    "backend+quant both phases": {"by_class": False, "quant": True, "quant_decode": True},
    "backend x class+quant both phases": {"by_class": True, "quant": True, "quant_decode": True},
    "backend x vendor+quant": {"by_class": False, "by_vendor": True, "quant": True, "quant_decode": False},
    "backend x vendor x class+quant": {"by_class": True, "by_vendor": True, "quant": True, "quant_decode": False},
    "backend+quant+year": {"by_class": False, "quant": True, "quant_decode": False, "year": True},
    "backend x class+quant+year": {"by_class": True, "quant": True, "quant_decode": False, "year": True},
    "backend x vendor x class+quant+year": {"by_class": True, "by_vendor": True, "quant": True, "quant_decode": False,
                                            "year": True},
    "backend x class x HBM+quant": {"by_class": True, "quant": True, "quant_decode": False, "hbm": True},
    "backend x class x HBM+quant+year": {"by_class": True, "quant": True, "quant_decode": False, "year": True,
                                         "hbm": True},
    "backend x vendor x class x HBM+quant+year": {"by_class": True, "by_vendor": True, "quant": True,
                                                  "quant_decode": False, "year": True, "hbm": True},
}
# the structures with rows per class and a year trend again, their decode rows fitted with the wide loss
STRUCTURES.update({f"{name}, wide decode loss": dict(STRUCTURES[name], decode_loss_scale=WIDE_DECODE_SCALE)
                   for name in ("backend x class+quant+year", "backend x vendor x class+quant+year",
                                "backend x vendor x class x HBM+quant+year")})
# the best of those with a trend that levels off at a fitted year (`_fitted_knee`): each of its
# fits is a dozen fits, one per year the trend could stop in (so only one such candidate: the
# same with HBM rows was compared once and lost, decode 8.1 % / 41.5 %, see the README)
STRUCTURES["backend x vendor x class+quant+year levelling off, wide decode loss"] = dict(
    STRUCTURES["backend x vendor x class+quant+year, wide decode loss"], year_levels_off=True)
# A refit must give the same file on any CPU and library release (vector widths, BLAS kernels
# and thread counts change the last bits of every sum). So each solve runs to convergence,
# not to the solver's default 1e-8 (whose stopping point moves with those bits), and a choice
# between candidates (a solver's starts, the year a trend levels off) treats costs within
# TIE_RTOL of the best as equal and keeps the first: the last bits decide nothing.
SOLVER_TOL = {"ftol": 1e-12, "xtol": 1e-12, "gtol": 1e-12}
TIE_RTOL = 1e-7
REFERENCE_QUANT = "Q4_0"  # the format whose factor is 1 (the most common in the data)
BOOTSTRAP_SAMPLES = 100  # resamples of the chip families for the parameters' uncertainty
BOOTSTRAP_SEED = 14
BAND = (10, 90)  # percentiles of the left-out speed ratios: the likely range holds 80 %


@dataclass
class Features:
    """Per-run numbers at 100 % efficiency, from the core's roofline (seconds)."""

    runs: list
    memory_s: np.ndarray  # bytes of the (mean) step / spec bandwidth
    compute_s: np.ndarray  # operations of the step / spec FP16 (0 where unknown, decode only)
    layers: np.ndarray
    tokens: np.ndarray  # tokens per step (1 for decode)
    measured_s: np.ndarray  # measured seconds per step
    decode: np.ndarray  # bool
    chips: np.ndarray  # chip name per run (`chip_name`)
    families: np.ndarray  # chip family per run (machines.json)
    classes: np.ndarray  # device class per run ("" where unknown)
    vendors: np.ndarray  # the GPU's (or CPU's) maker per run (`llama_bench.vendor_of`)
    years: np.ndarray  # the year the run's chip family first shipped (nan where unknown)
    quants: np.ndarray
    hbm: np.ndarray  # bool: the machine's memory is HBM (machines.json memory_type)


def usable(run: BenchRun) -> bool:
    """Runs the model can be fitted and checked on: a known bandwidth, and for prefill a
    known FP16 figure too."""
    if not run.machine.bandwidth_gbs:
        return False
    return run.phase == "decode" or bool(run.machine.fp16_tflops)


def features(runs: list) -> Features:
    memory, compute, layers, tokens, measured, decode = [], [], [], [], [], []
    for run in runs:
        if run.phase == "decode":
            step = roofline.decode_step(run.model, roofline.peaks(run.machine), (run.tokens - 1) / 2.0)
            tokens.append(1)
            measured.append(1.0 / run.tok_s)
        else:
            step = timing_model.prefill_step(run.model, run.machine, run.tokens, 0)
            tokens.append(run.tokens)
            measured.append(run.tokens / run.tok_s)
        memory.append(step.memory_s)
        compute.append(step.compute_s)
        layers.append(run.model.layers)
        decode.append(run.phase == "decode")
    return Features(list(runs), np.array(memory), np.array(compute), np.array(layers, float),
                    np.array(tokens, float), np.array(measured), np.array(decode, bool),
                    np.array([chip_name(r.machine.name) for r in runs]), np.array([r.family for r in runs]),
                    np.array([r.machine.device_class or "" for r in runs]),
                    np.array([r.machine.vendor or "" for r in runs]),
                    np.array([r.machine.architecture_year or np.nan for r in runs], float),
                    np.array([r.quant for r in runs]),
                    np.array([timing_model.is_hbm(r.machine.memory_type) for r in runs], bool))


def predicted_s(f: Features, idx, e_bw, e_c, overhead) -> np.ndarray:
    """The model of `tokenwalk.timing.model.step_s`, vectorised."""
    return np.maximum(f.memory_s[idx] / e_bw, f.compute_s[idx] / e_c) + f.layers[idx] * overhead


def _capped(e_bw):
    """A bandwidth efficiency after its factors, never above the bound's top (all of the spec
    sheet): `timing_model.coefficients` caps it the same way."""
    return np.minimum(e_bw, BOUNDS["bandwidth_efficiency"][1])


def separable(f: Features, idx, bw_factor: np.ndarray) -> bool:
    """Whether decode runs `idx` can tell a bandwidth efficiency from a per-layer cost: only
    if their steps read different bytes per layer (at 1e-3 apart, far above rounding). Runs
    of one model on chips of one bandwidth (the A750 and the A770M) fit a whole curve of pairs
    equally well, and which point a solver stops at is decided by the last bits."""
    per_layer = f.memory_s[idx] / bw_factor[idx] / f.layers[idx]
    return len(per_layer) > 1 and float(np.max(per_layer) / np.min(per_layer)) > 1.0 + 1e-3


def _fit_decode(f: Features, idx, bw_factor: np.ndarray, scale: float = SOFT_L1_SCALE,
                overhead_s: float | None = None) -> tuple[float, float]:
    """(bandwidth_efficiency, layer_overhead_s) of the decode runs `idx`; with `overhead_s`
    given, the per-layer cost is held at it and the efficiency alone is fitted."""
    memory, compute, layers, factor = f.memory_s[idx], f.compute_s[idx], f.layers[idx], bw_factor[idx]
    held = overhead_s is not None

    def params(p):
        return p[0], (overhead_s * 1e6 if held else p[1])

    def residuals(p):
        e, overhead_us = params(p)
        return np.log(predicted_s(f, idx, _capped(e * factor), 1.0, overhead_us * 1e-6) / f.measured_s[idx])

    def jacobian(p):
        # d log(step) / d parameter, by hand: numerical differences cost a third of the fit's time
        e, overhead_us = params(p)
        e_bw = e * factor
        capped = e_bw >= BOUNDS["bandwidth_efficiency"][1]
        e_bw = np.minimum(e_bw, BOUNDS["bandwidth_efficiency"][1])
        step = np.maximum(memory / e_bw, compute) + layers * overhead_us * 1e-6
        d_eff = np.where((memory / e_bw >= compute) & ~capped, -memory / (e_bw * e), 0.0)
        return np.column_stack([d_eff / step] if held else [d_eff / step, layers * 1e-6 / step])

    lo = [BOUNDS["bandwidth_efficiency"][0], BOUNDS["layer_overhead_s"][0] * 1e6]
    hi = [BOUNDS["bandwidth_efficiency"][1], BOUNDS["layer_overhead_s"][1] * 1e6]
    starts = ((0.8, 20.0), (0.6, 100.0), (0.95, 5.0))
    if held:
        lo, hi, starts = lo[:1], hi[:1], [s[:1] for s in starts]
    # the loss is not convex: a few starts, the first of those within TIE_RTOL of the best kept
    results = [least_squares(residuals, start, jac=jacobian, bounds=(lo, hi), loss="soft_l1", f_scale=scale, **SOLVER_TOL)
               for start in starts]
    e, overhead_us = params(results[first_within_tie([r.cost for r in results])].x)
    return float(e), float(overhead_us * 1e-6)


def _fit_prefill(f: Features, idx, e_bw: float, overhead: float, factor: np.ndarray, bw_factor: np.ndarray) -> float:
    memory_bound = f.memory_s[idx] / _capped(e_bw * bw_factor[idx])

    def residuals(p):
        return np.log(predicted_s(f, idx, _capped(e_bw * bw_factor[idx]), p[0] * factor[idx], overhead) / f.measured_s[idx])

    def jacobian(p):
        compute_bound = f.compute_s[idx] / (p[0] * factor[idx])
        step = np.maximum(memory_bound, compute_bound) + f.layers[idx] * overhead
        return np.where(compute_bound >= memory_bound, -compute_bound / (p[0] * step), 0.0)[:, None]

    lo, hi = BOUNDS["compute_efficiency"]
    result = least_squares(residuals, [0.4], jac=jacobian, bounds=([lo], [hi]), loss="soft_l1", f_scale=SOFT_L1_SCALE,
                           **SOLVER_TOL)
    return float(result.x[0])


def first_within_tie(costs: list[float], rtol: float = TIE_RTOL) -> int:
    """Index of the first cost within `rtol` (relative) of the smallest: a choice that the
    last bits of the arithmetic cannot flip."""
    best = min(costs)
    return next(i for i, cost in enumerate(costs) if cost <= best + rtol * abs(best))


def _count(f: Features, ids) -> int:
    return len(set(f.chips[ids])) if len(ids) else 0


def _row(f: Features, idx: np.ndarray, fallback: dict | None, factor: np.ndarray, bw_factor: np.ndarray,
         decode_scale: float = SOFT_L1_SCALE) -> dict:
    dec = idx[f.decode[idx]]
    pre = idx[~f.decode[idx]]
    row = {"decode_runs": int(len(dec)), "decode_machines": _count(f, dec),
           "prefill_runs": int(len(pre)), "prefill_machines": _count(f, pre)}
    if _count(f, dec) >= MIN_MACHINES or (fallback is None and len(dec)):
        if fallback is None or separable(f, dec, bw_factor):
            e_bw, overhead = _fit_decode(f, dec, bw_factor, decode_scale)
            row["decode_from"] = "fitted"
        else:  # the runs cannot tell the two apart: the per-layer cost is the broader row's
            e_bw, overhead = _fit_decode(f, dec, bw_factor, decode_scale, fallback["layer_overhead_s"])
            row["decode_from"] = f"fitted, per-layer cost from {fallback.get('name', 'default')}"
    else:
        e_bw, overhead = fallback["bandwidth_efficiency"], fallback["layer_overhead_s"]
        row["decode_from"] = fallback.get("name", "default")
    if _count(f, pre) >= MIN_MACHINES or (fallback is None and len(pre)):
        e_c = _fit_prefill(f, pre, e_bw, overhead, factor, bw_factor)
        row["prefill_from"] = "fitted"
    else:
        e_c = fallback["compute_efficiency"]
        row["prefill_from"] = fallback.get("name", "default")
    row.update(rounded(e_bw, overhead, e_c))
    return row


def _rows(f: Features, idx: np.ndarray, structure: dict, factor: np.ndarray, bw_factor: np.ndarray) -> dict:
    gpu = np.array([i for i in idx if f.runs[i].backend != "CPU"], int)
    scale = structure.get("decode_loss_scale", SOFT_L1_SCALE)
    default = _row(f, gpu, None, factor, bw_factor, scale)
    backends = {}
    for backend in sorted({f.runs[i].backend for i in idx}):
        members = np.array([i for i in idx if f.runs[i].backend == backend], int)
        row = _row(f, members, default, factor, bw_factor, scale)
        backends[backend] = row
        if structure.get("by_vendor") and len(set(f.vendors[members]) - {""}) > 1:
            for vendor in sorted(set(f.vendors[members]) - {""}):
                sub = members[f.vendors[members] == vendor]
                if max(_count(f, sub[f.decode[sub]]), _count(f, sub[~f.decode[sub]])) >= MIN_MACHINES:
                    backends[f"{backend}/{vendor}"] = _row(f, sub, dict(row, name=backend), factor, bw_factor, scale)
        if not structure["by_class"]:
            continue
        # with an HBM term, the cards with HBM make a row of their own ("CUDA/HBM") and leave their class's
        classes = np.where(f.hbm, timing_model.HBM_ROW, f.classes) if structure.get("hbm") else f.classes
        for device_class in sorted(set(classes[members]) - {""}):
            sub = members[classes[members] == device_class]
            # a row of its own only where the pair has enough chips in at least one phase
            if max(_count(f, sub[f.decode[sub]]), _count(f, sub[~f.decode[sub]])) < MIN_MACHINES:
                continue
            backends[f"{backend}/{device_class}"] = _row(f, sub, dict(row, name=backend), factor, bw_factor, scale)
    return {"default": default, "backends": backends}


def _factors(f: Features, quants: dict) -> np.ndarray:
    return np.array([quants.get(q, 1.0) for q in f.quants])


def _updated(f: Features, coeffs: dict, ids: np.ndarray, factors: dict) -> dict:
    """One round of the weight-format factors of the runs `ids`: each format run on at least
    MIN_MACHINES chips moves by the median ratio of its runs' predicted to measured time,
    then all are divided by the reference format's."""
    log_ratio = np.log(predict_s(f, coeffs, ids) / f.measured_s[ids])  # > 0: predicted slower than measured
    factors = dict(factors)
    for quant in sorted(set(f.quants[ids])):
        sel = f.quants[ids] == quant
        if _count(f, ids[sel]) >= MIN_MACHINES:
            factors[quant] = factors.get(quant, 1.0) * math.exp(float(np.median(log_ratio[sel])))
    ref = factors.get(REFERENCE_QUANT, 1.0)
    return {q: round(v / ref, 4) for q, v in sorted(factors.items())}


def year_factor(years: np.ndarray, trend: dict | None) -> np.ndarray:
    """exp(per_year x (min(year, until_year) - reference_year)), the multiplier of the
    bandwidth efficiency (1 without a trend, or for a machine whose year is unknown: it is
    taken as the reference); a trend without until_year does not level off."""
    if not trend:
        return np.ones(len(years))
    return np.exp(trend["per_year"] * _year_offset(years, trend))


def _year_offset(years: np.ndarray, trend: dict) -> np.ndarray:
    until = trend.get("until_year")
    capped = years if until is None else np.minimum(years, until)
    return np.where(np.isnan(years), 0.0, capped - trend["reference_year"])


def _updated_trend(f: Features, coeffs: dict, ids: np.ndarray, trend: dict) -> dict:
    """One round of the year trend: the rate moves by the Theil-Sen slope (robust to a few odd
    runs) of the decode runs' log(predicted / measured time) against their family's year."""
    from scipy.stats import theilslopes

    ids = ids[~np.isnan(f.years[ids])]
    log_ratio = np.log(predict_s(f, coeffs, ids) / f.measured_s[ids])
    offset = _year_offset(f.years[ids], trend)  # a trend that levels off: the years after it count as its last
    slope = float(theilslopes(log_ratio, offset)[0]) if len(set(offset)) > 1 else 0.0
    return dict(trend, per_year=round(trend["per_year"] + slope, 5))


def _structure(structure: str | dict) -> dict:
    """A structure given by its name in STRUCTURES, or already as its dict."""
    return STRUCTURES[structure] if isinstance(structure, str) else structure


def _fitted_knee(f: Features, idx: np.ndarray, structure: dict) -> dict:
    """A trend that levels off (`year_levels_off`): the year after which newer families reach
    no more of their bandwidth, chosen among the years of the runs' families (all but the
    earliest; the latest means no levelling) as the one whose fit leaves the decode runs the
    smallest soft-L1 cost at SOFT_L1_SCALE. Each candidate is a whole fit on every backend's
    rows; returns the best fit's coefficients."""
    dec = idx[f.decode[idx]]
    years = f.years[dec]
    fits, costs = [], []
    for knee in sorted({int(y) for y in years[~np.isnan(years)]})[1:]:
        coeffs = fit_coefficients(f, idx, dict(structure, knee=knee))
        z = (np.log(predict_s(f, coeffs, dec) / f.measured_s[dec]) / SOFT_L1_SCALE) ** 2
        fits.append(coeffs)
        costs.append(float(np.sum(np.sqrt(1.0 + z) - 1.0)))
    return fits[first_within_tie(costs)]  # a tie: the earliest year


def _bandwidth_factors(f: Features, bandwidth: dict, trend: dict | None) -> np.ndarray:
    return _factors(f, bandwidth) * year_factor(f.years, trend)


def fit_coefficients(f: Features, idx: np.ndarray | None = None,
                     structure: dict | str = "backend x class+quant") -> dict:
    """{"default": row, "backends": {key: row}, "quant_compute_factor": {quant: factor},
    "quant_bandwidth_factor": {quant: factor}, "year_trend": {...} or None} fitted on the
    runs `idx` (all if None). With a quant term, the factors and the rows are fitted in
    turn (three rounds): each format's factor is the median ratio of its runs' predicted to
    measured time, relative to Q4_0, over formats run on at least MIN_MACHINES chips: on the
    compute efficiency of prefill ("quant"), and on the bandwidth efficiency of decode too
    ("quant_decode": dequantisation and block layout change the share of the bandwidth a
    stream reaches). With a year term, the trend's rate is fitted in the same rounds
    (`_updated_trend`), about the median year of the runs' chip families; a trend that levels
    off ("year_levels_off") is fitted at each year it could level off in (`_fitted_knee`),
    unless the structure holds one ("knee": that year)."""
    structure = _structure(structure)
    idx = np.arange(len(f.runs)) if idx is None else np.asarray(idx)
    if structure.get("year_levels_off") and "knee" not in structure:
        return _fitted_knee(f, idx, structure)
    compute: dict = {}
    bandwidth: dict = {}
    trend = None
    if "knee" in structure:
        trend = {"per_year": 0.0, "reference_year": structure["knee"], "until_year": structure["knee"]}
    elif structure.get("year"):
        known = f.years[idx][~np.isnan(f.years[idx])]
        trend = {"per_year": 0.0, "reference_year": int(np.median(known)) if len(known) else 2020}
    coeffs = _rows(f, idx, structure, _factors(f, compute), _bandwidth_factors(f, bandwidth, trend))
    if structure["quant"] or structure.get("quant_decode") or trend is not None:
        dec, pre = idx[f.decode[idx]], idx[~f.decode[idx]]
        for _ in range(3):
            current = dict(coeffs, quant_compute_factor=compute, quant_bandwidth_factor=bandwidth, year_trend=trend)
            if trend is not None:
                trend = _updated_trend(f, current, dec, trend)
                current = dict(current, year_trend=trend)
            if structure.get("quant_decode"):
                bandwidth = _updated(f, current, dec, bandwidth)
                current = dict(current, quant_bandwidth_factor=bandwidth)
            if structure["quant"]:
                compute = _updated(f, current, pre, compute)
            coeffs = _rows(f, idx, structure, _factors(f, compute), _bandwidth_factors(f, bandwidth, trend))
    coeffs["quant_compute_factor"] = compute
    coeffs["quant_bandwidth_factor"] = bandwidth
    coeffs["year_trend"] = trend
    return coeffs


def predict_s(f: Features, coeffs: dict, idx) -> np.ndarray:
    """Seconds per step of the runs `idx`, each on its row (`timing_model.row_key`)."""
    idx = np.asarray(idx)
    out = np.empty(len(idx))
    compute = coeffs.get("quant_compute_factor", {})
    bandwidth = coeffs.get("quant_bandwidth_factor", {})
    trend = coeffs.get("year_trend")
    for k, i in enumerate(idx):
        key = timing_model.row_key(coeffs["backends"], f.runs[i].backend, f.runs[i].machine.device_class,
                                   f.runs[i].machine.vendor, f.runs[i].machine.memory_type)
        row = coeffs["backends"][key] if key is not None else coeffs["default"]
        e_c = row["compute_efficiency"] * compute.get(f.quants[i], 1.0)
        e_bw = _capped(row["bandwidth_efficiency"] * bandwidth.get(f.quants[i], 1.0) * year_factor(f.years[[i]], trend)[0])
        out[k] = predicted_s(f, np.array([i]), e_bw, e_c, row["layer_overhead_s"])[0]
    return out


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
    structure = _structure(structure)
    tasks = [(np.flatnonzero(groups == name), np.flatnonzero(groups != name), structure) for name in sorted(set(groups))]
    rows = []
    for (test, train, _), (coeffs, pred) in zip(tasks, _folds(f, tasks), strict=True):
        knee = (coeffs.get("year_trend") or {}).get("until_year")
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
    structure = _structure(structure)
    knee = (coeffs.get("year_trend") or {}).get("until_year")
    return dict(structure, knee=knee) if structure.get("year_levels_off") and knee is not None else structure


def cross_validate(f: Features, structure: str, family_rows: list | None = None) -> tuple[dict, list, list]:
    """The fit on all runs, its leave-one-family-out rows (`family_rows` when already computed)
    and its leave-one-machine-out rows (the levelling year held, `held_structure`)."""
    coeffs = fit_coefficients(f, structure=structure)
    family_rows = family_rows if family_rows is not None else leave_out(f, "family", structure)
    return coeffs, family_rows, leave_out(f, "chip", held_structure(structure, coeffs))


def knee_years(rows: list) -> dict:
    """How many left-out groups' fits levelled the trend off in each year: {"2021": 17, ...}
    ({} without such a trend)."""
    groups = {(r["family"], r["trend_until_year"]) for r in rows if r.get("trend_until_year") is not None}
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
    structure = _structure(structure)
    tasks = []
    for _ in range(samples):
        picked = rng.choice(names, size=len(names), replace=True)
        tasks.append((np.array([], int), np.concatenate([np.flatnonzero(f.families == name) for name in picked]),
                      structure))
    draws: dict = {}
    for coeffs, _ in _folds(f, tasks):
        for key, row in [("default", coeffs["default"]), *coeffs["backends"].items()]:
            for param in ("bandwidth_efficiency", "layer_overhead_s", "compute_efficiency"):
                draws.setdefault(key, {}).setdefault(param, []).append(row[param])
        for quant, factor in coeffs["quant_compute_factor"].items():
            draws.setdefault("quant_compute_factor", {}).setdefault(quant, []).append(factor)
        if coeffs.get("year_trend"):
            draws.setdefault("year_trend", {}).setdefault("per_year", []).append(coeffs["year_trend"]["per_year"])
    return {key: {param: [round(float(np.percentile(v, 10)), 7), round(float(np.percentile(v, 90)), 7)]
                  for param, v in params.items()} for key, params in draws.items()}


# --- the whole fit ---------------------------------------------------------------------------

def run_fit(data_dir: Path | None = None, samples: int = BOOTSTRAP_SAMPLES) -> tuple[dict, list]:
    """Choose the structure, fit it on every usable run, cross-validate it and bootstrap
    its parameters. Returns (fit, leave-one-family-out rows)."""
    sha256 = inputs_sha256(data_dir)  # before the minutes of fitting: an edit meanwhile is not stamped as fitted
    runs = [run for run in load_runs(data_dir) if usable(run)]
    f = features(runs)
    structure, scores, family_rows = choose(f)
    coeffs, family_rows, chip_rows = cross_validate(f, structure, family_rows)
    by_family, by_chip = validation(family_rows), validation(chip_rows)
    spread = bootstrap(f, held_structure(structure, coeffs), samples) if samples else {}
    for key, row in [("default", coeffs["default"]), *coeffs["backends"].items()]:
        if key in spread:
            row["range_p10_p90"] = spread[key]
    fit = {
        "about": (
            "Coefficients of tokenwalk's timing model (tokenwalk/timing/model.py), written by `tokenwalk fit` from "
            "the published llama-bench runs in llama-bench/benchmarks.json. A step lasts "
            "max(bytes / (bandwidth_efficiency x spec GB/s), "
            "operations / (compute_efficiency x quant_compute_factor x spec FP16 FLOP/s)) + layers x "
            "layer_overhead_s, with the row of the machine's backend on its class of device ('ROCm/discrete'; "
            "'CUDA/HBM' for a card whose memory_type is HBM, where the chosen structure has such rows), else of "
            "its backend, else 'default'; year_trend (when the chosen structure has one) multiplies bandwidth_efficiency "
            "by exp(per_year x (min(architecture_year, until_year) - reference_year)), architecture_year being the "
            "year the machine's chip family first shipped (llama-bench/families.json; a machine without one is taken "
            "at the reference; until_year, where the trend levels off, is fitted, and without it the trend does not "
            "level off). range_p10_p90: 10th-90th percentile of each parameter over fits on resampled "
            "chip families (the year the trend levels off held at until_year). Machines with their own measurements "
            "(a calibration block in their preset) are solved from them when timed, not stored here."
        ),
        "inputs": {
            "runs": len(runs),
            "decode_runs": int(f.decode.sum()), "prefill_runs": int((~f.decode).sum()),
            "machines": len({r.machine.name for r in runs}), "chips": len(set(f.chips)),
            "families": len(set(f.families)),
            "left_out": "runs without a spec bandwidth, and prefill runs without an FP16 figure",
            "sha256": sha256,
        },
        "structure": structure,
        "structures_compared": scores,
        "default": coeffs["default"],
        "backends": coeffs["backends"],
        "quant_compute_factor": coeffs["quant_compute_factor"],
        "quant_compute_factor_p10_p90": spread.get("quant_compute_factor", {}),
        "quant_bandwidth_factor": coeffs["quant_bandwidth_factor"],
        "year_trend": None if coeffs["year_trend"] is None else dict(
            coeffs["year_trend"], range_p10_p90=spread.get("year_trend", {}).get("per_year")),
        "cross_validation": dict(
            method=("leave one family out: all the chips of one family (machines.json 'family': every M2, every RDNA3 "
                    "card) predicted by a fit on the other families' runs; the likely range (decode_range, prefill_range) is "
                    "the band of these left-out speed ratios whose percentiles hold 80 % of each family's runs when "
                    "set without that family; each fold's fit is a whole fit on the other families' runs, the year a "
                    "levelling trend stops in searched again (trend_until_year: in how many folds each year won); leave "
                    "one machine out holds that year at the full fit's"),
            **by_family,
            trend_until_year=knee_years(family_rows),
            leave_one_machine_out=by_chip,
            twin_spread={phase: twin_spread(runs, phase) for phase in ("decode", "prefill")},
        ),
    }
    return fit, family_rows


# --- what the committed fit was computed from ------------------------------------------------

def _code_modules(root: str = "tokenwalk.native.timing_fit") -> list[str]:
    """The tokenwalk modules the fit runs: `root` and, transitively, every tokenwalk module
    it imports (read from their import statements, so a module is counted whether or not
    it happens to be loaded)."""
    seen, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse(Path(_module_file(name)).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.split(".")[0] == "tokenwalk"]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tokenwalk":
                # `from tokenwalk.timing import model` names a module, `from x import name` a name
                todo += [f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")]
                todo.append(node.module)
    return sorted(seen)


def _module_file(name: str) -> str:
    import importlib.util

    return importlib.util.find_spec(name).origin


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, AttributeError, ValueError):
        return False


def _code_text(path: Path) -> str:
    """A module's code without its comments, docstrings and blank lines (what runs, not what
    explains it); positions from `ast` and `tokenize`, so the text is the same on every Python."""
    import io
    import tokenize

    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            for i in range(body[0].lineno - 1, body[0].end_lineno):
                lines[i] = ""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def inputs_sha256(data_dir: Path | None = None) -> dict:
    """What a refit depends on, hashed: {"runs": sha256 of the published runs' data files
    (every .json in the llama-bench folder, by name), "code": sha256 of the fit's code (every
    tokenwalk module it runs, `_code_modules`, comments and docstrings left out)}. Recorded in
    timing_fit.json; a test compares it with the current files, so a change to either is
    caught by `make test` and refitted by `make refit-check` (seven minutes), not on every run."""
    runs = hashlib.sha256()
    for path in sorted(Path(data_dir or DATA_DIR).glob("*.json")):
        runs.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    code = hashlib.sha256()
    for name in _code_modules():
        code.update(name.encode() + b"\0" + _code_text(Path(_module_file(name))).encode() + b"\0")
    return {"runs": runs.hexdigest(), "code": code.hexdigest()}


# How far a refit may land from the committed file on another CPU, BLAS thread count or
# numpy/scipy release. The fit itself is made insensitive to the last bits (SOLVER_TOL,
# TIE_RTOL, `separable`); this margin is for a library release whose solver stops elsewhere.
# Counts, names and the chosen structure must be the same exactly.
REFIT_RTOL, REFIT_ATOL = 0.01, 0.001


def differences(refit, committed, path: str = "") -> list[str]:
    """Where two fit files differ: a float beyond REFIT_RTOL / REFIT_ATOL, as
    "path: committed -> refit (+x %)", anything else (counts, names, keys) at all."""
    if isinstance(committed, float) and isinstance(refit, (int, float)) and not isinstance(refit, bool):
        if abs(refit - committed) <= max(REFIT_RTOL * abs(committed), REFIT_ATOL):
            return []
        moved = f" ({(refit / committed - 1) * 100:+.1f} %)" if committed else ""
        return [f"{path}: {committed} -> {refit}{moved}"]
    if isinstance(committed, dict) and isinstance(refit, dict):
        if refit.keys() != committed.keys():
            return [f"{path}: keys only in the committed file {sorted(committed.keys() - refit.keys())}, "
                    f"only in the refit {sorted(refit.keys() - committed.keys())}"]
        return [d for k in committed for d in differences(refit[k], committed[k], f"{path}/{k}")]
    if isinstance(committed, list) and isinstance(refit, list) and len(refit) == len(committed):
        return [d for i, (a, b) in enumerate(zip(refit, committed, strict=True)) for d in differences(a, b, f"{path}/{i}")]
    return [] if refit == committed else [f"{path}: {committed!r} -> {refit!r}"]


def write_fit(fit: dict, path: Path | None = None) -> Path:
    path = Path(path) if path else FIT_PATH
    path.write_text(json.dumps(fit, indent=2) + "\n", encoding="utf-8")
    from tokenwalk import data_refs
    from tokenwalk.timing.model import _load

    _load.cache_clear()
    data_refs.forget_cached()
    return path


def check_core_agrees(fit: dict, runs: list, tolerance: float = 1e-9) -> float:
    """Largest relative gap between this module's vectorised prediction and the pure core's
    `predict_run_tok_s` for the full fit (they must be the same model)."""
    f = features(runs)
    coeffs = {"default": fit["default"], "backends": fit["backends"],
              "quant_compute_factor": fit.get("quant_compute_factor", {}),
              "quant_bandwidth_factor": fit.get("quant_bandwidth_factor", {}), "year_trend": fit.get("year_trend")}
    worst = 0.0
    for i, run in enumerate(runs):
        native = f.tokens[i] / predict_s(f, coeffs, [i])[0]
        core = predict_run_tok_s(run, fit)
        worst = max(worst, abs(native / core - 1.0))
    return worst


def _fp16_share(run: BenchRun) -> float:
    """Share of its FP16 figure a prefill run reaches, on the weights' operations a prompt
    step really does (the model's count, attention left out)."""
    ops_per_token = 2 * run.model.active_params - roofline.prefill_skipped_flops(run.model, run.tokens) / run.tokens
    return run.tok_s * ops_per_token / (run.machine.fp16_tflops * 1e12)


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
        reached = _fp16_share(run)
        others = [r["run"] for r in same]
        typical = float(np.median([_fp16_share(o) for o in others])) if others else math.nan
        parts.append(f"reaches {reached:.0%} of its FP16 figure ({run.machine.fp16_tflops:g} TFLOP/s), "
                     f"{row['backend']} runs typically {typical:.0%}")
    if run.test not in ("tg128", "pp512"):
        parts.append(f"{run.test}, not the usual test")
    if run.model.layers != 32:
        parts.append(f"{run.model.layers} layers")
    year = run.source_year
    if year and year <= 2024:
        parts.append(f"source from {year} (older llama.cpp build)")
    return "; ".join(parts)


def default_data_dir() -> Path:
    return DATA_DIR
