"""Speculative decoding (figure 23 decoding-tricks, section 'Three ways to wait less')."""

import pytest

from tokenwalk.physics.speculative import expected_tokens_per_round, round_cost, verify_bytes


def test_fig23_alpha_07_gamma_4_gives_2_8_tokens():
    """Figure 23: E[tokens/round] = (1 − 0.7^5) / 0.3 ≈ 2.8 at α = 0.7, γ = 4."""
    assert round(expected_tokens_per_round(0.7, 4), 1) == 2.8


def test_tokens_per_round_limits():
    assert expected_tokens_per_round(0.0, 4) == 1.0  # every draft rejected: the target's own token
    assert expected_tokens_per_round(1.0, 4) == 5.0  # all accepted plus the bonus token
    assert expected_tokens_per_round(0.5, 0) == 1.0


def test_tokens_per_round_is_the_sum_of_acceptance_runs():
    """First token always, the second after one acceptance, the third after two, ..."""
    alpha, gamma = 0.6, 3
    assert expected_tokens_per_round(alpha, gamma) == pytest.approx(sum(alpha**i for i in range(gamma + 1)))


def test_bad_alpha_or_gamma():
    with pytest.raises(ValueError, match="alpha"):
        expected_tokens_per_round(1.5, 4)
    with pytest.raises(ValueError, match="gamma"):
        expected_tokens_per_round(0.5, -1)


def test_dense_check_reads_the_weights_once_whatever_the_tokens():
    assert verify_bytes(16e9, 5) == 16e9


def test_moe_check_reads_more_experts():
    """A five-token check of a 256-expert, top-8 model reads about 37.6/8 times the experts."""
    b = verify_bytes(2e9, 5, expert_bytes_per_token=0.8e9, expert_count=256, expert_used_count=8)
    assert b == pytest.approx(1.2e9 + 0.1e9 * 37.6, rel=1e-3)


def test_dense_round_pays_and_moe_round_does_not():
    """Section 'Three ways to wait less': same draft, opposite verdicts (first-order costs)."""
    dense = round_cost(0.7, 4, step_bytes=16.8e9, draft_step_bytes=0.37e9)
    assert 1.8 < dense.speedup < 2.8
    moe = round_cost(0.7, 4, step_bytes=1.84e9, draft_step_bytes=0.37e9,
                     expert_bytes_per_token=0.62e9, expert_count=256, expert_used_count=8)
    assert moe.speedup < 1
    assert moe.verify_bytes > 2 * moe.step_bytes


def test_expert_bytes_of_a_dense_model_are_zero():
    from tokenwalk.physics.moe import expert_bytes_per_token
    from tokenwalk.specs.model import ModelSpec

    dense = ModelSpec(name="d", params=7e9, size_bytes=14e9, layers=32, embedding_length=4096,
                      head_count=32, head_count_kv=32, head_dim=128)
    assert expert_bytes_per_token(dense) == 0.0


def test_fig23_same_draft_opposite_verdicts_for_the_dense_27b_and_the_moe():
    """Figure 23 / section 'Three ways to wait less': with a Qwen3 0.6B draft at α = 0.7,
    γ = 4, the dense Qwen3.8 27B (16 GB per step, read once per check) gets roughly twice as
    fast, while Qwen3.6 35B-A3B (1.84 GB per step) reads several times more experts to check
    five tokens and comes out slower (first-order costs, bytes read)."""
    from tokenwalk.physics.moe import expected_distinct_experts, expert_bytes_per_token
    from tokenwalk.physics.speculative import model_round_cost
    from tokenwalk.specs.model import load_model

    dense = load_model("qwen3.8-27b")
    moe = load_model("qwen3.6-35b-a3b")
    # the article's example: alpha 0.7, gamma 4, a 0.6B draft (article/data/toy/speculative.json)
    d = model_round_cost(dense, 0.7, 4, 600e6)
    m = model_round_cost(moe, 0.7, 4, 600e6)
    assert round(d.step_bytes / 1e9) == 16 and d.verify_bytes == d.step_bytes
    assert 1.8 < d.speedup < 2.8
    assert m.step_bytes == moe.bytes_read_per_token
    assert m.speedup < 1
    expert_share = expected_distinct_experts(5, moe.expert_count, moe.expert_used_count) / moe.expert_used_count
    assert expert_share > 4  # up to 40 experts per layer instead of 8
    assert m.verify_bytes - (m.step_bytes - expert_bytes_per_token(moe)) > 4 * expert_bytes_per_token(moe)
    assert m.verify_bytes > 2 * m.step_bytes
