"""The walk (and so the simulator) gives a range from the timing model's
cross-validation error where the machine was not measured, and none where it was."""

import pytest

from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model
from tokenwalk.timing.model import error_band
from tokenwalk.walk import Request, walk_request


def _walk(machine):
    return walk_request(load_model("qwen3.6-35b-a3b"), load_machine(machine),
                        Request(prompt_tokens=6500, output_tokens=300)).to_dict()


def test_unmeasured_machine_gets_the_cross_validation_band():
    walk = _walk("rtx-5090")
    d_low, d_high = error_band("decode")
    low, high = walk["ranges"]["decode_tok_s"]
    assert low == pytest.approx(walk["decode_tok_s"] / d_high)
    assert high == pytest.approx(walk["decode_tok_s"] / d_low)
    assert low < walk["decode_tok_s"] < high
    t_low, t_high = walk["ranges"]["ttft_s"]
    assert t_low < walk["ttft_s"] < t_high


def test_the_laptop_is_calibrated_on_its_measurements_so_no_band():
    assert _walk("laptop-860m")["ranges"] is None
