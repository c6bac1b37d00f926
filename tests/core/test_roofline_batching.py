"""Batching and chunked prefill on the H100 (article: 'Decode in practice', 'Chunked prefill', figure 20)."""

import pytest

from tests.support.hardware_specs import h100, seven_b
from tokenwalk.physics.batching import batch_decode_step, max_users_same_step
from tokenwalk.physics.chunked_prefill import (
    chunk_count,
    chunk_sizes,
    chunked_prefill,
    free_ride_tokens,
    mixed_step,
    separate_steps,
)


def test_64_users_share_one_trip():
    """64 users: step 4.2 ms, compute 0.9 ms, about 15,000 tok/s, compute units busy 22 %."""
    step = batch_decode_step(seven_b(), h100(), 64)
    assert round(step.step_s * 1e3, 1) == 4.2
    assert round(step.compute_s * 1e3, 1) == 0.9
    assert round(step.server_tok_s, -3) == 15_000
    assert round(step.sm_busy_share * 100) == 22
    # each user still waits one step per token: the same ~240 tok/s as alone
    assert round(step.user_tok_s, -1) == 240


def test_up_to_295_users_the_step_does_not_grow():
    model, machine = seven_b(), h100()
    assert max_users_same_step(model, machine) == 295
    alone = batch_decode_step(model, machine, 1).step
    full = batch_decode_step(model, machine, 295).step
    assert full.bound == "memory"
    # only the users' own KV writes add bytes
    assert full.step_s == pytest.approx(alone.step_s, rel=0.02)
    assert batch_decode_step(model, machine, 400).step.bound == "compute"


def test_fig20_fifty_users_42_ms_sm_17_percent():
    step = mixed_step(seven_b(), h100(), 50, 0)
    assert round(step.step_s * 1e3, 1) == 4.2
    assert round(step.sm_busy_share * 100) == 17
    assert round(step.compute_s * 1e3, 1) == 0.7


def test_fig20_245_prompt_tokens_ride_free():
    model, machine = seven_b(), h100()
    assert free_ride_tokens(model, machine, 50) == 245
    riding = mixed_step(model, machine, 50, 245)
    assert riding.step_s == mixed_step(model, machine, 50, 0).step_s
    assert round(riding.step_s * 1e3, 1) == 4.2


def test_fig20_1000_prompt_tokens_15_ms_against_two_steps_182():
    """+1,000 prompt tokens: 1,050 x 0.014 = 15 ms; two separate steps 4.2 + 14 = 18.2 ms."""
    model, machine = seven_b(), h100()
    assert round(mixed_step(model, machine, 50, 1000).step_s * 1e3) == 15
    two = separate_steps(model, machine, 50, 1000)
    assert round(two.decode.step_s * 1e3, 1) == 4.2
    assert round(two.prefill.step_s * 1e3) == 14
    # 4.18 + 14.14 = 18.3; the article adds the rounded parts, 4.2 + 14 = 18.2
    assert two.total_s * 1e3 == pytest.approx(18.2, abs=0.15)
    assert two.total_s > mixed_step(model, machine, 50, 1000).step_s


def test_32000_tokens_in_16_chunks_of_2000():
    """16 trips (67 ms) hidden under 450 ms of arithmetic, the same as all at once."""
    model, machine = seven_b(), h100()
    run = chunked_prefill(model, machine, 32_000, 2000)
    assert len(run.chunks) == 16
    assert round(run.memory_s * 1e3) == 67
    assert round(run.compute_s * 1e3, -1) == 450
    assert run.time_s == pytest.approx(chunked_prefill(model, machine, 32_000, 32_000).time_s)


def test_fig29_13_chunks_of_512_for_6550_tokens():
    assert chunk_count(6550, 512) == 13
    sizes = chunk_sizes(6550, 512)
    assert sizes[:12] == [512] * 12 and sizes[-1] == 6550 - 12 * 512 and sum(sizes) == 6550
    assert chunk_sizes(0, 512) == []
    with pytest.raises(ValueError):
        chunk_sizes(10, 0)
