"""The request's walk (figure 29, the trace; figure 27's envelope; the lifecycle's cold load)."""


import pytest

from tests.support.hardware_specs import h100, laptop, qwen, seven_b
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.kv_cache import kv_bytes_per_token
from tokenwalk.physics.roofline import decode_ceiling_tok_s
from tokenwalk.walk import Request, walk_request

ARTICLE_REQUEST = Request(prompt_tokens=6550, output_tokens=300, num_ctx=16_384)


@pytest.fixture(scope="module")
def article_walk():
    return walk_request(qwen(), laptop(), ARTICLE_REQUEST)


def test_stages_in_order(article_walk):
    assert [s.name for s in article_walk.stages] == ["load", "template", "tokenize", "prefill", "decode", "stop"]
    bounds = {s.name: s.bound for s in article_walk.stages}
    assert bounds["load"] == "disk" and bounds["prefill"] == "compute" and bounds["decode"] == "memory"
    assert article_walk.total_s == pytest.approx(sum(s.seconds for s in article_walk.stages))


def test_fig29_13_chunks_of_512_and_134_mb(article_walk):
    """Trace: about 6,550 tokens, 13 chunks of 512, 134 MB of KV cache after prefill."""
    prefill = article_walk.stage("prefill")
    assert prefill.detail["chunk_count"] == 13
    assert [c["tokens"] for c in prefill.detail["chunks"]][:12] == [512] * 12
    assert round(prefill.detail["kv_written_bytes"] / 1e6) == 134


def test_fig29_decode_step_reads_its_weights_and_cache_in_about_85_ms(article_walk):
    """Trace step 9: each decoding step reads the model's bytes per token and 134 MB of cache, ~85 ms.

    The walk calibrates decode on the measured 11.7 tok/s (at the benchmark's 2,900-token
    context) and lets the cache grow to 6,550 tokens, so its step is a few % longer.
    """
    decode = article_walk.stage("decode")
    weights = qwen().bytes_read_per_token
    kv = decode.detail["first_step_bytes"] - weights
    assert round(kv / 1e6) == round(6550 * kv_bytes_per_token(qwen()) / 1e6) == 134
    assert decode.detail["first_step_bytes"] == pytest.approx(weights + 6550 * kv_bytes_per_token(qwen()), rel=1e-4)
    assert decode.detail["first_step_s"] == pytest.approx(0.085, rel=0.06)
    assert decode.detail["steps"] == 300


def test_fig29_fig27_about_70_s_to_first_token_and_26_s_of_writing(article_walk):
    """Envelope: 6,500 / 93 = 70 s of prefill, 300 / 11.7 = 26 s of writing (the walk within 6 %)."""
    assert article_walk.ttft_s == pytest.approx(70, rel=0.06)
    assert article_walk.decode_s == pytest.approx(26, rel=0.06)
    assert article_walk.decode_tok_s == pytest.approx(11.7, rel=0.06)
    assert article_walk.prefill_tok_s == pytest.approx(93, rel=0.06)


def test_calibration_reproduces_the_measurements_at_their_own_context():
    """At the measured run's sizes (2,900 tokens) the walk gives back 11.7 and 93 tok/s."""
    walk = walk_request(qwen(), laptop(), Request(prompt_tokens=2900, output_tokens=1, warm=True))
    assert walk.prefill_tok_s == pytest.approx(93, rel=0.005)
    assert walk.decode_tok_s == pytest.approx(11.7, rel=0.005)


def test_fig24_cold_load_55_s_and_warm_skips_it(article_walk):
    assert round(article_walk.load_s) == 55
    warm = walk_request(qwen(), laptop(), Request(6550, 300, 16_384, warm=True))
    assert warm.load_s == 0 and "load" not in [s.name for s in warm.stages]
    assert warm.ttft_s == pytest.approx(article_walk.ttft_s)


def test_fig27_decode_ceiling_is_128_gb_s_over_the_bytes_per_token():
    assert decode_ceiling_tok_s(qwen(), laptop()) == pytest.approx(128e9 / qwen().bytes_read_per_token)


