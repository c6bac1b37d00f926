"""The OpenCL engine (PoCL by default) against the numpy reference forward pass.

Tolerance: every logit of every position within 0.05 of the reference (logits of this model
reach about 30), and the top-1 token identical at every position. Both keep keys and values
in fp16 (the engine's cache, as llama.cpp's): a value that float32 rounding puts on the other
side of an fp16 rounding boundary moves by an fp16 step, which leaves logit differences up
to about 0.02 (with a float32 cache they stayed near 5e-5). The prompt runs in three chunks (24 + 24 + 16 tokens, the
last tile partial) so chunk boundaries and cache positions are exercised; the decode test
runs the matrix-vector path token by token over the same positions.

The decode path (and the head after a prefill) multiplies integers where the device allows
(x86 with AVX2): it rounds each product's input to 8 bits per value, 32 values per scale, as
llama.cpp does. Its logits are held to DECODE_ATOL = 1.0 of the float reference: measured,
the engine's decode steps at positions 59-63 are within 0.20 to 0.74, and llama.cpp's own
logits for the same prompt within 0.52 to 0.72 there (up to 1.96 over all 64 positions, its
prompt batch). The top-1 token must match wherever the reference's top two are more than
2 x DECODE_ATOL apart; elsewhere (a near-tie) the engine's pick must be a token the reference
puts within 2 x DECODE_ATOL of its best, the tokens that logits each allowed DECODE_ATOL of
movement can reorder. Position 61 is such a tie: the reference's three best are within 0.10
(16.48, 16.43, 16.38); on an AVX-512 host the engine picked the second, on an AVX2-only one
(AMD EPYC) the third, at 16.30 against 16.29 and 16.27 for the other two.

The prefill products multiply integers too (x86 with AVX2), each input rounded the same way
once per chunk, so prefill logits move as decode's do. They are held as decode's are: the
last five positions (59-63, those the decode test reads) within DECODE_ATOL, top-1 as above,
and the mean over all positions of the largest difference within DECODE_ATOL; measured,
0.57 to 0.92 at 59-63 (llama.cpp 0.51 to 0.72) and a mean of 0.72 (llama.cpp 0.71). Every
position is not held to a bound from llama.cpp's, because a few positions amplify any
rounding: over all 64 the engine's largest difference is 1.63 in this build (llama.cpp's
1.96), but 4.46 (at position 22, where llama.cpp is 1.3 off) in a build that differed only
in the order of float sums in attention, and inputs perturbed by 1e-4 (far below the 8-bit
rounding) moved it between 2.0 and 4.5, always at positions 19, 20 or 22; on three other
50 to 64-token prompts the engine's largest is 1.39 to 2.15 and llama.cpp's 1.28 to 2.02.
Every position is held to ATOL on the float prefill path instead (NO_INT_DOT=1 and
ATTN_YMM=1: the products and the attention GPUs compile), which checks the graph, the kernels
and the chunking exactly.
"""

import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
ATOL = 0.05
DECODE_ATOL = 1.0
TEXT = ("The patient is a 67-year-old woman with atrial fibrillation, treated with apixaban 5 mg twice "
        "daily since March. Her creatinine clearance is 48 mL/min. She asks whether the new antibiotic "
        "interacts with her anticoagulant, and what the pharmacist should check first, and how "
        "often her kidney function should be measured over the coming months.")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not MODEL.exists(), reason="SmolLM2 file not fetched")]


@pytest.fixture(scope="module")
def prompt_ids():
    from tokenwalk.text.tokenizer import load_tokenizer

    ids = load_tokenizer(MODEL).encode(TEXT)
    assert len(ids) >= 64
    return ids[:64]


@pytest.fixture(scope="module")
def reference(prompt_ids):
    from tests.support.reference_cache import reference_logits

    return reference_logits(MODEL, prompt_ids)


@pytest.fixture(scope="module")
def engine():
    pytest.importorskip("pyopencl")
    from tokenwalk.native.engine import Engine

    return Engine(MODEL, ctx_tokens=96, chunk_tokens=24)


def test_float_prefill_logits_of_64_positions_match_reference(prompt_ids, reference):
    pytest.importorskip("pyopencl")
    from tokenwalk.native.engine import Engine

    # the float products and the 8-wide prefill attention: what a GPU compiles (ATTN_YMM=1; the
    # Gemma 3 test's short-window run checks the 16-wide one on the float products)
    engine = Engine(MODEL, ctx_tokens=96, chunk_tokens=24, defines={"NO_INT_DOT": 1, "ATTN_YMM": 1})
    logits = engine.prefill(prompt_ids, logits_all=True)
    assert logits.shape == reference.shape == (64, 49152)
    assert np.max(np.abs(logits - reference)) < ATOL
    assert np.array_equal(logits.argmax(axis=1), reference.argmax(axis=1))


def test_prefill_logits_match_reference_as_decode_does(engine, prompt_ids, reference):
    check_prefill(engine, prompt_ids, reference)


def check_prefill(engine, prompt_ids, reference):
    """The 64 prompt positions' logits from one prefill, held as decode's are (also run on the
    other vector width's device, test_engine_other_vector_width.py)."""
    logits = engine.prefill(prompt_ids, logits_all=True)
    assert logits.shape == reference.shape == (64, 49152)
    for pos in range(59, 64):
        _assert_decode_close(logits[pos], reference[pos])
    assert np.mean(np.max(np.abs(logits - reference), axis=1)) < DECODE_ATOL


def _assert_decode_close(logits, ref):
    assert np.max(np.abs(logits - ref)) < DECODE_ATOL
    top2 = np.argsort(ref)[-2:]
    if ref[top2[1]] - ref[top2[0]] > 2 * DECODE_ATOL:
        assert int(logits.argmax()) == int(top2[1])
    else:
        assert ref[top2[1]] - ref[int(logits.argmax())] <= 2 * DECODE_ATOL


def test_decode_steps_match_reference(engine, prompt_ids, reference):
    check_decode(engine, prompt_ids, reference)


def check_decode(engine, prompt_ids, reference):
    """A prefill of 60 tokens, then four decode steps, each against the reference."""
    last = engine.prefill(prompt_ids[:60])
    _assert_decode_close(last, reference[59])
    for pos in range(60, 64):
        _assert_decode_close(engine.decode(prompt_ids[pos], pos), reference[pos])


def test_weights_stay_quantized_on_the_device(engine):
    # Q4_1 layers plus the tied Q8_0 head: far below the 4 bytes a float32 weight would take.
    params = sum(int(np.prod(t.shape)) for t in engine.model.tensors.values())
    assert engine.tied_head
    assert engine.weight_bytes < 0.9 * params  # under 0.9 byte per weight
