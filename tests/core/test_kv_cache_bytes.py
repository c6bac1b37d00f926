"""KV cache sizes of the article ("The KV cache in bytes", figures 21, 22, 27, 29)."""

import pytest

from tests.support.hardware_specs import h100, qwen, seven_b
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.kv_cache import kv_bytes_per_element, kv_bytes_per_token, kv_cache_bytes, kv_reservation_bytes
from tokenwalk.physics.roofline import decode_ceiling_tok_s


def test_bytes_per_element_of_cache_types():
    assert kv_bytes_per_element("f16") == 2
    assert kv_bytes_per_element("q8_0") == 34 / 32
    assert kv_bytes_per_element("Q4_0") == 18 / 32
    with pytest.raises(TokenwalkError, match="kv_type"):
        kv_bytes_per_element("q3_x")


def test_fig27_qwen_20480_bytes_per_token():
    """2 x 10 x 2 x 256 x 2 = 20,480 bytes (20 KB) per token for Qwen3.6 in f16."""
    model = qwen()
    assert (model.kv_layers, model.head_count_kv, model.head_dim) == (10, 2, 256)
    assert kv_bytes_per_token(model) == 20_480


def test_fig21_7b_half_a_megabyte_per_token():
    """The 7B without GQA: 2 x 32 x 4,096 x 2 bytes = 0.5 MB per token, 25 times Qwen3.6's."""
    per_token = kv_bytes_per_token(seven_b())
    assert per_token == 2 * 32 * 4096 * 2
    assert round(per_token / 2**20, 1) == 0.5
    assert int(per_token / kv_bytes_per_token(qwen())) == 25  # "twenty-five times more"


def test_fig22_reservations_336_mb_and_54_gb_and_215_without_hybrid():
    """num_ctx 16,384 -> 336 MB; 262,144 -> 5.4 GB; all 40 layers keeping a cache -> 21.5 GB."""
    model = qwen()
    assert round(kv_reservation_bytes(model, 16_384) / 1e6) == 336
    assert round(kv_reservation_bytes(model, 262_144) / 1e9, 1) == 5.4
    assert round(kv_reservation_bytes(model, 262_144, kv_layer_count=model.layers) / 1e9, 1) == 21.5


def test_q8_0_cache_is_about_half():
    model = qwen()
    share = kv_reservation_bytes(model, 16_384, "q8_0") / kv_reservation_bytes(model, 16_384)
    assert round(share, 2) == 0.53


def test_fig29_134_mb_at_6550_tokens():
    """Trace step 6: about 6,550 tokens leave 134 MB of cache in the ten attention layers."""
    assert round(kv_cache_bytes(qwen(), 6550) / 1e6) == 134


def test_fig21_decode_speed_as_context_grows():
    """Figure 21: 0, 2,500, 8,000, 16,000, 32,000 tokens -> 239, 219, 184, 150, 109 tok/s."""
    model, machine = seven_b(), h100()
    speeds = [round(decode_ceiling_tok_s(model, machine, n)) for n in (0, 2500, 8000, 16_000, 32_000)]
    assert speeds == [239, 219, 184, 150, 109]


def test_fig21_kv_gigabytes_per_step():
    """14 + 1.3, + 4.2, + 8.4, + 16.8 GB per step."""
    per_token = kv_bytes_per_token(seven_b())
    assert [round(n * per_token / 1e9, 1) for n in (2500, 8000, 16_000, 32_000)] == [1.3, 4.2, 8.4, 16.8]


def test_negative_num_ctx_is_an_error():
    with pytest.raises(TokenwalkError, match="num_ctx"):
        kv_reservation_bytes(qwen(), -1)
