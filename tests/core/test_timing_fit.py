"""The timing model's fit (issue: a timing model fitted on published llama-bench runs).

A refit on a fixed subset must land in stated bounds, the committed coefficients must be
what `tokenwalk fit` produces, and the native (numpy) prediction must be the pure core's.
"""

import copy
import json

import numpy as np
import pytest

pytest.importorskip("scipy")

from tests.support.golden import reviewed  # noqa: E402
from tests.support.paths import GOLDEN as GOLDEN_DIR  # noqa: E402
from tokenwalk.timing import model as timing_model  # noqa: E402  (after importorskip, as above)
from tokenwalk.timing.fit import folds, inputs, refit, solve  # noqa: E402  (after importorskip: skipped, not failed, without scipy)
from tokenwalk.timing.llama_bench import load_runs  # noqa: E402  (after importorskip, as above)

APPLE_TABLE = "#4167"  # llama.cpp discussion 'Performance of llama.cpp on Apple Silicon M-series'


def _apple_table_runs():
    return [r for r in load_runs() if solve.usable(r) and r.backend == "Metal" and APPLE_TABLE in r.source]


def test_refit_on_the_apple_table_lands_in_stated_bounds():
    """Fixed subset: the Metal rows of llama.cpp discussion #4167 (17 Apple chips, Llama 2 7B
    in F16/Q8_0/Q4_0). Bounds: decode reaches 85-97 % of the spec bandwidth with a cost
    of 6-13 us for each of a step's 614 launches (why the Ultra chips reach a small share with Q4_0); prefill reaches
    60-80 % of the FP16 figure; in-sample median error under 5 %."""
    runs = _apple_table_runs()
    assert len(runs) == 56 and len({r.machine.name for r in runs}) == 17
    f = solve.features(runs)
    metal = solve.fit_coefficients(f)["backends"]["Metal"]
    assert 0.85 <= metal["bandwidth_efficiency"] <= 0.97
    assert 6e-6 <= metal["launch_cost_s"] <= 13e-6
    assert 0.60 <= metal["compute_efficiency"] <= 0.80
    coeffs = solve.fit_coefficients(f)
    predicted = f.tokens / solve.predict_s(f, coeffs, np.arange(len(runs)))
    measured = np.array([r.tok_s for r in runs])
    assert np.median(np.abs(predicted / measured - 1)) < 0.05


def test_leave_one_machine_out_on_the_apple_table_stays_under_ten_percent():
    """Each Apple chip (M1, M1 Max, ..., M3 Ultra: 10 chips, variants together) predicted by
    a fit on the others: median error of decode and of prefill under 10 %, 90th percentile
    of decode under 15 %."""
    rows = folds.leave_one_machine_out(solve.features(_apple_table_runs()))
    decode = folds.summarise(rows, "decode")
    prefill = folds.summarise(rows, "prefill")
    assert decode["machines"] == 10 and decode["median_ape"] < 0.10 and decode["p90_ape"] < 0.15
    assert prefill["machines"] >= 3 and prefill["median_ape"] < 0.10


def test_the_per_layer_cost_is_why_the_ultra_reaches_a_smaller_share():
    """README fact: the largest chips reach a much smaller share of their bandwidth with the
    small Q4_0 model. With the fitted Metal coefficients, an 800 GB/s Ultra spends over
    40 % of a Q4_0 token in the fixed per-layer cost, an M2 at 100 GB/s under 15 %."""
    runs = _apple_table_runs()
    fit = {"default": solve.fit_coefficients(solve.features(runs))["default"],
           "backends": solve.fit_coefficients(solve.features(runs))["backends"]}
    by_machine = {(r.machine.name, r.quant, r.test): r for r in runs}
    ultra = by_machine.get(("Apple M2 Ultra (76-core GPU)", "Q4_0", "tg128"))
    candidates = [r for r in runs if r.quant == "Q4_0" and r.test == "tg128"]
    ultra = ultra or max(candidates, key=lambda r: r.machine.bandwidth_gbs)
    small = min(candidates, key=lambda r: abs(r.machine.bandwidth_gbs - 100))

    def share(run):
        b = timing_model.decode_breakdown(run.model, run.machine, 63.5, fit=fit)
        return b["overhead_s"] / b["step_s"]

    assert ultra.machine.bandwidth_gbs >= 800 and share(ultra) > 0.40
    assert small.machine.bandwidth_gbs <= 120 and share(small) < 0.15


