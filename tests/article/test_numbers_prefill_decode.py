"""Chapter 5's own names (article/numbers: laptop.py and h100.py) and the corrected number errors that
fall in content/05-prefill-decode.md: each value from its formula on stand-ins or its inputs,
and the rendered sentence that prints it."""

from __future__ import annotations

import pytest

from tests.support import hardware_specs
from tests.support.content import default_numbers, reader_words, render_chapters
from tokenwalk.physics.kv_cache import kv_cache_bytes
from tokenwalk.physics.roofline import decode_ceiling_tok_s, decode_time_s, flops_per_token, weights_bytes_read
from tokenwalk.specs.machine import load_machine


@pytest.fixture(scope="module")
def n():
    return default_numbers()


@pytest.fixture(scope="module")
def text(n):
    return reader_words(render_chapters(n)["05-prefill-decode.md"])


@pytest.fixture(scope="module")
def qwen():
    return hardware_specs.qwen()


@pytest.fixture(scope="module")
def d7():
    return hardware_specs.seven_b()


@pytest.fixture(scope="module")
def h100():
    return hardware_specs.h100()


# ----------------------------------------------------- "Prefill in practice" (error 1)

def test_laptop_chunk_balance_tokens_from_its_inputs(n, qwen):
    """Section "Prefill in practice": a 512-token chunk of the MoE reads nearly all the file, so
    it balances near 330 tokens, not 30; 512 is about one and a half times past it (a corrected error;
    the laptop's FP16 peak counted with dual issue, 12.288 TFLOP/s, as the fit's RDNA3 machines are)."""
    chunk_bytes = weights_bytes_read(qwen, n["request_chunk_tokens"])
    assert n["laptop_chunk_weights_gb"] == pytest.approx(chunk_bytes / 1e9)
    # every expert woken: the shared part and all the experts, within 4 % of the whole file
    assert 0.96 * qwen.size_bytes < chunk_bytes < qwen.size_bytes
    assert n["laptop_chunk_balance_tokens"] == pytest.approx(
        n["laptop_ops_per_byte"] * chunk_bytes / flops_per_token(qwen))
    assert round(n["laptop_chunk_balance_tokens"], -1) == 330
    assert n["laptop_chunk_past_balance"] == pytest.approx(
        n["request_chunk_tokens"] / n["laptop_chunk_balance_tokens"])
    assert round(n["laptop_chunk_past_balance"], 1) == 1.5
    # a dense token's balance is far lower: the chunk's is the one the sentence must judge by
    assert n["laptop_chunk_balance_tokens"] > 10 * n["laptop_balance_tokens_q4km"]


def test_prefill_in_practice_says_the_chunk_balance(n, text):
    assert f"even out near {round(n['laptop_chunk_balance_tokens'], -1):.0f} tokens" in text
    assert f"about {n['laptop_chunk_past_balance']:.1f} times that" in text
    assert "far past the balance point" not in text


# ----------------------------------------------------- "Prefill in practice" (error 2)

def test_answer_time_at_the_weights_only_ceiling(n, d7, h100):
    """Section "Prefill in practice": 500 tokens at the section's ceiling (weights only) take
    500 / 239 = 2.1 s; with the KV cache read every step, 2.3 s"""
    out = n["d7_example_output_tokens"]
    assert n["d7_example_answer_weights_s"] == pytest.approx(out / decode_ceiling_tok_s(d7, h100))
    assert round(n["d7_example_answer_weights_s"], 1) == 2.1
    assert round(n["d7_example_answer_s"], 1) == 2.3
    assert n["d7_example_answer_s"] > n["d7_example_answer_weights_s"]


def test_prefill_in_practice_says_which_answer_time_is_which(n, text):
    w, kv = n["d7_example_answer_weights_s"], n["d7_example_answer_s"]
    assert f"Writing takes {w:.1f} s at this section's ceiling, which counts the weights alone" in text
    assert f"and {kv:.1f} s once every step also reads the KV cache" in text


