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
one odd run (a transcription, a broken build) does not drag a backend's numbers.

Checked by leave-one-machine-out cross-validation: each machine is predicted by a fit
that never saw it. A machine timed on its own measurements (the article's laptop) is not
fitted here: the pure core solves its coefficients from them when it is timed
(`tokenwalk.timing.calibration`), so this file holds only what needs numpy. The pure
evaluation is `tokenwalk.timing.model`; the per-run features (roofline bytes and
operations) are taken from the core so the two cannot disagree.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from tokenwalk.physics import roofline
from tokenwalk.timing.llama_bench import DATA_DIR, BenchRun, chip_name, load_runs
from tokenwalk.timing import model as timing_model
from tokenwalk.timing.model import BOUNDS, FIT_PATH, predict_run_tok_s, rounded

MIN_MACHINES = 2  # a backend needs this many machines with runs to get a row of its own
SOFT_L1_SCALE = 0.05  # residuals (log ratio) beyond ~5 % count linearly, not squared


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
                    np.array(tokens, float), np.array(measured), np.array(decode, bool))


def predicted_s(f: Features, idx, e_bw, e_c, overhead) -> np.ndarray:
    """The model of `tokenwalk.timing.model.step_s`, vectorised."""
    return np.maximum(f.memory_s[idx] / e_bw, f.compute_s[idx] / e_c) + f.layers[idx] * overhead


def _fit_decode(f: Features, idx) -> tuple[float, float]:
    def residuals(p):
        return np.log(predicted_s(f, idx, p[0], 1.0, p[1] * 1e-6) / f.measured_s[idx])

    lo = [BOUNDS["bandwidth_efficiency"][0], BOUNDS["layer_overhead_s"][0] * 1e6]
    hi = [BOUNDS["bandwidth_efficiency"][1], BOUNDS["layer_overhead_s"][1] * 1e6]
    best = None
    for start in ((0.8, 20.0), (0.6, 100.0), (0.95, 5.0)):  # the loss is not convex: a few starts
        result = least_squares(residuals, start, bounds=(lo, hi), loss="soft_l1", f_scale=SOFT_L1_SCALE)
        if best is None or result.cost < best.cost:
            best = result
    return float(best.x[0]), float(best.x[1] * 1e-6)


def _fit_prefill(f: Features, idx, e_bw: float, overhead: float) -> float:
    def residuals(p):
        return np.log(predicted_s(f, idx, e_bw, p[0], overhead) / f.measured_s[idx])

    result = least_squares(residuals, [0.4], bounds=([BOUNDS["compute_efficiency"][0]], [BOUNDS["compute_efficiency"][1]]),
                           loss="soft_l1", f_scale=SOFT_L1_SCALE)
    return float(result.x[0])


def _row(f: Features, idx: np.ndarray, fallback: dict | None) -> dict:
    dec = idx[f.decode[idx]]
    pre = idx[~f.decode[idx]]
    machines = lambda ids: len({chip_name(f.runs[i].machine.name) for i in ids})  # noqa: E731
    row = {"decode_runs": int(len(dec)), "decode_machines": machines(dec),
           "prefill_runs": int(len(pre)), "prefill_machines": machines(pre)}
    if machines(dec) >= MIN_MACHINES or fallback is None:
        e_bw, overhead = _fit_decode(f, dec)
        row["decode_from"] = "fitted"
    else:
        e_bw, overhead = fallback["bandwidth_efficiency"], fallback["layer_overhead_s"]
        row["decode_from"] = "default"
    if machines(pre) >= MIN_MACHINES or (fallback is None and len(pre)):
        e_c = _fit_prefill(f, pre, e_bw, overhead)
        row["prefill_from"] = "fitted"
    else:
        e_c = fallback["compute_efficiency"]
        row["prefill_from"] = "default"
    row.update(rounded(e_bw, overhead, e_c))
    return row


def fit_coefficients(f: Features, idx: np.ndarray | None = None, only: set | None = None) -> dict:
    """{"default": row, "backends": {name: row}} fitted on the runs `idx` (all if None);
    `only`: fit just these backends' rows (each row depends on its own runs and the default)."""
    idx = np.arange(len(f.runs)) if idx is None else np.asarray(idx)
    gpu = np.array([i for i in idx if f.runs[i].backend != "CPU"])
    default = _row(f, gpu, None)
    backends = {}
    for backend in sorted({f.runs[i].backend for i in idx} & (only if only is not None else {f.runs[i].backend for i in idx})):
        members = np.array([i for i in idx if f.runs[i].backend == backend])
        backends[backend] = _row(f, members, default)
    return {"default": default, "backends": backends}


def _coeffs_for(coeffs: dict, backend: str) -> tuple[float, float, float]:
    row = coeffs["backends"].get(backend, coeffs["default"])
    return row["bandwidth_efficiency"], row["compute_efficiency"], row["layer_overhead_s"]