def test_native_and_pure_core_predict_the_same():
    """The fit's vectorised model and tokenwalk.timing.model are one model."""
    fit = timing_model.load_fit()
    runs = [r for r in load_runs() if solve.usable(r)]
    assert refit.check_core_agrees(fit, runs) < 1e-9


GOLDEN = GOLDEN_DIR / "timing_validation.json"


def _golden_view(fit: dict) -> dict:
    cv = fit["cross_validation"]
    return {"structure": fit["structure"],
            "leave_one_family_out": {k: v for k, v in cv.items()
                                     if k not in ("method", "leave_one_machine_out", "twin_spread")},
            "leave_one_machine_out": cv["leave_one_machine_out"], "twin_spread": cv["twin_spread"]}


def test_committed_cross_validation_is_the_golden_one():
    """The validated numbers `tokenwalk fit` recorded (leave one family out and leave one
    machine out, by backend and device class, and the likely ranges' coverage) are the ones
    in tests/golden/timing_validation.json: a change to the model or the data that moves them
    must update the golden file on purpose (TOKENWALK_UPDATE_GOLDEN=1 rewrites it)."""
    view = _golden_view(timing_model.load_fit())
    assert view == reviewed(GOLDEN.name, view, indent=1)
    lofo = view["leave_one_family_out"]
    assert lofo["decode"]["runs"] >= 180 and lofo["prefill"]["runs"] >= 45
    assert 0 < lofo["decode_coverage"] < 1 and 0 < lofo["prefill_coverage"] < 1


def test_refit_differences_are_told_apart_from_rounding():
    """Stand-ins: a float within 1 % passes; one 2 % off, a count off by one or another
    structure name does not, and each difference says what moved and by how much."""
    committed = {"structure": "a", "inputs": {"runs": 10}, "rows": [0.5, 0.02]}
    assert refit.differences({"structure": "a", "inputs": {"runs": 10}, "rows": [0.504, 0.0205]}, committed) == []
    assert refit.differences({"structure": "a", "inputs": {"runs": 10}, "rows": [0.51, 0.02]},
                                  committed) == ["/rows/0: 0.5 -> 0.51 (+2.0 %)"]
    assert refit.differences({"structure": "a", "inputs": {"runs": 11}, "rows": [0.5, 0.02]},
                                  committed) == ["/inputs/runs: 10 -> 11"]
    assert refit.differences({"structure": "b", "inputs": {"runs": 10}, "rows": [0.5, 0.02]},
                                  committed) == ["/structure: 'a' -> 'b'"]


def test_the_committed_fit_was_computed_from_the_current_runs_and_code():
    """timing_fit.json records the hash of what it was computed from (the published runs'
    files, the fit's code without comments and docstrings). When either changes, the
    committed coefficients, the article's numbers built on them and the validation golden
    file are stale: refit (`make refit-check` tells what moves, `tokenwalk fit` writes it)."""
    recorded = timing_model.load_fit()["inputs"]["sha256"]
    current = inputs.inputs_sha256()
    stale = [what for what in ("runs", "code") if recorded[what] != current[what]]
    assert not stale, (f"tokenwalk/data/timing_fit.json was fitted on other {' and '.join(stale)} "
                       "(the published runs in tokenwalk/data/llama-bench or the fit's code changed): run "
                       "`make refit-check` to see what moves, then `.venv/bin/tokenwalk fit` to write it")


def test_the_hash_follows_code_not_comments(tmp_path):
    """Stand-in: a comment or a docstring edited leaves a module's code text as it was; a
    changed constant does not."""
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text('"""Doc."""\nX = 1  # why\n\n\ndef f():\n    """Doc."""\n    return X\n')
    b.write_text('"""Other doc,\non two lines."""\nX = 1  # another why\ndef f():\n    """More."""\n    return X\n')
    c.write_text('"""Doc."""\nX = 2  # why\n\n\ndef f():\n    """Doc."""\n    return X\n')
    assert inputs.code_text(a) == inputs.code_text(b) == "X = 1\ndef f():\n    return X"
    assert inputs.code_text(c) != inputs.code_text(a)
    assert "tokenwalk.physics.roofline" in inputs.code_modules()  # the features' arithmetic counts


