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


# ---- one source of expert bytes (tokenwalk.physics.moe.routed_expert_bytes)

def test_a_file_with_a_tensor_table_gives_its_experts_bytes_to_every_user(tmp_path):
    """model_from_gguf sums the *_exps tensors of the blocks a token runs; the per-token
    bytes, a prompt step's bytes and a speculative check all read that one number."""
    from tests.support.gguf_files import write_hybrid_moe_file
    from tokenwalk.gguf.header import read_gguf_header
    from tokenwalk.physics import moe
    from tokenwalk.physics.roofline import weights_bytes_read
    from tokenwalk.physics.speculative import model_round_cost
    from tokenwalk.specs.model import load_model

    path = write_hybrid_moe_file(tmp_path / "hybrid.gguf")
    m = load_model(path)
    header = read_gguf_header(path)
    runs = [t for t in header.tensors if "_exps" in t.name and int(t.name.split(".")[1]) < m.layers]
    assert m.expert_bytes == sum(t.n_bytes for t in runs) > 0
    assert moe.routed_expert_bytes(m) == m.expert_bytes
    per_token = m.expert_bytes * m.expert_used_count / m.expert_count
    assert moe.expert_bytes_per_token(m) == pytest.approx(per_token)
    shared = m.bytes_read_per_token - per_token
    # a long prompt step wakes every expert: the shared part plus all of them
    assert weights_bytes_read(m, 4096) == pytest.approx(shared + m.expert_bytes)
    # a speculative check of gamma + 1 tokens reads what a prompt step of gamma + 1 tokens reads
    cost = model_round_cost(m, 0.7, 4, 1e6)
    assert cost.verify_bytes == pytest.approx(weights_bytes_read(m, 5))


def test_without_a_tensor_table_the_sizes_estimate_the_experts_for_every_user():
    """Qwen3.6's preset without its tensor table: 40 layers x 256 experts x 3 x 2,048 x 512
    weights at the file's 4.89 bits, and the prompt step and the speculative check agree."""
    from tokenwalk.physics import moe
    from tokenwalk.physics.roofline import weights_bytes_read
    from tokenwalk.physics.speculative import model_round_cost
    from tokenwalk.specs.model import model_from_dict
    from tokenwalk.specs.schema import read_preset

    # the table goes, and with it the flag that says it was recalled
    data = {k: v for k, v in read_preset("models", "qwen3.6-35b-a3b")[0].items() if k not in ("tensor_table", "recalled")}
    q = model_from_dict(data, "qwen3.6-35b-a3b without its table")
    assert q.expert_bytes is None
    weights = 40 * 256 * 3 * 2048 * 512
    assert moe.routed_expert_bytes(q) == pytest.approx(weights * q.bits_per_weight / 8)
    assert round(moe.routed_expert_bytes(q) / 1e9, 1) == 19.7
    assert moe.expert_bytes_per_token(q) == pytest.approx(moe.routed_expert_bytes(q) * 8 / 256)
    assert weights_bytes_read(q, 1) == q.bytes_read_per_token
    assert model_round_cost(q, 0.7, 4, 6e8).verify_bytes == pytest.approx(weights_bytes_read(q, 5))


def test_without_an_expert_width_the_file_and_the_per_token_bytes_give_the_experts():
    """E = (W - R) / (1 - used/count): a stand-in with no tensor table and no expert width."""
    from tests.support.hardware_standins import qwen_standin
    from tokenwalk.physics import moe

    q = qwen_standin()
    e = moe.routed_expert_bytes(q)
    assert e == pytest.approx((q.size_bytes - q.bytes_read_per_token) / (1 - 8 / 256))
    assert q.size_bytes - e + e * 8 / 256 == pytest.approx(q.bytes_read_per_token)


def test_a_dense_model_has_no_expert_bytes():
    from tests.support.hardware_standins import seven_b
    from tokenwalk.physics import moe
    from tokenwalk.physics.roofline import weights_bytes_read

    d = seven_b()
    assert moe.routed_expert_bytes(d) == moe.expert_bytes_per_token(d) == moe.step_expert_bytes(d, 512) == 0.0
    assert weights_bytes_read(d, 512) == d.bytes_read_per_token