def predict_s(f: Features, coeffs: dict, idx) -> np.ndarray:
    idx = np.asarray(idx)
    out = np.empty(len(idx))
    for k, i in enumerate(idx):
        e_bw, e_c, overhead = _coeffs_for(coeffs, f.runs[i].backend)
        out[k] = predicted_s(f, np.array([i]), e_bw, e_c, overhead)[0]
    return out


def leave_one_machine_out(f: Features) -> list[dict]:
    """Each machine predicted by a fit on all the other machines' runs.

    A "machine" here is a chip (`llama_bench.chip_name`): the variants of one chip that the
    data list separately (8 GB and 16 GB, a Vulkan row) are left out together.

    Returns one row per run: measured and predicted tok/s, speed ratio (measured /
    predicted), absolute percentage error of the predicted speed, and the fit's row used.
    """
    rows = []
    chips = sorted({chip_name(run.machine.name) for run in f.runs})
    for name in chips:
        test = np.array([i for i, run in enumerate(f.runs) if chip_name(run.machine.name) == name])
        train = np.array([i for i, run in enumerate(f.runs) if chip_name(run.machine.name) != name])
        coeffs = fit_coefficients(f, train, only={f.runs[i].backend for i in test})
        pred = predict_s(f, coeffs, test)
        for i, p in zip(test, pred):
            run = f.runs[i]
            measured = run.tok_s
            predicted = f.tokens[i] / p
            backend_row = coeffs["backends"].get(run.backend)
            same = [j for j in train if f.runs[j].backend == run.backend and f.runs[j].phase == run.phase]
            rows.append({
                "index": run.index, "run": run, "phase": run.phase, "test": run.test, "backend": run.backend,
                "machine": name, "measured_tok_s": measured, "predicted_tok_s": predicted,
                "speed_ratio": measured / predicted, "ape": abs(predicted / measured - 1.0),
                "row": (backend_row or {}).get("decode_from" if run.phase == "decode" else "prefill_from", "default"),
                "backend_machines_in_fit": len({chip_name(f.runs[j].machine.name) for j in same}),
            })
    return rows


def summarise(rows: list, phase: str, test: str | None = None, backend: str | None = None) -> dict:
    sel = [r for r in rows if r["phase"] == phase and (test is None or r["test"] == test)
           and (backend is None or r["backend"] == backend)]
    if not sel:
        return {"runs": 0, "machines": 0}
    ape = np.array([r["ape"] for r in sel])
    ratio = np.array([r["speed_ratio"] for r in sel])
    return {
        "runs": len(sel), "machines": len({r["machine"] for r in sel}),
        "median_ape": round(float(np.median(ape)), 4), "p90_ape": round(float(np.percentile(ape, 90)), 4),
        "speed_ratio_p10": round(float(np.percentile(ratio, 10)), 4),
        "speed_ratio_p90": round(float(np.percentile(ratio, 90)), 4),
    }


# --- the whole fit ---------------------------------------------------------------------------

def run_fit(data_dir: Path | None = None) -> tuple[dict, list]:
    """Fit on every usable run and cross-validate. Returns (fit, lomo rows)."""
    runs = [run for run in load_runs(data_dir) if usable(run)]
    f = features(runs)
    coeffs = fit_coefficients(f)
    rows = leave_one_machine_out(f)
    fit = {
        "about": (
            "Coefficients of tokenwalk's timing model (tokenwalk/timing/model.py), written by `tokenwalk fit` from "
            "the published llama-bench runs in llama-bench/benchmarks.json. A step lasts max(bytes / (bandwidth_efficiency x "
            "spec GB/s), operations / (compute_efficiency x spec FP16 FLOP/s)) + layers x layer_overhead_s. Machines "
            "with their own measurements (a calibration block in their preset) are solved from them when timed, not stored here."
        ),
        "inputs": {
            "runs": len(runs),
            "decode_runs": int(f.decode.sum()), "prefill_runs": int((~f.decode).sum()),
            "machines": len({r.machine.name for r in runs}), "chips": len({chip_name(r.machine.name) for r in runs}),
            "left_out": "runs without a spec bandwidth, and prefill runs without an FP16 figure",
        },
        "default": coeffs["default"],
        "backends": coeffs["backends"],
        "cross_validation": {
            "method": "leave one machine out: each chip (variants together) predicted by a fit on the other chips' runs",
            "decode": summarise(rows, "decode"),
            "decode_tg128": summarise(rows, "decode", "tg128"),
            "prefill": summarise(rows, "prefill"),
            "prefill_pp512": summarise(rows, "prefill", "pp512"),
        },
    }
    return fit, rows


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
    coeffs = {"default": fit["default"], "backends": fit["backends"]}
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