def test_runs_that_cannot_tell_the_per_layer_cost_apart_are_fitted_the_same_whatever_the_last_bits():
    """Figure 19's timing model, its decode rows. The A750 and the A770M (Alchemist, the
    Vulkan/Intel row when Battlemage is left out) run one model at one bandwidth: any pair of
    bandwidth efficiency and per-layer cost on a curve fits them equally, and the solver's
    starts stopped at points of it whose costs differed at 1e-15, so another CPU's arithmetic
    moved Battlemage's predictions by 6 %. Such a row holds its per-layer cost at the broader
    row's and fits the efficiency alone; perturbed at 1e-13, as another CPU's last bits
    would be, it comes out the same."""
    runs = [r for r in load_runs() if solve.usable(r) and r.phase == "decode"
            and r.backend == "Vulkan" and (r.machine.vendor or "") == "Intel"]
    f = solve.features(runs)
    ones = np.ones(len(runs))
    alchemist = np.flatnonzero(f.families == "Alchemist")
    assert len(set(f.chips[alchemist])) == 2 and not solve.separable(f, alchemist, ones)
    assert solve.separable(f, np.arange(len(runs)), ones)  # with Battlemage's bandwidths they can
    fallback = {"name": "Vulkan", "bandwidth_efficiency": 0.6, "launch_cost_s": 2e-6, "compute_efficiency": 0.3}
    row = solve._row(f, alchemist, fallback, ones, ones, solve.WIDE_DECODE_SCALE)
    assert row["launch_cost_s"] == 2e-6 and row["decode_from"] == "fitted, cost per launch from Vulkan"
    rng = np.random.default_rng(25)
    for _ in range(6):
        g = copy.copy(f)
        g.measured_s = f.measured_s * (1 + 1e-13 * rng.standard_normal(len(runs)))
        g.memory_s = f.memory_s * (1 + 1e-13 * rng.standard_normal(len(runs)))
        assert solve._row(g, alchemist, fallback, ones, ones, solve.WIDE_DECODE_SCALE) == row


def test_a_choice_between_near_equal_costs_keeps_the_first():
    """`first_within_tie`: costs within TIE_RTOL of the best are equal; the first is kept."""
    assert solve.first_within_tie([2.0, 1.0, 1.0 + 1e-12, 1.5]) == 1
    assert solve.first_within_tie([1.0 + 1e-12, 1.0, 3.0]) == 0
    assert solve.first_within_tie([1.0 + 1e-3, 1.0]) == 1


def _assert_headline_lines(text: str, v: dict) -> None:
    """`tokenwalk validate`'s lines for one leave-out: all tests and the headline test of each
    phase (runs, chips, families, median and p90 error) and the likely range's coverage."""
    for phase, headline in (("decode", "tg128"), ("prefill", "pp512")):
        for label, s in ((f"all {phase} tests", v[phase]), (headline, v[f"{phase}_{headline}"])):
            assert (f"{label:<24}{s['runs']:>6}{s['machines']:>7}{s['families']:>7}"
                    f"{s['median_ape']:>9.1%}{s['p90_ape']:>9.1%}") in text
        assert f"likely range ({phase}): {v[f'{phase}_coverage']:.0%} of left-out runs inside" in text


def test_validate_prints_the_recorded_headline(capsys):
    """`tokenwalk validate`'s table, printed from the committed validation: tg and pp
    separately, overall, by backend and by device class, with the likely range's coverage,
    the numbers the article quotes. (A refit's own printout is checked by `make refit-check`.)"""
    from tokenwalk.cli.validate import print_validation

    fit = timing_model.load_fit()
    blocks = {"leave_one_family_out": fit["cross_validation"],
              "leave_one_machine_out": fit["cross_validation"]["leave_one_machine_out"]}
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for block, v in blocks.items():
        print_validation(block, v)
        text = capsys.readouterr().out
        _assert_headline_lines(text, golden[block])
        for name in ("CUDA", "Metal", "ROCm", "Vulkan", "integrated", "discrete", "datacentre"):
            assert f"    {name} " in text


