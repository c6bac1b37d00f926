"""The article's arithmetic of bytes, times and ratios lives in tokenwalk's concept modules
(tokenwalk.physics.roofline, tokenwalk.physics.attention, tokenwalk.physics.kv_cache); the namespace `n` only picks
and names. Each test reproduces the number of a figure or section through those functions."""

import pytest

from tests.support import hardware_specs
from tests.support.content import default_numbers
from tokenwalk.physics.attention import softmaxes_per_decode_step
from tokenwalk.physics.kv_cache import kv_cache_bytes
from tokenwalk.physics.roofline import (
    achieved_tflops,
    bus_bandwidth_gbs,
    decode_time_s,
    layer_step_time,
    machine_ops_per_byte,
    matrix_bytes,
    prefill_time_s,
    shared_memory_total_bytes,
    step_time,
    tile_bytes,
    tile_ops,
    weights_bytes,
)
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model


@pytest.fixture(scope="module")
def d7():
    return hardware_specs.seven_b()


@pytest.fixture(scope="module")
def h100():
    return hardware_specs.h100()


def test_figure12_tile_bytes_and_operations(d7):
    """Figure 12: a 128 x 128 tile in fp16 is 32 KB (of 1,024 bytes); 1 token 32,768 operations,
    128 tokens 4,194,304."""
    assert tile_bytes(128, 128, d7.bits_per_weight / 8) == 32 * 1024
    assert tile_ops(1, 128, 128) == 32_768 and tile_ops(128, 128, 128) == 4_194_304
    assert default_numbers()["tile_kb"] == tile_bytes(128, 128, 2) / 1024
    with pytest.raises(ValueError):
        tile_bytes(128, 128, 0)


def test_weights_by_the_tile_matrix_sizes(d7):
    """Section "Weights by the tile": W_Q of the 7B is 33.6 MB, one head's slice 1.05 MB."""
    assert matrix_bytes(d7.embedding_length, d7.embedding_length, 2) / 1e6 == pytest.approx(33.55, abs=0.01)
    assert matrix_bytes(d7.embedding_length, d7.head_dim, 2) / 1e6 == pytest.approx(1.05, abs=0.01)
    n = default_numbers()
    assert n["d7_wq_mb"] == pytest.approx(matrix_bytes(4096, 4096, 2) / 1e6)


def test_figure17_layer_step_time_times_layers_is_the_step(d7, h100):
    """Figure 17: 2,048-token prefill of the 7B on an H100: per layer max(0.13, 0.9) ms x 32 = 29 ms."""
    layer = layer_step_time(d7, h100, 2048)
    assert round(layer.memory_s * 1e3, 2) == 0.13 and round(layer.compute_s * 1e3, 1) == 0.9
    assert layer.bound == "compute"
    whole = step_time(d7, h100, 2048)
    assert d7.layers * layer.step_s == pytest.approx(whole.step_s, rel=1e-9)
    assert round(d7.layers * layer.step_s * 1e3) == 29
    n = default_numbers()
    assert (n["d7_layer_memory_ms"], n["d7_layer_compute_ms"]) == (layer.memory_s * 1e3, layer.compute_s * 1e3)


def test_figure8_gpt3_softmaxes_per_step():
    """Figure 8 / section "One moving column": GPT-3 runs 96 x 96 = 9,216 softmaxes per decode step."""
    assert softmaxes_per_decode_step(load_model("gpt3-175b")) == 9_216
    assert default_numbers()["gpt3_softmaxes_per_step"] == 9_216


def test_model_in_memory_sizes_by_width(d7):
    """Section "The model in memory": the 7B is 28 GB in fp32, 14 in fp16, 7 in fp8, 3.5 in 4 bits."""
    assert [weights_bytes(d7.params, b) / 1e9 for b in (32, 16, 8, 4)] == [28, 14, 7, 3.5]
    with pytest.raises(ValueError):
        weights_bytes(d7.params, 0)


def test_section1_laptop_bus_bandwidth():
    """Section 1: 8,000 MT/s on a 128-bit bus is 128 GB/s, the laptop preset's bandwidth."""
    assert bus_bandwidth_gbs(8000, 128) == 128
    n = default_numbers()
    assert n["laptop_bus_bandwidth_gbs"] == pytest.approx(n["laptop_bandwidth_gbs"])