def test_fig22_memory_check_on_the_laptop(article_walk):
    """32 GB + 21.7 GB + 336 MB of 64 GB: fits, about 10 GB free (the article rounds to ≈ 9.8)."""
    memory = article_walk.memory
    assert memory["fits"] and not article_walk.warnings
    assert round(memory["kv_cache_bytes"] / 1e6) == 336
    assert memory["free_bytes"] / 1e9 == pytest.approx(9.8, abs=0.2)


def test_a_model_that_does_not_fit_warns():
    walk = walk_request(qwen(), laptop(), Request(6550, 300, num_ctx=262_144, users=8))
    assert not walk.memory["fits"]
    assert any("does not fit" in w for w in walk.warnings)


def test_h100_7b_walk_decode_follows_the_timing_model_below_the_ceiling():
    from tokenwalk.timing import stages as timing

    walk = walk_request(seven_b(), h100(), Request(2000, 500, warm=True))
    assert walk.decode_tok_s < decode_ceiling_tok_s(seven_b(), h100(), 2000)
    exact = sum(timing.decode_step_s(seven_b(), h100(), 2000 + i) for i in range(500))
    assert walk.decode_s == pytest.approx(exact, rel=0.005)


def test_users_share_the_weights_but_not_the_caches():
    """64 users on short contexts keep nearly the speed of one; on long ones each cache weighs."""
    short = [walk_request(seven_b(), h100(), Request(1, 20, warm=True, users=u)) for u in (1, 64)]
    assert 0.9 * short[0].decode_tok_s < short[1].decode_tok_s < short[0].decode_tok_s
    long = [walk_request(seven_b(), h100(), Request(1000, 200, warm=True, users=u)) for u in (1, 64)]
    # 64 caches of ~1,100 tokens at 0.5 MB are ~37 GB a step against 14 GB of weights: the
    # speed falls at least to half, and no lower than the bytes alone would make it (a step's
    # fixed cost is shared)
    from tokenwalk.physics.kv_cache import kv_cache_bytes

    model, mid = seven_b(), 1000 + 100
    bytes_ratio = (model.bytes_read_per_token + kv_cache_bytes(model, mid)) / (
        model.bytes_read_per_token + 64 * kv_cache_bytes(model, mid))
    assert bytes_ratio < long[1].decode_tok_s / long[0].decode_tok_s < 0.5


def test_speculative_decoding_uses_expected_tokens_per_round():
    plain = walk_request(seven_b(), h100(), Request(1000, 280, warm=True))
    spec = walk_request(seven_b(), h100(), Request(1000, 280, warm=True, spec_alpha=0.7, spec_gamma=4))
    decode = spec.stage("decode")
    assert decode.detail["tokens_per_step"] == pytest.approx(2.77, abs=0.01)
    assert decode.detail["steps"] == round(280 / 2.7731)
    assert spec.decode_tok_s > 1.5 * plain.decode_tok_s


@pytest.mark.parametrize("fields, message", [
    ({"prompt_tokens": 0, "output_tokens": 10}, "prompt_tokens"),
    ({"prompt_tokens": 10, "output_tokens": -1}, "output_tokens"),
    ({"prompt_tokens": 10, "output_tokens": 10, "num_ctx": 15}, "num_ctx 15 is smaller"),
    ({"prompt_tokens": 10, "output_tokens": 10, "kv_type": "q3"}, "kv_type"),
    ({"prompt_tokens": 10, "output_tokens": 10, "chunk_tokens": 0}, "chunk_tokens"),
    ({"prompt_tokens": 10, "output_tokens": 10, "spec_alpha": 0.5}, "both"),
    ({"prompt_tokens": 10, "output_tokens": 10, "spec_alpha": 1.5, "spec_gamma": 2}, "spec_alpha"),
])
def test_bad_requests_name_the_field(fields, message):
    with pytest.raises(TokenwalkError, match=message):
        walk_request(seven_b(), h100(), Request(**fields))


def test_sampled_long_request_matches_exact_sum():
    """Long requests are summed from samples; the result stays within 0.5 % of the exact sum."""
    from tokenwalk.timing import stages as timing
    model, machine = seven_b(), h100()
    walk = walk_request(model, machine, Request(3000, 5000, warm=True))
    exact = sum(timing.decode_step_s(model, machine, 3000 + i) for i in range(5000))
    assert walk.decode_s == pytest.approx(exact, rel=0.005)
