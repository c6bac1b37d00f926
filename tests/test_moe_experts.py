"""Distinct experts woken per layer (sections 'The MLP and its experts' and
'Three ways to wait less', figure 23 decoding-tricks): Qwen3.6 has 256 experts, 8 used."""

import random

import pytest

from tokenwalk.physics.moe import expected_distinct_experts, max_distinct_experts

N, K = 256, 8  # Qwen3.6 35B-A3B: expert_count, expert_used_count (its GGUF metadata)


def test_one_written_token_wakes_8_experts():
    """Section 'The MLP and its experts': one written token wakes 8 experts per layer."""
    assert expected_distinct_experts(1, N, K) == pytest.approx(8)


def test_a_five_token_check_wakes_up_to_40_expected_fewer():
    """Figure 23 (speculative decoding): a check of five tokens wakes up to 40 experts, fewer on average."""
    assert max_distinct_experts(5, N, K) == 40
    e = expected_distinct_experts(5, N, K)
    assert 35 < e < 40
    assert round(e, 1) == 37.6


def test_a_512_token_chunk_wakes_nearly_all_256():
    """Section 'The MLP and its experts': a prompt chunk of 512 tokens wakes nearly all 256."""
    assert expected_distinct_experts(512, N, K) > 255.99
    assert max_distinct_experts(512, N, K) == 256


def test_zero_tokens_wake_nothing():
    assert expected_distinct_experts(0, N, K) == 0


def test_expected_count_matches_a_simulation():
    rng = random.Random(0)
    trials = 2000
    total = 0
    for _ in range(trials):
        woken = set()
        for _ in range(5):
            woken.update(rng.sample(range(N), K))
        total += len(woken)
    assert total / trials == pytest.approx(expected_distinct_experts(5, N, K), abs=0.3)


def test_bad_counts_are_errors():
    with pytest.raises(ValueError, match="expert_used_count"):
        expected_distinct_experts(1, 8, 9)
    with pytest.raises(ValueError, match="tokens"):
        expected_distinct_experts(-1, 8, 2)
