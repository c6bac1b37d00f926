"""The roofline numbers of the article's hardware part (7B fp16 on one H100 SXM)."""

import pytest

from tests.support.hardware_specs import h100, seven_b
from tests.support.hardware_standins import StandinModel
from tokenwalk.physics.roofline import (
    balance_point_tokens,
    compute_time_s,
    decode_ceiling_tok_s,
    flops_per_token,
    memory_time_s,
    prefill_time_s,
    step_time,
    tile_ops,
)


def test_units_of_the_two_times():
    assert memory_time_s(3.35e12, 3350) == pytest.approx(1.0)
    assert compute_time_s(990e12, 990) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        memory_time_s(1, 0)


def test_fig12_tile_32k_vs_4m_operations():
    """Figure 12: one 128 x 128 tile, 1 token -> 32K operations, 128 tokens -> 4M."""
    assert tile_ops(1) == 32_768
    assert round(tile_ops(128) / 1e6) == 4


def test_fig14_fig15_decode_42_ms_prefill_29_ms():
    """Figures 14/15: 1 token 4.2 ms (compute 0.014 ms), 295 tokens 4.2 ms both, 2,048 tokens 29 ms."""
    model, machine = seven_b(), h100()
    one = step_time(model, machine, 1)
    assert round(one.step_s * 1e3, 1) == 4.2
    assert round(one.compute_s * 1e3, 3) == 0.014
    assert one.bound == "memory"
    balanced = step_time(model, machine, 295)
    assert round(balanced.memory_s * 1e3, 1) == 4.2 and round(balanced.compute_s * 1e3, 1) == 4.2
    prefill = step_time(model, machine, 2048)
    assert round(prefill.step_s * 1e3) == 29
    assert prefill.bound == "compute"


def test_fig15_decode_sms_idle_997_percent():
    """Decode: compute units idle 99.7 % of the step, about 240 tokens a second."""
    one = step_time(seven_b(), h100(), 1)
    assert round((1 - one.sm_busy_share) * 100, 1) == 99.7
    assert round(one.tokens_per_s, -1) == 240


def test_fig15_prefill_about_70000_tokens_per_s():
    assert round(step_time(seven_b(), h100(), 2048).tokens_per_s, -4) == 70_000


def test_fig16_balance_point_295_and_74_in_4_bits():
    """Figure 16: the crossing at 990 / 3.35 = 295 tokens in fp16, about 74 in 4 bits."""
    machine = h100()
    # 295.5: the article writes the tokens that fit, 295
    assert int(balance_point_tokens(machine, 2.0)) == 295
    assert round(balance_point_tokens(machine, 0.5)) == 74
    # slope 0.014 ms per token, flat 4.2 ms: the crossing of the two lines is the same point
    model = seven_b()
    flat = step_time(model, machine, 0).memory_s
    slope = compute_time_s(flops_per_token(model), machine.fp16_tflops)
    assert flat / slope == pytest.approx(balance_point_tokens(machine, 2.0))


def test_fig16_balance_point_does_not_depend_on_model_size():
    machine = h100()
    small = seven_b()
    big = StandinModel(name="70b-fp16", params=70e9, active_params=70e9, size_bytes=140e9, bytes_read_per_token=140e9)
    for model in (small, big):
        flat = step_time(model, machine, 0).memory_s
        slope = compute_time_s(flops_per_token(model), machine.fp16_tflops)
        assert flat / slope == pytest.approx(balance_point_tokens(machine, 2.0))


def test_fig17_per_layer_013_and_09_ms_times_32():
    """Figure 17: 2,048-token prefill: bytes 4.2 ms, ops 29 ms; per layer max(0.13, 0.9) x 32 = 29 ms."""
    model, machine = seven_b(), h100()
    step = step_time(model, machine, 2048)
    per_layer_memory_ms = step.memory_s / model.layers * 1e3
    per_layer_compute_ms = step.compute_s / model.layers * 1e3
    assert round(per_layer_memory_ms, 2) == 0.13
    assert round(per_layer_compute_ms, 1) == 0.9
    assert round(model.layers * max(per_layer_memory_ms, per_layer_compute_ms)) == 29


def test_fig18_phases_2048_in_29_ms_vs_42_ms_per_token():
    model, machine = seven_b(), h100()
    assert round(step_time(model, machine, 2048).step_s * 1e3) == 29
    assert round(step_time(model, machine, 1).step_s * 1e3, 1) == 4.2


def test_decode_ceiling_240_on_h100():
    """Decode in practice: 3,350 / 14 = about 240 tokens a second."""
    assert round(decode_ceiling_tok_s(seven_b(), h100())) == 239


def test_prefill_attention_term_4_and_60_percent():
    """Prefill in practice: the attention term adds about 4 % at 2,048 tokens, 60 % at 32,000 (~0.7 s)."""
    model, machine = seven_b(), h100()
    for tokens, extra in ((2048, 0.04), (32_000, 0.60)):
        linear = step_time(model, machine, tokens).step_s
        assert prefill_time_s(model, machine, tokens) / linear - 1 == pytest.approx(extra, abs=0.01)
    assert round(prefill_time_s(model, machine, 32_000), 1) == 0.7


def test_step_time_is_max_never_sum():
    model, machine = seven_b(), h100()
    for tokens in (1, 100, 295, 296, 2048):
        s = step_time(model, machine, tokens)
        assert s.step_s == max(s.memory_s, s.compute_s)
        assert s.bound == ("memory" if tokens <= 295 else "compute")
