"""The timing model's coefficients fitted on published llama-bench runs (numpy, scipy).

What is fitted, per backend (CUDA, Metal, ROCm, Vulkan, CPU), and why:

- decode: bandwidth_efficiency (the share of the spec bandwidth the reads reach) and
  launch_cost_s (a fixed cost per kernel launch, times the launches llama.cpp's graph holds
  for the run's model: `tokenwalk.physics.launches`; on a GPU backend from
  GPU_LAUNCH_FLOOR_S up, `launch_bounds`). Two numbers because the published
  runs show two effects: every chip reaches only part of its spec bandwidth, and the share
  falls when a step reads little per launch (Q4_0 against F16, the largest chips).
- prefill: compute_efficiency (the share of the FP16 figure that matrix products reach),
  one number, fitted after the decode pair (which also bounds a prefill step from below).
- "default": the same three numbers fitted on all GPU runs together, for a machine whose
  backend is unknown or has fewer than MIN_MACHINES machines.

Loss: log(predicted / measured), a robust soft-L1 (close to the median of the ratios), so
one odd run (a transcription, a broken build) does not drag a backend's numbers; structures
named "wide decode loss" fit decode's rows with a wider scale (WIDE_DECODE_SCALE). The
per-run features (roofline bytes and operations) are taken from the core so the two cannot
disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from tokenwalk.physics import roofline
from tokenwalk.physics.launches import decode_launches
from tokenwalk.timing import model as timing_model
from tokenwalk.timing.llama_bench import BenchRun, chip_name
from tokenwalk.timing.model import BOUNDS, launch_bounds, rounded

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
# The same, with a second trend that levels off: the compute efficiency of prefill with the
# chip family's year (`_fitted_compute_knee`). Matrix products reach a larger share of the FP16
# figure on newer families, up to a year after which they level off again: llama.cpp turns its
# matrix paths on by generation (ggml-cuda/common.cuh: TURING_MMA_AVAILABLE from Turing,
# AMPERE_MMA_AVAILABLE and CP_ASYNC_AVAILABLE from Ampere), so older families run slower
# paths; the left-out Volta and Turing cards prefill at 0.5-0.8 of what
# the rows fitted on newer families predict. Fitted like the bandwidth's trend: a rate (Theil-Sen
# over the prefill runs) and the year it levels off (the year whose fit leaves the prefill runs
# the smallest cost); a CPU is taken at the reference (`timing_model.trend_year`).
STRUCTURES["backend x vendor x class+quant+year levelling off, wide decode loss, compute trend"] = dict(
    STRUCTURES["backend x vendor x class+quant+year levelling off, wide decode loss"], compute_year=True)
# A refit must give the same file on any CPU and library release (vector widths, BLAS kernels
# and thread counts change the last bits of every sum). So each solve runs to convergence,
# not to the solver's default 1e-8 (whose stopping point moves with those bits), and a choice
# between candidates (a solver's starts, the year a trend levels off) treats costs within
# TIE_RTOL of the best as equal and keeps the first: the last bits decide nothing.
SOLVER_TOL = {"ftol": 1e-12, "xtol": 1e-12, "gtol": 1e-12}
TIE_RTOL = 1e-7
REFERENCE_QUANT = "Q4_0"  # the format whose factor is 1 (the most common in the data)


@dataclass
class Features:
    """Per-run numbers at 100 % efficiency, from the core's roofline (seconds)."""

    runs: list
    memory_s: np.ndarray  # bytes of the (mean) step / spec bandwidth
    compute_s: np.ndarray  # operations of the step / spec FP16 (0 where unknown, decode only)
    launches: np.ndarray  # kernel launches of one step of the run's model
    tokens: np.ndarray  # tokens per step (1 for decode)
    measured_s: np.ndarray  # measured seconds per step
    decode: np.ndarray  # bool
    chips: np.ndarray  # chip name per run (`chip_name`)
    families: np.ndarray  # chip family per run (machines.json)
    classes: np.ndarray  # device class per run ("" where unknown)
    vendors: np.ndarray  # the GPU's (or CPU's) maker per run (`llama_bench.vendor_of`)
    years: np.ndarray  # the year the run's chip family first shipped (nan where unknown, and on a CPU: `trend_year`)
    quants: np.ndarray
    hbm: np.ndarray  # bool: the machine's memory is HBM (machines.json memory_type)