# ----------------------------------------------------- "The KV cache in bytes" (error 3)

def test_thinking_time_with_the_cache_on_stand_ins(d7, h100):
    """Section "The KV cache in bytes": with 14 GB of weights and 0.5 MB of cache per token at
    3.35 TB/s, 20,000 thinking tokens take the sum of (14e9 + 0.5e6 i) / 3.35e12 over i: about
    115 s, against 20,000 / 239 = 84 s for the weights alone. decode_time_s sums step by step
    (step i reads the cache of i + 1 tokens, its own included); the closed form must agree."""
    tokens, kv_per_token = 20_000, kv_cache_bytes(d7, 1)
    assert kv_per_token == 2 * 32 * 32 * 128 * 2  # K and V, 32 layers x 32 heads x 128, fp16
    closed = (tokens * d7.size_bytes + kv_per_token * tokens * (tokens + 1) / 2) / (h100.bandwidth_gbs * 1e9)
    assert decode_time_s(d7, h100, tokens) == pytest.approx(closed, rel=1e-9)
    assert round(decode_time_s(d7, h100, tokens)) == 115
    assert round(tokens / decode_ceiling_tok_s(d7, h100)) == 84


def test_thinking_with_kv_from_its_inputs(n, d7, h100):
    assert n["thinking_with_kv_s"] == decode_time_s(d7, h100, n["thinking_tokens"])
    assert round(n["thinking_with_kv_s"]) == 115
    assert n["thinking_kv_gb"] == kv_cache_bytes(d7, n["thinking_tokens"]) / 1e9
    # the same curve as figure 21 (kv-growth): the last step is as slow as the figure says
    last = decode_ceiling_tok_s(d7, h100, n["thinking_tokens"] - 1)
    assert n["thinking_with_kv_s"] > n["thinking_tokens"] / n["d7_ceiling_tok_s"]
    assert n["thinking_with_kv_s"] < n["thinking_tokens"] / last


def test_kv_section_says_the_thinking_time_with_the_cache(n, text):
    assert f"that would be {round(n['thinking_s'])} s" in text
    assert f"takes about {round(n['thinking_with_kv_s'])} s before the first visible word" in text


# ----------------------------------------------------- opening and "Decode in practice"

def test_laptop_bandwidth_efficiency_is_the_calibrated_one(n):
    """Section "Decode in practice": the share of the spec bandwidth the laptop's reads reach,
    solved by the timing model from the laptop's two measured decode speeds."""
    from tokenwalk.timing.model import coefficients

    laptop = load_machine("laptop-860m")
    coeffs = coefficients(laptop)
    assert coeffs.row == "laptop-860m"
    assert n["laptop_bandwidth_efficiency"] == coeffs.bandwidth_efficiency
    assert 0 < n["laptop_bandwidth_efficiency"] < 1


def test_server_chunk_sizes_are_cited_and_printed(n, text):
    """Section "Chunked prefill": servers run prompts in chunks of 512 to 2,048 tokens
    (cited/article.json, scenarios)."""
    low, high = n["sc_server_chunk_tokens"]
    assert (low, high) == (512, 2048)
    assert f"typically {low:,} to {high:,} tokens" in text


def test_rl_step_is_half_decode_half_whole_matrix(text):
    """Section "Prefill in practice": a reinforcement-learning step is half decode and half
    whole-matrix pass."""
    assert "is half decode" in text and "half whole-matrix pass" in text


def test_build_machine_box_left_this_chapter(text):
    """The build machine's measurements move to chapter 7's TokenWalk section;
    chapter 5 keeps only the laptop's own measurements."""
    from tests.support.content import CONTENT

    assert "Measured on the machine that built this page" not in text
    assert "n.engine" not in (CONTENT / "05-prefill-decode.md").read_text(encoding="utf-8")
