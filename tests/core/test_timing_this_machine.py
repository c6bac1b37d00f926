"""The "this machine" preset timed on its own measurements (data/measurements/engine.json,
written by `tokenwalk measure`), as the laptop is on its own: the walk of the measured request
gives back the measured decode and prefill speeds, not the CPU row's efficiencies applied on
top of rates that are already achieved ones. Without engine.json the machine does not exist
and nothing fails."""

import re

import pytest

from tests.support.data_substitute import substitute_data_file
from tokenwalk import data_refs
from tokenwalk.errors import SpecError
from tokenwalk.specs.machine import MEASURED_MACHINE, has_measured_machine, load_machine, measured_model
from tokenwalk.specs.model import load_model
from tokenwalk.timing import calibration as timing_calibration
from tokenwalk.timing import model as timing_model
from tokenwalk.walk import Request, walk_request

ENGINE_FILE = "measurements/engine.json"
CALIBRATION_FILE = "machines/_this-machine.json"  # this-machine's calibration
LAPTOP_FILE = "machines/laptop-860m.json"  # the laptop preset, its calibration inside

pytestmark = pytest.mark.skipif(not has_measured_machine(), reason="engine.json not written on this checkout")


def _values() -> dict:
    return {k: v["value"] for k, v in data_refs.read_data_json(ENGINE_FILE)["values"].items()}


def _entry() -> dict:
    return data_refs.read_data_json(CALIBRATION_FILE)["calibration"]


def _chunk_measured() -> int:
    """The chunk engine.json says its prefill used ('prefill in chunks of N tokens')."""
    return int(re.search(r"chunks of (\d+) tokens", data_refs.read_data_json(ENGINE_FILE)["how"]).group(1))


@pytest.fixture
def substitute(monkeypatch):
    """substitute(file, change): data file `file` read as change(copy); change returning None
    makes the file missing, in a data store of its own, the default until the test ends."""
    def apply(file: str, change):
        substitute_data_file(monkeypatch, file, change)

    yield apply
    monkeypatch.undo()


def _measured_walk():
    v = _values()
    request = Request(prompt_tokens=int(v["prompt_tokens"]), output_tokens=int(v["output_tokens"]),
                      chunk_tokens=_chunk_measured())
    return walk_request(load_model("smollm2-135m"), load_machine(MEASURED_MACHINE), request)


def test_issue_8_this_machine_preset_walk_gives_back_the_measured_speeds():
    """`tokenwalk walk --model smollm2-135m --machine this-machine` on the measured request
    (6,642 prompt tokens in chunks of 128, 300 answer tokens): prefill and decode within 3 %
    of engine.json's 88.9 and 38.0 tok/s (decode a little below: its context grows by the
    300 answer tokens the calibration neglects). The CPU row gave about 34 and 15.8."""
    walk, v = _measured_walk(), _values()
    assert walk.efficiency["decode"]["from"] == "fitted: this-machine"
    assert walk.prefill_tok_s == pytest.approx(v["prefill_tok_s"], rel=0.03)
    assert walk.decode_tok_s == pytest.approx(v["decode_tok_s"], rel=0.03)
    assert walk.decode_tok_s < v["decode_tok_s"]


def test_one_decode_point_fixes_the_cost_per_launch_and_solves_the_bandwidth_share():
    """The entry's launch_cost_s is used as is; the bandwidth efficiency is what makes the
    measured step, at the decode context, exactly the reads at that share of the measured
    bandwidth; no note (the measurements are met within the fit's bounds)."""
    coeffs = timing_model.coefficients(load_machine(MEASURED_MACHINE))
    assert coeffs.row == MEASURED_MACHINE and coeffs.note == ""
    assert coeffs.launch_cost_s == data_refs.resolve(_entry()["launch_cost_s"])
    v = _values()
    step_s = timing_model.decode_step_s(load_model("smollm2-135m"), load_machine(MEASURED_MACHINE), v["prompt_tokens"])
    assert 1 / step_s == pytest.approx(v["decode_tok_s"], rel=2e-3)


def test_the_entry_references_engine_json_and_its_model_and_chunk_match_it():
    entry = _entry()
    assert load_machine(MEASURED_MACHINE).calibration == entry  # attached by this_machine(), never by name
    for ref in (entry["decode"][0], entry["prefill"], entry["prefill_prompt_tokens"], entry["decode_context_tokens"]):
        assert ref["from"] == ENGINE_FILE
    gguf = data_refs.read_data_json(ENGINE_FILE)["model"]
    assert entry["decode"][0]["model"] == entry["prefill"]["model"] == measured_model(gguf).name
    assert data_refs.resolve(entry["prefill_chunk_tokens"]) == _chunk_measured()