def usable(run: BenchRun) -> bool:
    """Runs the model can be fitted and checked on: a known bandwidth, and for prefill a
    known compute figure too (FP16; a CPU's from its cores, `tokenwalk.specs.cpu`), on a
    machine the spec fields describe (not `out_of_domain`)."""
    if not run.machine.bandwidth_gbs or run.out_of_domain:
        return False
    return run.phase == "decode" or bool(run.machine.fp16_tflops)


def features(runs: list) -> Features:
    memory, compute, launches, tokens, measured, decode = [], [], [], [], [], []
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
        launches.append(decode_launches(run.model).per_step)
        decode.append(run.phase == "decode")
    return Features(list(runs), np.array(memory), np.array(compute), np.array(launches, float),
                    np.array(tokens, float), np.array(measured), np.array(decode, bool),
                    np.array([chip_name(r.machine.name) for r in runs]), np.array([r.family for r in runs]),
                    np.array([r.machine.device_class or "" for r in runs]),
                    np.array([r.machine.vendor or "" for r in runs]),
                    np.array([timing_model.trend_year(r.machine) or np.nan for r in runs], float),
                    np.array([r.quant for r in runs]),
                    np.array([timing_model.is_hbm(r.machine.memory_type) for r in runs], bool))


def predicted_s(f: Features, idx, e_bw, e_c, overhead) -> np.ndarray:
    """The model of `tokenwalk.timing.model.step_s`, vectorised."""
    return np.maximum(f.memory_s[idx] / e_bw, f.compute_s[idx] / e_c) + f.launches[idx] * overhead


def _capped(e_bw):
    """A bandwidth efficiency after its factors, never above the bound's top (all of the spec
    sheet): `timing_model.coefficients` caps it the same way."""
    return np.minimum(e_bw, BOUNDS["bandwidth_efficiency"][1])


def separable(f: Features, idx, bw_factor: np.ndarray) -> bool:
    """Whether decode runs `idx` can tell a bandwidth efficiency from a cost per launch: only
    if their steps read different bytes per launch (at 1e-3 apart, far above rounding). Runs
    of one model on chips of one bandwidth (the A750 and the A770M) fit a whole curve of pairs
    equally well, and which point a solver stops at is decided by the last bits."""
    per_launch = f.memory_s[idx] / bw_factor[idx] / f.launches[idx]
    return len(per_launch) > 1 and float(np.max(per_launch) / np.min(per_launch)) > 1.0 + 1e-3