def test_balance_point_ops_per_byte_of_the_h100(h100):
    """Figure 16: the H100 balances at 990 / 3.35 = 295 operations per byte."""
    assert round(machine_ops_per_byte(h100)) == 295
    assert default_numbers()["h100_ops_per_byte"] == machine_ops_per_byte(h100)


def test_kv_growth_bytes_from_kv_cache(d7):
    """Figure 21: the 7B's KV cache at each context of the figure is kv_cache_bytes."""
    for row in default_numbers()["kv_growth"]:
        assert row["kv_gb"] == kv_cache_bytes(d7, row["context"]) / 1e9


def _decode_in_practice_text() -> str:
    from tests.support.content import render_chapters

    text = render_chapters(default_numbers())["05-prefill-decode.md"]
    return " ".join(text.split())


def test_decode_in_practice_laptop_balance_point_is_computed():
    """Section "Decode in practice": the laptop balances at fp16 FLOP/s / bandwidth operations per
    byte (12.288 TFLOP/s / 128 GB/s = 96 with the preset), said with what it rests on."""
    laptop = load_machine("laptop-860m")
    ops = machine_ops_per_byte(laptop)
    text = _decode_in_practice_text()
    assert f"balances at {round(ops)} operations per byte" in text
    assert f"{laptop.fp16_tflops:.1f} TFLOP/s of fp16 over {laptop.bandwidth_gbs:g} GB/s" in text
    assert "18 operations per byte" not in text


def test_decode_in_practice_published_median_share():
    """Section "Decode in practice" and figure 19: the median share and run count come from
    tokenwalk.timing.llama_bench, as does the range of machines the sentence names."""
    from tokenwalk.timing.llama_bench import published_bandwidth_shares, published_median_bandwidth_share

    runs = published_bandwidth_shares()
    text = _decode_in_practice_text()
    assert f"collects {len(runs)} published llama-bench decode runs" in text
    assert f"gets {round(100 * published_median_bandwidth_share())}" in text
    fastest = max(runs, key=lambda r: r["bandwidth_gbs"])
    assert f"{fastest['bandwidth_gbs']:,} GB/s" in text


def test_prefill_in_practice_answer_time_of_the_7b(d7, h100):
    """Section "Prefill in practice": 500 tokens after a 2,048-token prompt take about 2.3 s to
    write and 29 ms to read, so decode is 99 % of the request."""
    answer = decode_time_s(d7, h100, 500, 2048)
    assert round(answer, 1) == 2.3
    share = answer / (answer + prefill_time_s(d7, h100, 2048))
    assert round(100 * share) == 99
    assert default_numbers()["d7_example_answer_s"] == answer
    assert decode_time_s(d7, h100, 0, 2048) == 0


def test_prefill_in_practice_laptop_useful_tflops():
    """Section "Prefill in practice": 93 tok/s of Qwen3.6 is about 0.56 TFLOP/s of useful work."""
    qwen = load_model("qwen3.6-35b-a3b")
    n = default_numbers()
    assert n["laptop_useful_tflops"] == achieved_tflops(n["prefill_tok_s_moe"], qwen)
    assert round(achieved_tflops(93, qwen), 2) == 0.56


def test_weights_by_the_tile_all_shared_memory(h100, d7):
    """Section "Weights by the tile": 132 SMs x 228 KB = 31 MB, 0.2 % of the 7B's 14 GB."""
    total = shared_memory_total_bytes(h100)
    assert round(total / 1e6) == 31
    assert round(100 * total / d7.size_bytes, 1) == 0.2


def test_one_moving_column_passes_without_a_cache():
    """Section "One moving column": without a KV cache each answer token reruns all before it."""
    from tokenwalk.physics.roofline import token_passes_without_cache

    assert token_passes_without_cache(3, 2) == (3 + 1) + (3 + 2)
    n = default_numbers()
    p, o = n["request_prompt_tokens"], n["request_output_tokens"]
    assert n["no_cache_token_passes_m"] * 1e6 == sum(p + i + 1 for i in range(o))
    with pytest.raises(ValueError):
        token_passes_without_cache(-1, 3)