@pytest.mark.refit
def test_tokenwalk_fit_reproduces_the_committed_file(capsys):
    """`tokenwalk fit --check` refits from the package's data and finds the committed
    tokenwalk/data/timing_fit.json (the same structure, rows, counts and names; every number
    within REFIT_RTOL / REFIT_ATOL), naming each number that moved otherwise."""
    from tokenwalk.cli import main

    status = main(["fit", "--check"])
    text = capsys.readouterr().out
    assert status == 0, text
    assert "refit matches the committed timing_fit.json" in text


@pytest.mark.refit
def test_tokenwalk_validate_prints_the_recorded_errors_and_worst_points(capsys):
    """`tokenwalk validate` refits every fold: its headline numbers are the ones the fit
    recorded (what the article quotes), and it lists the worst ten points with reasons."""
    from tokenwalk.cli import main

    assert main(["validate"]) == 0
    text = capsys.readouterr().out
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for block in ("leave_one_family_out", "leave_one_machine_out"):
        _assert_headline_lines(text, golden[block])
    assert "worst 10 decode points" in text and "worst 10 prefill points" in text
    assert text.count("of spec bandwidth") >= 10 and text.count("of its FP16 figure") >= 10


def test_structure_is_chosen_by_its_shortfall_against_the_targets():
    """Stand-ins: a structure better on prefill (already within its 20 % target) but worse on
    decode (outside its 7 % and 30 % targets) loses; among structures that meet every target
    the old score (medians plus a quarter of decode's p90) breaks the tie."""
    def summary(dec_med, dec_p90, pre_med):
        return {"decode": {"median_ape": dec_med, "p90_ape": dec_p90}, "prefill": {"median_ape": pre_med}}

    with_year, without = summary(0.081, 0.334, 0.181), summary(0.092, 0.378, 0.157)
    assert folds.shortfall(with_year) == pytest.approx(0.011 + 0.034)
    assert folds.shortfall(without) == pytest.approx(0.022 + 0.078)
    assert folds.score(without) < folds.score(with_year)  # the old rule would have taken it
    assert folds.shortfall(summary(0.05, 0.2, 0.1)) == folds.shortfall(summary(0.06, 0.25, 0.15)) == 0


def _twin(name: str, tok_s: float, bandwidth_gbs: float = 448.0, test: str = "tg128"):
    from types import SimpleNamespace

    machine = SimpleNamespace(name=name, device_class="discrete", vendor="NVIDIA", memory_type="GDDR6",
                              bandwidth_gbs=bandwidth_gbs, fp16_tflops=None, backend="CUDA", family="Turing")
    return SimpleNamespace(machine=machine, model=SimpleNamespace(name="Llama 2 7B"), quant="Q4_0", test=test,
                           tok_s=tok_s, phase="decode" if test.startswith("tg") else "prefill", backend="CUDA",
                           family="Turing")


def test_twins_are_measured_against_their_groups_mean():
    """Stand-ins: two cards the model cannot tell apart (one family, class, maker, memory,
    bandwidth; one model, format, test) at 100 (two runs, one chip) and 80 tok/s; a card of
    another bandwidth is alone and left out. Each run's error is against the mean log speed,
    the deviation scaled by sqrt(2 / 1): 1 - 0.8 ** (1 / sqrt 2) for the fast card's runs,
    1.25 ** (1 / sqrt 2) - 1 for the slow one's."""
    import math

    runs = [_twin("NVIDIA RTX 2070 SUPER", 100.0), _twin("NVIDIA RTX 2070 SUPER", 100.0),
            _twin("NVIDIA RTX 2060 SUPER", 80.0), _twin("NVIDIA RTX 2080 Ti", 107.0, 616.0),
            _twin("NVIDIA RTX 2060 SUPER", 1500.0, test="pp512")]
    t = folds.twin_spread(runs, "decode")
    fast, slow = 1 - 0.8 ** (1 / math.sqrt(2)), 1.25 ** (1 / math.sqrt(2)) - 1
    assert (t["runs"], t["chips"], t["groups"]) == (3, 2, 1)
    assert t["median_ape"] == pytest.approx(fast, abs=1e-4)
    assert t["p90_ape"] == pytest.approx(fast + 0.8 * (slow - fast), abs=1e-4)
    assert folds.twin_spread(runs, "prefill") == {"runs": 0}


