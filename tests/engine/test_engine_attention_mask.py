"""The prefill attention kernel (kernels/attention.cl) reads keys 8 (16 with AVX-512) at a time
from a multiple of 8 (16), so some lanes of a group hold keys a query must not see: later
positions, positions before a sliding window, or, in a sliding layer's ring of cells
(kv_cache.cl), another position altogether. Those lanes must weigh exactly nothing: a weight of
exp(-87), or a first group seen by nobody, used to leave a trace of 1e-38 in the sums, enough to
decide how a later multiply-add rounds, so that on an AVX-512 host a ring and a full-length
cache (llama.cpp's --swa-full) gave logits 0.003 apart (test_engine_gemma3's ring test).

Here one chunk of 8 queries at positions 16..23 with a window of 8 runs over a ring of 16 cells
and over a full cache of 64 whose hidden cells hold other values, for twelve random draws: the
outputs are identical bit for bit, on the 8-wide path (ATTN_YMM=1, every device) and on this
host's own (16-wide with AVX-512). Before the fix the 16-wide path differed on 5 draws of 20
(an AMD Zen 4 host); the 8-wide one on none, so on a host without AVX-512 this test passes either
way."""

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from tests.support.engine_kernels import prefill_attention_once  # noqa: E402  (after importorskip)

HEADS, POS0, NTOK, WINDOW = 8, 16, 8, 8
RING_CELLS = {c: c + 16 if c < 8 else c for c in range(16)}  # positions 16..23 overwrote 0..7; 8..15 stay
# the full cache: positions 8..23 where they belong; cells 24..55 (later positions, hidden) and
# 0..7 (before every query's window) holding other positions' keys and values
FULL_CELLS = {c: c for c in range(8, 24)} | {c: c + 8 for c in range(24, 56)} | {c: 40 + c for c in range(8)}
SEEDS = range(12)  # before the fix, 5 of 20 such draws differed on the 16-wide path


@pytest.mark.parametrize("defines", [{"ATTN_YMM": 1}, {}], ids=["8-wide", "host"])
def test_keys_a_query_cannot_see_change_nothing_bit_for_bit(defines):
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        keys = (4 * rng.standard_normal((64, 64))).astype(np.float16)
        values = (4 * rng.standard_normal((64, 64))).astype(np.float16)
        qkv = rng.standard_normal((NTOK, (HEADS + 2) * 64)).astype(np.float32)
        ring = prefill_attention_once(qkv, keys, values, 16, RING_CELLS, POS0, WINDOW, HEADS, **defines)
        full = prefill_attention_once(qkv, keys, values, 64, FULL_CELLS, POS0, WINDOW, HEADS, **defines)
        assert np.array_equal(ring, full), (seed, float(np.abs(ring - full).max()))
    # a window one key wider moves them: the mask is what the test exercises
    wider = prefill_attention_once(qkv, keys, values, 64, FULL_CELLS, POS0, WINDOW + 1, HEADS, **defines)
    assert np.abs(wider - full).max() > 1e-3