def test_an_edited_engine_measurement_moves_this_machine_and_not_the_laptop(substitute):
    """decode_tok_s 25 % higher in a copy of engine.json: the walk follows (a reference, not a
    copy), with no refit; the laptop does not move."""
    laptop = timing_model.coefficients(load_machine("laptop-860m"))
    before = timing_model.coefficients(load_machine(MEASURED_MACHINE))
    measured = _values()["decode_tok_s"]

    def faster(data):
        data["values"]["decode_tok_s"]["value"] = 1.25 * measured
        return data

    substitute(ENGINE_FILE, faster)
    after = timing_model.coefficients(load_machine(MEASURED_MACHINE))
    assert after.bandwidth_efficiency == pytest.approx(1.25 * before.bandwidth_efficiency, abs=2e-4)
    assert after.note == ""
    assert _measured_walk().decode_tok_s == pytest.approx(1.25 * measured, rel=0.03)
    assert timing_model.coefficients(load_machine("laptop-860m")) == laptop


def test_a_decode_speed_the_arithmetic_cannot_reach_says_so(substitute):
    """this-machine's FP16 figure is its achieved prefill rate, so with a slow prefill a decode
    step's arithmetic is not negligible: at an eighth of the measured prefill speed, a decode
    speed twice the measured one would need less arithmetic time than a step takes, and the
    note says the speed is not met."""
    measured = _values()["decode_tok_s"]

    def doubled(data):
        data["values"]["decode_tok_s"]["value"] = 2 * measured
        data["values"]["prefill_tok_s"]["value"] = data["values"]["prefill_tok_s"]["value"] / 8
        return data

    substitute(ENGINE_FILE, doubled)
    coeffs = timing_model.coefficients(load_machine(MEASURED_MACHINE))
    assert "bound by its arithmetic" in coeffs.note
    assert _measured_walk().decode_tok_s < 1.7 * measured


def test_without_engine_json_this_machine_is_not_calibrated_and_nothing_fails(substitute):
    laptop = timing_model.coefficients(load_machine("laptop-860m"))
    substitute(ENGINE_FILE, lambda data: None)
    assert timing_calibration.calibrated_machines() == ["laptop-860m"]
    assert not has_measured_machine()
    with pytest.raises(SpecError, match="engine.json: not found"):
        load_machine(MEASURED_MACHINE)
    # a machine that happens to carry the name is timed by its backend's row, not a failed solve
    stray = type("M", (), {"name": MEASURED_MACHINE, "backend": "CPU", "bandwidth_gbs": 20.0, "fp16_tflops": 1.0,
                            "calibration": None})()
    assert timing_model.coefficients(stray).row == "CPU"
    assert timing_model.coefficients(load_machine("laptop-860m")) == laptop


def test_one_decode_point_without_a_fixed_cost_per_launch_names_the_field(substitute):
    def drop(data):
        del data["calibration"]["launch_cost_s"]
        return data

    substitute(CALIBRATION_FILE, drop)
    with pytest.raises(SpecError, match=r"_this-machine.json: calibration: field 'launch_cost_s' is missing"):
        timing_model.coefficients(load_machine(MEASURED_MACHINE))


def test_a_fixed_cost_per_launch_beside_two_decode_points_is_refused(substitute):
    def add(data):
        data["calibration"]["launch_cost_s"] = {"value": 0.0}
        return data

    substitute(LAPTOP_FILE, add)
    with pytest.raises(SpecError, match=r"laptop-860m.json: calibration.launch_cost_s: two decode speeds solve"):
        timing_model.coefficients(load_machine("laptop-860m"))


def test_a_cost_per_launch_that_leaves_no_time_for_the_reads_is_held_with_a_note(substitute):
    """50 us a launch (the fit's upper bound) x 576 launches: more than the measured step leaves for
    the reads, so the bandwidth efficiency is held at the fit's bound of 1 and the note says so."""
    def cpu_cost(data):
        data["calibration"]["launch_cost_s"] = {"value": 5e-5}
        return data

    substitute(CALIBRATION_FILE, cpu_cost)
    coeffs = timing_model.coefficients(load_machine(MEASURED_MACHINE))
    assert coeffs.bandwidth_efficiency == 1.0
    assert "outside the fit's bounds: held at 1" in coeffs.note


def test_this_machine_decode_is_labelled_by_what_sets_its_time():
    """Its FP16 figure is an achieved rate, so the raw roofline calls a decode step
    compute-bound; at the calibrated efficiencies the reads set the time, and the walk's
    decode stage says "memory"."""
    walk = walk_request(load_model(_entry()["prefill"]["model"]), load_machine(MEASURED_MACHINE),
                        Request(prompt_tokens=int(_values()["prompt_tokens"]), output_tokens=300,
                                chunk_tokens=_chunk_measured()))
    assert walk.stage("decode").bound == "memory"
