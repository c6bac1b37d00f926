"""The attention row (figure 3, attention-row) and the causal mask (figure 6, causal-mask)."""

import math

import pytest

from article.toys import load_toy, toy_attention_row, toy_causal_grid
from tokenwalk.physics.attention import (
    attention_row,
    causal_mask,
    causal_weights,
    dot,
    scaled_scores,
    softmax,
)


def test_dot_product_of_the_draft_example():
    """Section 'Dot products and matrices': (0.8, 0.1, 0.5) · (0.31, -1.2, 0.07) = 0.163."""
    assert dot([0.8, 0.1, 0.5], [0.31, -1.2, 0.07]) == pytest.approx(0.163)


def test_dot_rejects_different_lengths():
    with pytest.raises(ValueError, match="lengths differ"):
        dot([1, 2], [1])


def test_softmax_sums_to_one_and_keeps_order():
    w = softmax([2.0, 1.0, 0.5])
    assert math.fsum(w) == pytest.approx(1.0)
    assert w[0] > w[1] > w[2]


def test_softmax_is_stable_for_large_scores():
    w = softmax([1000.0, 999.0])
    assert w[0] == pytest.approx(1 / (1 + math.exp(-1)))


def test_softmax_masked_scores_get_exactly_zero():
    w = softmax([1.0, float("-inf"), 2.0])
    assert w[1] == 0.0
    assert math.fsum(w) == pytest.approx(1.0)


def test_softmax_all_masked_is_an_error():
    with pytest.raises(ValueError, match="masked"):
        softmax([float("-inf")] * 3)


def test_fig3_attention_row_weights_4_3_74_4_3_6_5_0_percent():
    """Figure 3 (attention-row): q·k 0.6, 0.1, 3.4, 0.6, 0.2, 0.9, 0.8, -inf -> 4, 3, 74, 4, 3, 6, 5, 0 %."""
    row = toy_attention_row()
    assert row["scores"][:7] == [0.6, 0.1, 3.4, 0.6, 0.2, 0.9, 0.8]
    assert row["scores"][7] == float("-inf")
    assert [round(100 * w) for w in row["weights"]] == [4, 3, 74, 4, 3, 6, 5, 0]
    assert row["weights"][7] == 0.0
    assert math.fsum(row["weights"]) == pytest.approx(1.0)
    assert row["sentence"][row["query_token"] - 1] == "its"
    assert row["value_width"] == 256


def test_fig3_mask_from_hides_later_keys_whatever_their_score():
    """Figure 3: key 8 comes after the query, so its weight is 0 whatever score it had."""
    data = load_toy("attention_row")
    a = attention_row(data["scores"], mask_from=7)
    b = attention_row(data["scores"][:7] + [99.0], mask_from=7)
    assert a == b and a[7] == 0.0


def test_attention_row_output_is_the_weighted_sum_of_values():
    values = [[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]]
    weights, out = attention_row([0.0, 0.0, 7.0], values=values, mask_from=2)
    assert weights[:2] == [0.5, 0.5] and weights[2] == 0.0
    assert out == pytest.approx([0.5, 0.5])


def test_scaled_scores_divide_by_root_dk():
    assert scaled_scores([1, 1, 1, 1], [[1, 1, 1, 1]]) == [2.0]


def test_causal_mask_helper():
    assert causal_mask([1, 2, 3], 2) == [1, 2, float("-inf")]
    assert causal_mask([1, 2, 3], None) == [1, 2, 3]


def test_fig6_causal_grid_weights_of_the_draft():
    """Figure 6 (causal-mask): the weight grid of 'Amiodarone raises warfarin levels so lower its dose'."""
    grid = toy_causal_grid()
    pct = [[round(100 * w) for w in row] for row in grid["weights"]]
    assert pct == [
        [100],
        [77, 23],
        [33, 27, 40],
        [10, 20, 59, 12],
        [25, 11, 14, 30, 20],
        [10, 12, 26, 17, 21, 14],
        [4, 3, 74, 4, 3, 6, 5],
        [4, 3, 24, 7, 4, 16, 36, 6],
    ]


def test_fig6_row7_is_the_attention_row_of_fig3():
    """Figures 3 and 6 show the same head: row 7 of the grid is the attention row."""
    grid = toy_causal_grid()
    row = toy_attention_row()
    assert grid["scores"][6] == row["scores"][:7]


def test_fig6_rows_only_grow_nothing_above_changes():
    """Figure 6: adding token 8 adds one row; the 7 rows above do not change by a digit."""
    grid = toy_causal_grid()
    before = causal_weights(grid["scores"][:7])
    after = causal_weights(grid["scores"])
    assert after[:7] == before
    assert len(after[7]) == 8


def test_causal_weights_rejects_a_row_of_the_wrong_length():
    with pytest.raises(ValueError, match="row 2"):
        causal_weights([[0.0], [0.0, 1.0, 2.0]])


def test_figure_8_gpt3_softmaxes_per_decode_step_is_9216():
    """Figure 8 (kv-cache): 96 layers x 96 heads = 9,216 softmaxes in one decode step."""
    from tokenwalk.physics.attention import softmaxes_per_decode_step
    from tokenwalk.specs.model import load_model

    assert softmaxes_per_decode_step(load_model("gpt3-175b")) == 9216