def _fit_decode(f: Features, idx, bw_factor: np.ndarray, scale: float = SOFT_L1_SCALE,
                overhead_s: float | None = None) -> tuple[float, float]:
    """(bandwidth_efficiency, launch_cost_s) of the decode runs `idx`; with `overhead_s`
    given, the cost per launch is held at it and the efficiency alone is fitted."""
    memory, compute, launches, factor = f.memory_s[idx], f.compute_s[idx], f.launches[idx], bw_factor[idx]
    held = overhead_s is not None
    bounds = launch_bounds(all(timing_model.is_cpu(f.runs[i].machine) for i in idx))

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
        step = np.maximum(memory / e_bw, compute) + launches * overhead_us * 1e-6
        d_eff = np.where((memory / e_bw >= compute) & ~capped, -memory / (e_bw * e), 0.0)
        return np.column_stack([d_eff / step] if held else [d_eff / step, launches * 1e-6 / step])

    lo = [bounds["bandwidth_efficiency"][0], bounds["launch_cost_s"][0] * 1e6]
    hi = [bounds["bandwidth_efficiency"][1], bounds["launch_cost_s"][1] * 1e6]
    # cost per launch in us (a layer launches about 20), each start inside a GPU row's floor
    starts = tuple((e, max(us, lo[1] * 1.01)) for e, us in ((0.8, 1.0), (0.6, 5.0), (0.95, 0.25)))
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
        step = np.maximum(memory_bound, compute_bound) + f.launches[idx] * overhead
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
        else:  # the runs cannot tell the two apart: the cost per launch is the broader row's
            e_bw, overhead = _fit_decode(f, dec, bw_factor, decode_scale, fallback["launch_cost_s"])
            row["decode_from"] = f"fitted, cost per launch from {fallback.get('name', 'default')}"
    else:
        e_bw, overhead = fallback["bandwidth_efficiency"], fallback["launch_cost_s"]
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
    """One round of a year trend: the rate moves by the Theil-Sen slope (robust to a few odd
    runs) of the runs `ids`' log(predicted / measured time) against their family's year (the
    decode runs for the bandwidth's trend, the prefill runs for the compute's)."""
    from scipy.stats import theilslopes

    ids = ids[~np.isnan(f.years[ids])]
    log_ratio = np.log(predict_s(f, coeffs, ids) / f.measured_s[ids])
    offset = _year_offset(f.years[ids], trend)  # a trend that levels off: the years after it count as its last
    slope = float(theilslopes(log_ratio, offset)[0]) if len(set(offset)) > 1 else 0.0
    return dict(trend, per_year=round(trend["per_year"] + slope, 5))


def structure_of(structure: str | dict) -> dict:
    """A structure given by its name in STRUCTURES, or already as its dict."""
    return STRUCTURES[structure] if isinstance(structure, str) else structure


def _fitted_knee(f: Features, idx: np.ndarray, structure: dict) -> dict:
    """A trend that levels off (`year_levels_off`): the year after which newer families reach
    no more of their bandwidth, chosen among the years of the runs' families (all but the
    earliest; the latest means no levelling) as the one whose fit leaves the decode runs the
    smallest soft-L1 cost at SOFT_L1_SCALE. Each candidate is a whole fit on every backend's
    rows; returns the best fit's coefficients. A structure with a compute trend then has its
    year searched with this one held (`_fitted_compute_knee`): decode's steps are bound by
    bytes on every GPU, so the compute trend is left out of this search."""
    best = _best_year(f, idx, dict(structure, compute_year=False), "knee", idx[f.decode[idx]])
    if not structure.get("compute_year"):
        return best
    return _fitted_compute_knee(f, idx, dict(structure, knee=best["year_trend"]["until_year"]))


def _fitted_compute_knee(f: Features, idx: np.ndarray, structure: dict) -> dict:
    """The compute trend's levelling year (`compute_year`), chosen as `_fitted_knee` chooses the
    bandwidth's, among the years of the prefill runs' families, by the prefill runs' cost; the
    bandwidth's year held at `structure["knee"]` where it has one. Returns the best fit's coefficients."""
    return _best_year(f, idx, structure, "compute_knee", idx[~f.decode[idx]])


def _best_year(f: Features, idx: np.ndarray, structure: dict, key: str, scored: np.ndarray) -> dict:
    """The fit on `idx` with `structure[key]` set to each year of the `scored` runs' families but
    the earliest, whose `scored` runs are left with the smallest soft-L1 cost at SOFT_L1_SCALE
    (a tie within TIE_RTOL: the earliest year)."""
    years = f.years[scored]
    fits, costs = [], []
    for year in sorted({int(y) for y in years[~np.isnan(years)]})[1:]:
        coeffs = fit_coefficients(f, idx, dict(structure, **{key: year}))
        z = (np.log(predict_s(f, coeffs, scored) / f.measured_s[scored]) / SOFT_L1_SCALE) ** 2
        fits.append(coeffs)
        costs.append(float(np.sum(np.sqrt(1.0 + z) - 1.0)))
    return fits[first_within_tie(costs)]


