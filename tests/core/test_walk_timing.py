"""The timing interface the walk relies on (v1 efficiencies or the fitted model behind it):
the laptop's measurements come back at their own sizes, and no time beats the roofline."""

import pytest

from tests.support.hardware_specs import h100, laptop, qwen, seven_b
from tests.support.hardware_standins import StandinMachine
from tokenwalk.data_refs import resolve
from tokenwalk.physics.roofline import decode_step, prefill_step
from tokenwalk.timing import stages as timing


def measured(key):
    return resolve({"from": "measurements/laptop.json", "key": key})


def test_laptop_decode_gives_back_117_tok_s():
    """The laptop measured 11.7 tok/s (figure 18) against a ceiling near 70."""
    context = measured("prefill_prompt_tokens")
    assert 1 / timing.decode_step_s(qwen(), laptop(), context) == pytest.approx(measured("decode_tok_s_moe"), rel=0.01)


def test_laptop_prefill_gives_back_93_tok_s():
    """The same run read its 2,900-token prompt at 93 tok/s, in chunks of 512 (figure 18)."""
    prompt = measured("prefill_prompt_tokens")
    seconds, done = 0.0, 0
    while done < prompt:
        n = min(512, prompt - done)
        seconds += timing.prefill_chunk_s(qwen(), laptop(), n, done)
        done += n
    assert prompt / seconds == pytest.approx(measured("prefill_tok_s_moe"), rel=0.01)


def test_laptop_cold_load_is_the_measured_55_s():
    """Figure 24: a cold load takes 55 s."""
    assert timing.load_s(qwen(), laptop()) == pytest.approx(measured("cold_load_s"))


@pytest.mark.parametrize("machine", [h100(), laptop()], ids=["h100", "laptop"])
def test_no_expected_time_beats_the_roofline(machine):
    for model in (seven_b(), qwen()):
        for context in (0, 1000, 30_000):
            assert timing.decode_step_s(model, machine, context) >= decode_step(model, machine, context).step_s
            assert timing.prefill_chunk_s(model, machine, 512, context) >= prefill_step(model, machine, 512, context).step_s


def test_longer_context_is_never_faster():
    steps = [timing.decode_step_s(seven_b(), h100(), c) for c in (0, 2500, 8000, 32_000)]
    assert steps == sorted(steps)


def test_disk_bandwidth_from_the_spec_or_the_ladder():
    assert timing.disk_bandwidth_gbs(StandinMachine(disk_gbs=3.5)) == 3.5
    assert timing.disk_bandwidth_gbs(h100()) == 7  # the NVMe rung
    # 14 GB from a 7 GB/s disk with no load measurement: figure 11's 2 s
    assert timing.load_s(seven_b(), h100()) == pytest.approx(2.0)


def test_efficiencies_say_where_they_come_from():
    shares = timing.efficiencies(laptop())
    assert set(shares) == {"decode", "prefill", "load"}
    assert all(0 < v["value"] <= 1 and v["from"] for v in shares.values())


def test_bad_phase():
    with pytest.raises(ValueError):
        timing.efficiency(h100(), "training")