def _levelling_standin(until: int, per_year: float = 0.1, compute_until: int = 2024,
                       compute_per_year: float = 0.0) -> "solve.Features":
    """Stand-in runs (not published ones): two CUDA cards per family of 2016-2024, whose decode
    reaches 80 % of the bandwidth times exp(per_year x (min(year, until) - until)), and prefill
    runs at half their FP16 figure times exp(compute_per_year x (min(year, compute_until) -
    compute_until))."""
    from types import SimpleNamespace

    runs, memory, compute, measured, decode, chips, families, years = [], [], [], [], [], [], [], []
    for year in range(2016, 2025):
        for card in ("a", "b"):
            machine = SimpleNamespace(device_class="discrete", vendor="NVIDIA", memory_type="GDDR6")
            for phase in ("decode", "prefill"):
                runs.append(SimpleNamespace(backend="CUDA", phase=phase, machine=machine))
                share = 0.8 * np.exp(per_year * (min(year, until) - until)) * (1.02 if card == "a" else 0.98)
                memory.append(0.01 if phase == "decode" else 0.001)
                compute.append(0.0 if phase == "decode" else 0.1)
                compute_share = 0.5 * np.exp(compute_per_year * (min(year, compute_until) - compute_until))
                measured.append(0.01 / share if phase == "decode" else 0.1 / compute_share)
                decode.append(phase == "decode")
                chips.append(f"{year}{card}")
                families.append(str(year))
                years.append(year)
    n = len(runs)
    return solve.Features(runs, np.array(memory), np.array(compute), np.full(n, 32.0),
                               np.where(decode, 1.0, 512.0), np.array(measured), np.array(decode),
                               np.array(chips), np.array(families), np.full(n, "discrete"), np.full(n, "NVIDIA"),
                               np.array(years, float), np.full(n, "Q4_0"), np.zeros(n, bool))


@pytest.mark.parametrize("until", [2019, 2021, 2024])
def test_a_trend_that_levels_off_is_found_where_it_does(until):
    """Stand-ins built to level off in `until` (2024: the last year, no levelling): the fit
    finds that year and the rate (within 0.01 a year); where the data level off, the plain
    trend (one rate for every year) leaves the runs further off."""
    f = _levelling_standin(until)
    structure = {"by_class": False, "quant": False, "quant_decode": False, "year": True}
    levelling = solve.fit_coefficients(f, structure=dict(structure, year_levels_off=True))
    plain = solve.fit_coefficients(f, structure=structure)
    assert levelling["year_trend"]["until_year"] == until == levelling["year_trend"]["reference_year"]
    assert levelling["year_trend"]["per_year"] == pytest.approx(0.1, abs=0.01)
    dec = np.flatnonzero(f.decode)

    def error(coeffs):
        return float(np.max(np.abs(np.log(solve.predict_s(f, coeffs, dec) / f.measured_s[dec]))))

    assert error(levelling) < 0.03  # the cards' own +-2 %
    if until < 2024:
        assert "until_year" not in plain["year_trend"] and error(plain) > error(levelling) + 0.02


# scipy's Theil-Sen computes a confidence interval the fit does not read, and with three
# distinct years left before 2018 its variance estimate goes negative: a warning, not an error
@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
@pytest.mark.parametrize("compute_until", [2018, 2020])
def test_a_compute_trend_is_found_apart_from_the_bandwidths(compute_until):
    """Stand-ins whose prefill reaches a share of the FP16 figure that grows by 0.15 a year up
    to `compute_until` and whose decode levels off in 2021: the structure with a compute trend
    finds both years and both rates, and predicts the prefill runs within the cards' own 2 %;
    without it, one compute efficiency for every year leaves them 20 % and more off."""
    f = _levelling_standin(2021, compute_until=compute_until, compute_per_year=0.15)
    structure = {"by_class": False, "quant": False, "quant_decode": False, "year": True, "year_levels_off": True}
    both = solve.fit_coefficients(f, structure=dict(structure, compute_year=True))
    assert both["year_trend"]["until_year"] == 2021 and both["year_trend"]["per_year"] == pytest.approx(0.1, abs=0.01)
    trend = both["compute_year_trend"]
    assert trend["until_year"] == compute_until == trend["reference_year"]
    assert trend["per_year"] == pytest.approx(0.15, abs=0.01)
    bandwidth_only = solve.fit_coefficients(f, structure=structure)
    assert "compute_year_trend" not in bandwidth_only
    pre = np.flatnonzero(~f.decode)

    def error(coeffs):
        return float(np.max(np.abs(np.log(solve.predict_s(f, coeffs, pre) / f.measured_s[pre]))))

    assert error(both) < 0.03 and error(bandwidth_only) > 0.2