def _trended_factors(f: Features, quants: dict, trend: dict | None) -> np.ndarray:
    """Per run: its weight format's factor times the year trend's (of the bandwidth or the compute)."""
    return _factors(f, quants) * year_factor(f.years, trend)


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
    unless the structure holds one ("knee": that year). With "compute_year", a second trend
    ("compute_year_trend" in the result) multiplies the compute efficiency of prefill the same
    way, its rate fitted in the same rounds on the prefill runs and its year searched after the
    bandwidth's (`_fitted_compute_knee`), unless the structure holds one ("compute_knee")."""
    structure = structure_of(structure)
    idx = np.arange(len(f.runs)) if idx is None else np.asarray(idx)
    if structure.get("year_levels_off") and "knee" not in structure:
        return _fitted_knee(f, idx, structure)
    if structure.get("compute_year") and "compute_knee" not in structure:
        return _fitted_compute_knee(f, idx, structure)
    compute: dict = {}
    bandwidth: dict = {}
    trend = compute_trend = None
    if "knee" in structure:
        trend = {"per_year": 0.0, "reference_year": structure["knee"], "until_year": structure["knee"]}
    elif structure.get("year"):
        known = f.years[idx][~np.isnan(f.years[idx])]
        trend = {"per_year": 0.0, "reference_year": int(np.median(known)) if len(known) else 2020}
    if structure.get("compute_year"):
        knee = structure["compute_knee"]
        compute_trend = {"per_year": 0.0, "reference_year": knee, "until_year": knee}
    coeffs = _rows(f, idx, structure, _trended_factors(f, compute, compute_trend), _trended_factors(f, bandwidth, trend))
    if structure["quant"] or structure.get("quant_decode") or trend is not None or compute_trend is not None:
        dec, pre = idx[f.decode[idx]], idx[~f.decode[idx]]
        for _ in range(3):
            current = dict(coeffs, quant_compute_factor=compute, quant_bandwidth_factor=bandwidth, year_trend=trend,
                           compute_year_trend=compute_trend)
            if trend is not None:
                trend = _updated_trend(f, current, dec, trend)
                current = dict(current, year_trend=trend)
            if structure.get("quant_decode"):
                bandwidth = _updated(f, current, dec, bandwidth)
                current = dict(current, quant_bandwidth_factor=bandwidth)
            if compute_trend is not None:
                compute_trend = _updated_trend(f, current, pre, compute_trend)
                current = dict(current, compute_year_trend=compute_trend)
            if structure["quant"]:
                compute = _updated(f, current, pre, compute)
            coeffs = _rows(f, idx, structure, _trended_factors(f, compute, compute_trend),
                           _trended_factors(f, bandwidth, trend))
    coeffs["quant_compute_factor"] = compute
    coeffs["quant_bandwidth_factor"] = bandwidth
    coeffs["year_trend"] = trend
    if compute_trend is not None:  # only in the structures that have one: the others' files stay as they were
        coeffs["compute_year_trend"] = compute_trend
    return coeffs


def predict_s(f: Features, coeffs: dict, idx) -> np.ndarray:
    """Seconds per step of the runs `idx`, each on its row (`timing_model.row_key`)."""
    idx = np.asarray(idx)
    out = np.empty(len(idx))
    compute = coeffs.get("quant_compute_factor", {})
    bandwidth = coeffs.get("quant_bandwidth_factor", {})
    trend = coeffs.get("year_trend")
    compute_trend = coeffs.get("compute_year_trend")
    for k, i in enumerate(idx):
        key = timing_model.row_key(coeffs["backends"], f.runs[i].backend, f.runs[i].machine.device_class,
                                   f.runs[i].machine.vendor, f.runs[i].machine.memory_type)
        row = coeffs["backends"][key] if key is not None else coeffs["default"]
        e_c = row["compute_efficiency"] * compute.get(f.quants[i], 1.0) * year_factor(f.years[[i]], compute_trend)[0]
        e_bw = _capped(row["bandwidth_efficiency"] * bandwidth.get(f.quants[i], 1.0) * year_factor(f.years[[i]], trend)[0])
        out[k] = predicted_s(f, np.array([i]), e_bw, e_c, row["launch_cost_s"])[0]
    return out
