"""Quantization of one block (figure 10, quantization; section 'The GGUF file and quantization')."""

import struct

import pytest

from article.toys import toy_quant_block
from tokenwalk.gguf.ggml_types import ggml_type
from tokenwalk.physics.quantization import (
    FORMAT_BITS_PER_WEIGHT,
    block_bits_per_weight,
    level_range,
    quantize_block,
    to_fp16,
)


@pytest.fixture(scope="module")
def fig():
    return toy_quant_block()


def test_fig10_block_is_32_weights_with_one_large_one(fig):
    """Figure 10: one block of 32 weights, one of them much larger than the rest."""
    w = sorted((abs(x) for x in fig["weights"]), reverse=True)
    assert len(fig["weights"]) == 32
    assert w[0] > 3 * w[1]
    assert fig["bit_widths"] == [8, 4, 3, 2]


def test_fig10_q4_levels_are_minus_8_to_7_and_the_scale_is_fp16(fig):
    """Figure 10 / Q4_0: integers -8 ... 7 and one fp16 scale set by the largest weight."""
    q = fig["blocks"]["4"]
    assert (q["level_min"], q["level_max"]) == (-8, 7)
    assert all(-8 <= v <= 7 for v in q["levels"])
    assert q["scale"] == to_fp16(q["scale"])
    largest = max(range(32), key=lambda i: abs(fig["weights"][i]))
    assert q["levels"][largest] == -8  # the largest weight lands on the end level exactly


def test_fig10_mean_error_about_3_percent_at_4_bits(fig):
    """Figure 10: mean error ≈ 3 % of the largest weight at 4 bits."""
    assert round(100 * fig["blocks"]["4"]["mean_error_share"]) == 3


def test_fig10_mean_error_about_12_percent_at_2_bits(fig):
    """Figure 10: mean error ≈ 12 % of the largest weight at 2 bits."""
    assert round(100 * fig["blocks"]["2"]["mean_error_share"]) == 12


def test_fig10_error_grows_as_bits_go_down_and_is_invisible_at_8(fig):
    """Figure 10: at 8 bits the error is invisible (well under 1 %); it grows as bits drop."""
    shares = [fig["blocks"][str(b)]["mean_error_share"] for b in (8, 4, 3, 2)]
    assert shares == sorted(shares)
    assert shares[0] < 0.005


def test_fig10_bits_per_weight_with_the_scale(fig):
    """Figure 10: 4-bit levels + one fp16 scale per 32 weights = 4.5 bits per weight."""
    assert fig["blocks"]["4"]["bits_per_weight"] == 4.5
    assert fig["blocks"]["8"]["bits_per_weight"] == 8.5
    assert block_bits_per_weight(4, 32) == 4.5


def test_fig10_real_formats_bits_per_weight():
    """Figure 10 and section 'The GGUF file and quantization': Q8_0 8.5, Q4_0 4.5, Q4_K 4.5, Q6_K 6.5625."""
    assert FORMAT_BITS_PER_WEIGHT == {"Q8_0": 8.5, "Q4_0": 4.5, "Q4_K": 4.5, "Q6_K": 6.5625}


def test_q4_0_bits_per_weight_agree_with_the_figures_quantizer():
    """Q4_0 stores exactly what the figure's 4-bit quantizer stores: 16 bytes of levels + an fp16 scale."""
    t = ggml_type("Q4_0")
    assert block_bits_per_weight(4, t.block_size) == t.bits_per_weight


def test_fp16_rounding_of_the_draft_example():
    """Section 'The GGUF file and quantization': float16(0.1) stores 0.0999755859375."""
    assert to_fp16(0.1) == 0.0999755859375
    with pytest.raises(ValueError, match="16-bit"):
        to_fp16(1e6)


def test_reconstruction_is_level_times_scale_and_errors_are_the_difference(fig):
    for q in fig["blocks"].values():
        for w, lv, r, e in zip(q["weights"], q["levels"], q["reconstructed"], q["errors"], strict=False):
            assert r == lv * q["scale"]
            assert e == pytest.approx(r - w)


def test_levels_are_the_nearest_under_the_stored_scale():
    w = [1.0, 0.49, -0.3, 0.0, 0.06]
    q = quantize_block(w, 4)
    d = q.scale
    for x, lv in zip(w, q.levels, strict=False):
        best = min(range(-8, 8), key=lambda k: (abs(k * d - x), -k))
        assert abs(lv * d - x) == pytest.approx(abs(best * d - x))


def test_a_weight_of_opposite_sign_as_large_as_the_largest_is_clipped():
    q = quantize_block([1.0, -1.0], 4)
    assert q.levels == [-8, 7]


def test_zero_block_and_bad_bits():
    q = quantize_block([0.0] * 4, 4)
    assert q.levels == [0] * 4 and q.mean_error_share == 0.0
    with pytest.raises(ValueError, match="bits"):
        level_range(1)
    with pytest.raises(ValueError, match="empty"):
        quantize_block([], 4)


def test_fp16_scale_matches_struct_half_precision(fig):
    s = fig["blocks"]["4"]["scale"]
    assert struct.unpack("<e", struct.pack("<e", s))[0] == s
