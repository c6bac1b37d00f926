"""A walk resolves its machine once: the fit's row or the calibration's solve, the peaks, the
disk and the load efficiency are found before the first stage (`timed_machine`), and every
stage reads them. The timed machine gives the same seconds as the functions that take a
model and a machine."""

import dataclasses

import pytest

from tests.support.hardware_specs import h100, laptop, qwen, seven_b
from tokenwalk.timing import calibration
from tokenwalk.timing import stages as timing
from tokenwalk.walk import Request, walk_request


@pytest.mark.parametrize("request_", [Request(100_000, 20_000), Request(6_550, 300, users=4),
                                      Request(2_900, 200, spec_alpha=0.7, spec_gamma=4)])
def test_a_walk_solves_the_calibration_once(monkeypatch, request_):
    """Dozens of steps are evaluated; the laptop's calibration is solved for one of them only."""
    calls = []
    solve = calibration.solve

    def counted(machine, bounds, store=None):
        calls.append(machine.name)
        return solve(machine, bounds, store)

    monkeypatch.setattr(calibration, "solve", counted)
    walk = walk_request(qwen(), laptop(), request_)
    assert calls == ["laptop-860m"]
    assert len(walk.stage("prefill").detail["chunks"]) > 1


@pytest.mark.parametrize("machine", [laptop, h100], ids=["laptop", "h100"])
def test_the_timed_machine_times_as_the_functions_do(machine):
    model, spec = qwen() if machine is laptop else seven_b(), machine()
    timed = timing.timed_machine(model, spec)
    for context in (0, 3_000, 40_000):
        assert timed.decode_step_s(context, 2) == timing.decode_step_s(model, spec, context, 2)
        assert timed.step_bound(timed.decode_step(context)) == timing.decode_step_bound(model, spec, context)
        assert timed.prefill_chunk_s(512, context) == timing.prefill_chunk_s(model, spec, 512, context)
    assert timed.load_s() == timing.load_s(model, spec)
    assert timed.disk_gbs == timing.disk_bandwidth_gbs(spec)
    assert timed.efficiencies() == timing.efficiencies(spec)
    assert timed.calibrated is (machine is laptop)


def test_the_timed_machine_is_frozen():
    timed = timing.timed_machine(qwen(), laptop())
    with pytest.raises(dataclasses.FrozenInstanceError):
        timed.load_efficiency = 1.0
