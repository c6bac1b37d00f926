"""Figure 11 (memory ladder) and figure 27 (back-of-the-envelope arithmetic), plus the
decode-in-practice ceilings of the article, from the presets and the laptop's measurements."""

import pytest

from tests.support.hardware_specs import h100, laptop, qwen, seven_b
from tests.support.hardware_standins import StandinModel
from tokenwalk.data_refs import resolve
from tokenwalk.physics.roofline import (
    balance_point_tokens,
    compute_time_s,
    decode_ceiling_tok_s,
    flops_per_token,
    memory_time_s,
    model_ops_per_byte,
    step_time,
)
from tokenwalk.specs.machine import memory_ladder
from tokenwalk.specs.model import load_model


def measured(key):
    return resolve({"from": "measurements/laptop.json", "key": key})


def rung(role):
    return next(r for r in memory_ladder() if r.role == role)


def test_fig11_memory_ladder_times_for_14_gb():
    """NVMe 7 GB/s -> 2 s; PCIe 5.0 64 GB/s -> 220 ms; HBM3 3.35 TB/s -> 4.2 ms."""
    weights = seven_b().size_bytes
    assert round(memory_time_s(weights, rung("disk").bandwidth_gbs)) == 2
    assert round(memory_time_s(weights, rung("host").bandwidth_gbs) * 1e3, -1) == 220
    assert round(memory_time_s(weights, rung("vram").bandwidth_gbs) * 1e3, 1) == 4.2


def test_fig11_offloading_is_about_fifty_times_slower():
    weights = seven_b().size_bytes
    ratio = memory_time_s(weights, rung("host").bandwidth_gbs) / memory_time_s(weights, rung("vram").bandwidth_gbs)
    assert round(ratio, -1) == 50


def test_fig27_size_is_params_times_bits_over_8():
    """35.5 x 4.9 / 8 = 21.7 GB; the file's average is 4.89 bits per weight (figure 30)."""
    model = qwen()
    assert round(model.params / 1e9, 1) == 35.5
    assert round(model.bits_per_weight, 2) == 4.89
    assert round(model.params * model.bits_per_weight / 8 / 1e9, 1) == 21.7


def test_fig27_decode_ceiling_is_bandwidth_over_bytes_per_token():
    """The laptop's ceiling for Qwen3.6: 128 GB/s over the bytes one token reads."""
    assert decode_ceiling_tok_s(qwen(), laptop()) == pytest.approx(128e9 / qwen().bytes_read_per_token)


def test_fig27_prefill_at_06_useful_tflops_is_100_tok_s():
    """0.6e12 / 6e9 = 100 tok/s: Qwen3.6 needs about 6 billion operations per token."""
    assert round(flops_per_token(qwen()) / 1e9) == 6
    assert round(1 / compute_time_s(flops_per_token(qwen()), 0.6)) == 100


def test_fig27_ttft_and_answer_time_from_the_measurements():
    """6,500 / 93 = 70 s; 300 / 11.7 = 26 s."""
    assert round(6500 / measured("prefill_tok_s_moe")) == 70
    assert round(300 / measured("decode_tok_s_moe")) == 26


def test_fig27_step_time_and_balance_point():
    assert round(step_time(seven_b(), h100(), 1).step_s * 1e3, 1) == 4.2
    assert int(balance_point_tokens(h100(), 2.0)) == 295


def test_decode_ceilings_of_the_h100_examples():
    """3,350 / 14 = 240 tok/s for the 7B; a 13B about 129; a 70B about 24 if it fit."""
    machine = h100()
    assert round(decode_ceiling_tok_s(seven_b(), machine), -1) == 240
    assert round(decode_ceiling_tok_s(StandinModel(size_bytes=26e9, bytes_read_per_token=26e9), machine)) == 129
    assert round(decode_ceiling_tok_s(StandinModel(size_bytes=140e9, bytes_read_per_token=140e9), machine)) == 24


def test_thinking_tokens_cost_83_s_on_the_h100():
    """20,000 thinking tokens of the 7B at about 240 tok/s: some 83 seconds."""
    assert 20_000 / decode_ceiling_tok_s(seven_b(), h100()) == pytest.approx(83, rel=0.01)


def test_prefill_29_ms_then_answer_21_s_is_98_percent():
    """2,048-token prompt and 500-token answer: prefill 29 ms, the answer 2.1 s, 98 % of the time."""
    model, machine = seven_b(), h100()
    prefill = step_time(model, machine, 2048).step_s
    answer = 500 * step_time(model, machine, 1).step_s
    assert round(answer, 1) == 2.1
    assert int(answer / (answer + prefill) * 100) == 98  # 98.6 %, "98 %" in the article


def test_dense_27b_reads_16_gb_ceiling_8_measured_26():
    """The dense 27B reads about 16 GB per token, ceiling 8 tok/s; measured 2.6, 4.5 times slower than 11.7."""
    dense = load_model("qwen3.8-27b")
    assert round(dense.bytes_read_per_token / 1e9) == 16
    assert round(decode_ceiling_tok_s(dense, laptop())) == 8
    assert dense.bytes_read_per_token > 5 * qwen().bytes_read_per_token  # many times the MoE's bytes
    assert round(measured("decode_tok_s_moe") / measured("decode_tok_s_dense"), 1) == 4.5


def test_decode_intensity_of_qwen_on_the_laptop():
    """A decode step of Qwen3.6 does two operations per active weight over the bytes it reads:
    a few per byte, far under the laptop's balance point."""
    model = qwen()
    assert model_ops_per_byte(model) == pytest.approx(flops_per_token(model) / model.bytes_read_per_token)
    assert 2 < model_ops_per_byte(model) < 5


def test_sixty_gb_dense_writes_about_two_tokens_a_second_on_the_laptop():
    assert round(decode_ceiling_tok_s(StandinModel(size_bytes=60e9, bytes_read_per_token=60e9), laptop())) == 2
