"""The laptop timed on its own measurements, solved when it is timed (section 'Decode in
practice'): an edited measurement reaches the walk at the next build, with no refit."""

import subprocess
import sys

import pytest

from tests.support.data_substitute import substitute_data_file
from tokenwalk import data_refs
from tokenwalk.errors import SpecError
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model
from tokenwalk.timing import calibration as timing_calibration
from tokenwalk.timing import model as timing_model

LAPTOP_FILE = "measurements/laptop.json"
MEASURED = data_refs.read_data_json(LAPTOP_FILE)["values"]


@pytest.fixture
def edit_laptop(monkeypatch):
    """edit_laptop(key=value, ...): measurements/laptop.json as the author would edit it, read
    by a data store of its own (the default one until the test ends)."""

    def apply(**values):
        def edited(data: dict) -> dict:
            for key, value in values.items():
                if value is None:
                    del data["values"][key]
                else:
                    data["values"][key]["value"] = value
            return data

        substitute_data_file(monkeypatch, LAPTOP_FILE, edited)
        return timing_model.coefficients(load_machine("laptop-860m"))

    return apply


def _speeds(coeffs_machine=None):
    laptop = coeffs_machine or load_machine("laptop-860m")
    context = MEASURED["prefill_prompt_tokens"]["value"]
    moe = 1 / timing_model.decode_step_s(load_model("qwen3.6-35b-a3b"), laptop, context)
    dense = 1 / timing_model.decode_step_s(load_model("qwen3.8-27b"), laptop, context)
    prompt = MEASURED["prefill_prompt_tokens"]["value"]
    prefill = prompt / timing_model.prefill_s(load_model("qwen3.6-35b-a3b"), laptop, prompt, 512)
    return moe, dense, prefill


def test_the_laptop_row_reproduces_its_three_measurements():
    """Decode 11.7 (MoE) and 2.6 tok/s (dense 27B) after the 2,900-token prompt, prefill
    93 tok/s over that prompt in 512-token chunks: met to the coefficients' rounding."""
    coeffs = timing_model.coefficients(load_machine("laptop-860m"))
    assert coeffs.row == "laptop-860m" and coeffs.note == ""
    moe, dense, prefill = _speeds()
    assert moe == pytest.approx(MEASURED["decode_tok_s_moe"]["value"], rel=2e-3)
    assert dense == pytest.approx(MEASURED["decode_tok_s_dense"]["value"], rel=2e-3)
    assert prefill == pytest.approx(MEASURED["prefill_tok_s_moe"]["value"], rel=2e-3)


def test_the_fit_file_no_longer_stores_the_laptop():
    """What needs numpy is in timing_fit.json; what the measurements give is solved by the core."""
    assert "calibrations" not in timing_model.load_fit()
    from tokenwalk.specs.machine import has_measured_machine

    assert timing_calibration.calibrated_machines() == ["laptop-860m"] + (["this-machine"] if has_measured_machine() else [])


def test_an_edited_decode_speed_moves_the_laptop_and_nothing_else(edit_laptop):
    """Dense 27B measured at 3.0 instead of 2.6 tok/s: the model follows (3.0 and the MoE's
    11.7 still met), with no refit; a backend's row does not move."""
    vulkan_before = timing_model.coefficients(type("M", (), {"name": "x", "backend": "Vulkan", "calibration": None})())
    coeffs = edit_laptop(decode_tok_s_dense=3.0)
    assert coeffs.note == ""
    moe, dense, prefill = _speeds()
    assert dense == pytest.approx(3.0, rel=2e-3) and moe == pytest.approx(11.7, rel=2e-3)
    assert prefill == pytest.approx(93, rel=2e-3)  # the compute efficiency is solved again
    assert timing_model.coefficients(type("M", (), {"name": "x", "backend": "Vulkan", "calibration": None})()) == vulkan_before


def test_the_solve_is_cached_on_the_values_not_the_first_answer(edit_laptop):
    original = timing_model.coefficients(load_machine("laptop-860m"))
    assert edit_laptop(prefill_tok_s_moe=120).compute_efficiency > original.compute_efficiency
    assert edit_laptop(prefill_tok_s_moe=MEASURED["prefill_tok_s_moe"]["value"]) == original


def test_an_edited_machine_spec_is_solved_again():
    """The machine's own numbers are inputs too: a laptop with twice the bandwidth reaches
    half the share of it at the same measured speeds."""
    spec = load_machine("laptop-860m")
    faster = type(spec)(**{**spec.__dict__, "bandwidth_gbs": 2 * spec.bandwidth_gbs})
    a, b = timing_model.coefficients(spec), timing_model.coefficients(faster)
    assert b.bandwidth_efficiency == pytest.approx(a.bandwidth_efficiency / 2, abs=1e-4)
    assert b.launch_cost_s == pytest.approx(a.launch_cost_s, abs=1e-9)


def test_measurements_that_need_a_negative_cost_per_launch_are_held_at_the_bound(edit_laptop):
    """MoE doubled to 23.4 tok/s: both models would reach the same share of the bandwidth,
    which the exact solve meets only with a negative cost per launch (-2.7 us). The closest
    coefficients within the bounds of a GPU backend hold the cost at its floor (2 us,
    `GPU_LAUNCH_FLOOR_S`) and say so in the walk."""
    coeffs = edit_laptop(decode_tok_s_moe=23.4)
    assert coeffs.launch_cost_s == timing_model.GPU_LAUNCH_FLOOR_S == 2e-6
    assert 0.34 < coeffs.bandwidth_efficiency < 0.40
    assert "cost per launch -2.7 us, outside the fit's bounds" in coeffs.note
    moe, dense, _ = _speeds()
    assert 20 < moe < 23.4 and 2.6 < dense < 3.0  # both missed by about a tenth, in log terms evenly
    from tokenwalk.timing import stages as timing

    assert "outside the fit's bounds" in timing.efficiencies(load_machine("laptop-860m"))["decode"]["from"]


def test_a_missing_measurement_names_the_file_and_field(edit_laptop):
    with pytest.raises(SpecError, match=r"measurements/laptop.json: values.decode_tok_s_dense.value: missing"):
        edit_laptop(decode_tok_s_dense=None)


def test_a_non_positive_speed_names_the_file_and_field(edit_laptop):
    with pytest.raises(SpecError, match=r"measurements/laptop.json: values.prefill_tok_s_moe.value: 0.0 is not a positive speed"):
        edit_laptop(prefill_tok_s_moe=0)


def test_the_solve_runs_without_numpy():
    """The browser solves the laptop too: no numpy, no scipy."""
    code = ("import sys; sys.modules['numpy'] = None; sys.modules['scipy'] = None\n"
            "from tokenwalk.timing import model as timing_model\n"
            "from tokenwalk.specs.machine import load_machine\n"
            "c = timing_model.coefficients(load_machine('laptop-860m'))\n"
            "print(c.bandwidth_efficiency, c.launch_cost_s, c.compute_efficiency)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    expected = timing_model.coefficients(load_machine("laptop-860m"))
    assert [float(x) for x in out.stdout.split()] == [expected.bandwidth_efficiency, expected.launch_cost_s,
                                                      expected.compute_efficiency]