def test_knee_years_count_each_left_out_family_once():
    rows = [{"family": "Ada", "trend_until_year": 2021}, {"family": "Ada", "trend_until_year": 2021},
            {"family": "Pascal", "trend_until_year": 2022}, {"family": "Turing", "trend_until_year": 2021}]
    assert folds.knee_years(rows) == {"2021": 2, "2022": 1}
    assert folds.knee_years([{"family": "Ada", "trend_until_year": None}]) == {}
    compute = [{"family": "Ada", "trend_until_year": 2021, "compute_trend_until_year": 2020}]
    assert folds.knee_years(compute, "compute_trend_until_year") == {"2020": 1}


def test_checks_that_refit_hundreds_of_times_hold_the_fitted_year():
    """Leave one machine out and the bootstrap hold the year the full fit levelled off in;
    a structure without such a trend is left as it is."""
    name = "backend x vendor x class+quant+year levelling off, wide decode loss"
    held = folds.held_structure(name, {"year_trend": {"per_year": 0.08, "reference_year": 2021, "until_year": 2021}})
    assert held["knee"] == 2021 and held["year_levels_off"]
    plain = "backend x vendor x class+quant+year, wide decode loss"
    assert folds.held_structure(plain, {"year_trend": {"per_year": 0.04, "reference_year": 2022}}) == solve.STRUCTURES[plain]
    both = folds.held_structure(name + ", compute trend", {
        "year_trend": {"per_year": 0.08, "reference_year": 2021, "until_year": 2021},
        "compute_year_trend": {"per_year": 0.16, "reference_year": 2020, "until_year": 2020}})
    assert (both["knee"], both["compute_knee"]) == (2021, 2020)


def test_the_small_models_check_splits_by_class_of_device(capsys):
    """The small models' check per class of device (README "Small models": graphics cards apart
    from chips sharing system memory): the classes' runs add up to the phase's, and
    `validate --summary` prints each class's count and median beside the phase's line."""
    from tokenwalk.cli.validate import summary_lines

    s = timing_model.unseen_machine_summary()
    for phase in ("decode", "prefill"):
        by_class = s[f"{phase}_small_models_by_class"]
        assert set(by_class) == {"discrete", "integrated"}
        assert sum(c["runs"] for c in by_class.values()) == s[f"{phase}_small_models"]["runs"]
        assert all(0 <= c["median_ape"] <= c["p90_ape"] for c in by_class.values())
    text = "\n".join(summary_lines(s))
    discrete = s["decode_small_models_by_class"]["discrete"]
    assert f"by class: discrete {discrete['runs']} runs, median {discrete['median_ape'] * 100:.1f} %" in text


def test_a_gpu_row_stops_at_the_launch_floor_a_cpu_row_does_not():
    """Stand-in decode runs made to take exactly memory / 0.8 + launches x 0.5 us (the Metal
    table's chips and models, so bytes per launch differ and the pair is separable): fitted
    as Metal runs, the cost per launch stops at the GPU floor (2 us, `launch_bounds`) and the
    efficiency takes up the rest; the same runs on llama.cpp's CPU backend recover 0.5 us."""
    from dataclasses import replace

    runs = [r for r in _apple_table_runs() if r.phase == "decode"]
    f = solve.features(runs)
    f.measured_s = f.memory_s / 0.8 + f.launches * 0.5e-6
    ones = np.ones(len(runs))
    idx = np.arange(len(runs))
    assert solve.separable(f, idx, ones)
    e_gpu, cost_gpu = solve._fit_decode(f, idx, ones)
    assert cost_gpu == pytest.approx(timing_model.GPU_LAUNCH_FLOOR_S, rel=1e-6) and e_gpu > 0.8
    cpu = copy.copy(f)
    cpu.runs = [replace(r, machine=replace(r.machine, backend="CPU")) for r in runs]
    e_cpu, cost_cpu = solve._fit_decode(cpu, idx, ones)
    assert cost_cpu == pytest.approx(0.5e-6, rel=1e-4) and e_cpu == pytest.approx(0.8, rel=1e-4)
