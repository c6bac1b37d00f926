"""Every model preset on every machine preset gets numbers physics allows (the simulator's
promise that a prediction holds where readers take it, not only in the article's scenario):

- decode never above its bandwidth ceiling (the spec bandwidth over the bytes a token reads),
  and not below a tenth of it unless the step's launches take most of its time: a model so
  small for its machine that starting its kernels outlasts reading its weights (SmolLM2's
  97 MB cross an H100 in 29 us, its 576 launches take about 2.7 ms), where a tenth of the
  ceiling would be more than the launches allow; the reads alone always reach 10-100 % of the
  spec bandwidth;
- the fixed cost of a step is its counted launches times a cost per launch inside the stated
  physical range (`tokenwalk.timing.model.bounds_for(machine)["launch_cost_s"]`: from 2 us on a
  GPU backend, from 0 on llama.cpp's CPU backend, to 50 us);
- prefill never faster than the FP16 peak allows for the arithmetic of a token;
- the load stage says which rate it used and why.
"""

from __future__ import annotations

import pytest

from tokenwalk import walk
from tokenwalk.physics import roofline
from tokenwalk.physics.launches import decode_launches
from tokenwalk.specs.machine import list_machine_presets, load_machine
from tokenwalk.specs.model import list_model_presets, load_model
from tokenwalk.timing import model as timing_model
from tokenwalk.timing import stages

PAIRS = [(m, x) for m in list_model_presets() for x in list_machine_presets()]


def _ids(pair):
    return f"{pair[0]}@{pair[1]}"


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_decode_lies_under_its_ceiling_and_above_a_tenth_of_it_unless_launches_bind(pair):
    model, machine = load_model(pair[0]), load_machine(pair[1])
    timed = timing_model.machine_timing(model, machine)
    step = timed.decode_step(0)
    ceiling_tok_s = 1.0 / step.memory_s
    step_s = timed.step_s(step)
    tok_s = 1.0 / step_s
    assert tok_s <= ceiling_tok_s, f"{tok_s:.1f} tok/s above a ceiling of {ceiling_tok_s:.1f}"
    assert 0.10 <= timed.coefficients.bandwidth_efficiency <= 1.0
    if tok_s < 0.10 * ceiling_tok_s:
        assert timed.fixed_step_s > 0.5 * step_s, (
            f"{tok_s:.1f} tok/s, under a tenth of the ceiling {ceiling_tok_s:.1f}, with launches "
            f"{timed.fixed_step_s * 1e3:.2f} ms of a {step_s * 1e3:.2f} ms step")


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_the_fixed_cost_of_a_step_is_counted_launches_at_a_physical_cost(pair):
    model, machine = load_model(pair[0]), load_machine(pair[1])
    timed = timing_model.machine_timing(model, machine)
    low, high = timing_model.bounds_for(machine)["launch_cost_s"]
    assert low <= timed.coefficients.launch_cost_s <= high
    assert timed.launches.per_step == decode_launches(model).per_step
    assert timed.fixed_step_s == pytest.approx(timed.launches.per_step * timed.coefficients.launch_cost_s)


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_prefill_is_never_faster_than_the_fp16_peak_allows(pair):
    model, machine = load_model(pair[0]), load_machine(pair[1])
    chunk = 512
    seconds = timing_model.prefill_chunk_s(model, machine, chunk, 0)
    step = roofline.prompt_step(model, roofline.peaks(machine), chunk, 0)
    assert seconds >= step.compute_s and seconds >= step.memory_s


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_the_load_stage_says_which_rate_it_used_and_why(pair):
    model, machine = load_model(pair[0]), load_machine(pair[1])
    result = walk.walk_request(model, machine, walk.Request(prompt_tokens=100, output_tokens=10))
    load = result.stage("load").to_dict()
    calibrated = "load" in (machine.calibration or {})
    assert load["rate_from"] == ("measured" if calibrated else "disk spec")
    assert load["why"].startswith("measured: " if calibrated else "not measured: ")
    assert load["effective_gbs"] == pytest.approx(model.size_bytes / load["seconds"] / 1e9)
    assert load["effective_gbs"] <= stages.disk_bandwidth_gbs(machine) * (1 + 1e-9)
