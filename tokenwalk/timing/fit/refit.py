"""The whole fit (`tokenwalk fit`): the structure chosen, fitted on every usable run,
cross-validated and bootstrapped, written to timing_fit.json or compared with it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenwalk.timing.fit.folds import (
    BOOTSTRAP_SAMPLES,
    bootstrap,
    choose,
    cross_validate,
    held_structure,
    knee_years,
    small_model_check,
    twin_spread,
    validation,
)
from tokenwalk.timing.fit.inputs import inputs_sha256
from tokenwalk.timing.fit.solve import features, predict_s, usable
from tokenwalk.timing.llama_bench import every_published_run, is_small_model_run
from tokenwalk.timing.model import FIT_PATH, predict_run_tok_s


def run_fit(data_dir: Path | None = None, samples: int = BOOTSTRAP_SAMPLES) -> tuple[dict, list]:
    """Choose the structure, fit it on every usable run, cross-validate it and bootstrap
    its parameters. Returns (fit, leave-one-family-out rows)."""
    sha256 = inputs_sha256(data_dir)  # before the minutes of fitting: an edit meanwhile is not stamped as fitted
    everything = [run for run in every_published_run(data_dir) if usable(run)]
    runs = [run for run in everything if not is_small_model_run(run)]
    f = features(runs)
    structure, scores, family_rows = choose(f)
    coeffs, family_rows, chip_rows = cross_validate(f, structure, family_rows)
    by_family, by_chip = validation(family_rows), validation(chip_rows)
    small = small_model_check(runs, [run for run in everything if is_small_model_run(run)], structure)
    by_family.update({key: small[key] for key in ("decode_small_models", "prefill_small_models",
                                                  "decode_small_models_by_class", "prefill_small_models_by_class")})
    spread = bootstrap(f, held_structure(structure, coeffs), samples) if samples else {}
    for key, row in [("default", coeffs["default"]), *coeffs["backends"].items()]:
        if key in spread:
            row["range_p10_p90"] = spread[key]
    fit = {
        "about": (
            "Coefficients of tokenwalk's timing model (tokenwalk/timing/model.py), written by `tokenwalk fit` from "
            "the published llama-bench runs in llama-bench/benchmarks.json. A step lasts "
            "max(bytes / (bandwidth_efficiency x spec GB/s), "
            "operations / (compute_efficiency x quant_compute_factor x spec FP16 FLOP/s)) + launches x "
            "launch_cost_s (launches: the kernels llama.cpp's graph holds for one step of the run's model, "
            "graph_launches.json), with the row of the machine's backend on its class of device ('ROCm/discrete'; "
            "'CUDA/HBM' for a card whose memory_type is HBM, where the chosen structure has such rows), else of "
            "its backend, else 'default'; year_trend (when the chosen structure has one) multiplies bandwidth_efficiency "
            "by exp(per_year x (min(architecture_year, until_year) - reference_year)), architecture_year being the "
            "year the machine's chip family first shipped (llama-bench/families.json; a machine without one is taken "
            "at the reference; until_year, where the trend levels off, is fitted, and without it the trend does not "
            "level off); compute_year_trend (likewise) multiplies compute_efficiency the same way, with its own rate "
            "and year (fitted on the prefill runs; a CPU's year is not read). range_p10_p90: 10th-90th percentile "
            "of each parameter over fits on resampled chip families (the years the trends level off held at "
            "until_year). Machines with their own measurements "
            "(a calibration block in their preset) are solved from them when timed, not stored here."
        ),
        "inputs": {
            "runs": len(runs),
            "decode_runs": int(f.decode.sum()), "prefill_runs": int((~f.decode).sum()),
            "machines": len({r.machine.name for r in runs}), "chips": len(set(f.chips)),
            "families": len(set(f.families)),
            # the smallest model fitted on: a smaller one is predicted outside the fitted sizes,
            # and its likely range is the small-model check's (timing.model.error_band)
            "model_params_min": min(r.model.params for r in runs),
            "left_out": ("runs without a spec bandwidth, prefill runs without a compute figure (FP16; a CPU's FP32 "
                         "vector peak from its cores), and runs marked out_of_domain"),
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
        **({} if not coeffs.get("compute_year_trend") else {"compute_year_trend": dict(
            coeffs["compute_year_trend"], range_p10_p90=spread.get("compute_year_trend", {}).get("per_year"))}),
        "cross_validation": dict(
            method=("leave one family out: all the chips of one family (machines.json 'family': every M2, every RDNA3 "
                    "card) predicted by a fit on the other families' runs; the likely range (decode_range, prefill_range) is "
                    "the band of these left-out speed ratios whose percentiles hold 80 % of each family's runs when "
                    "set without that family; each fold's fit is a whole fit on the other families' runs, the year a "
                    "levelling trend stops in searched again (trend_until_year: in how many folds each year won); leave "
                    "one machine out holds that year at the full fit's"),
            **by_family,
            trend_until_year=knee_years(family_rows),
            **({"compute_trend_until_year": knee_years(family_rows, "compute_trend_until_year")}
               if coeffs.get("compute_year_trend") else {}),
            leave_one_machine_out=by_chip,
            twin_spread={phase: twin_spread(runs, phase) for phase in ("decode", "prefill")},
        ),
    }
    return fit, family_rows


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
    from tokenwalk.timing.model import read_fit_file

    read_fit_file.cache_clear()
    data_refs.forget_cached()
    return path


def check_core_agrees(fit: dict, runs: list, tolerance: float = 1e-9) -> float:
    """Largest relative gap between this module's vectorised prediction and the pure core's
    `predict_run_tok_s` for the full fit (they must be the same model)."""
    f = features(runs)
    coeffs = {"default": fit["default"], "backends": fit["backends"],
              "quant_compute_factor": fit.get("quant_compute_factor", {}),
              "quant_bandwidth_factor": fit.get("quant_bandwidth_factor", {}), "year_trend": fit.get("year_trend"),
              "compute_year_trend": fit.get("compute_year_trend")}
    worst = 0.0
    for i, run in enumerate(runs):
        native = f.tokens[i] / predict_s(f, coeffs, [i])[0]
        core = predict_run_tok_s(run, fit)
        worst = max(worst, abs(native / core - 1.0))
    return worst
