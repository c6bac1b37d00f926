"""Every weight layout the engine supports (Q4_0, Q4_1, Q8_0, F16, F32) through its matrix-
vector (decode) and matrix-matrix (prefill) kernels, against gguf.quants' dequantization.

The matrix is quantized by gguf-py itself, so the bytes are what a GGUF file holds; the
engine repacks them (cl.packing.pack_tensors) and multiplies on the OpenCL device.
Tolerance: float32 rounding of a 96-long dot product, 1e-4 relative to the largest output.
"""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("pyopencl")

# after importorskip, so that a machine without gguf or pyopencl skips these tests rather than failing
from gguf import GGMLQuantizationType as Q  # noqa: E402  (after importorskip)
from gguf.quants import dequantize, quantize  # noqa: E402  (after importorskip)

from tokenwalk.native.cl.ops import multiply_once  # noqa: E402  (after importorskip)
from tokenwalk.native.cl.packing import pack_tensors  # noqa: E402  (after importorskip)
from tokenwalk.native.model_file import Tensor  # noqa: E402  (after importorskip)

ROWS, COLS = 40, 96


def _tensor(qtype):
    rng = np.random.default_rng(7)
    w = rng.normal(0, 0.5, size=(ROWS, COLS)).astype(np.float32)
    w[3, :32] = 1e-6  # a block of tiny values: fp16 subnormal scales
    if qtype == Q.F32:
        data = w
    elif qtype == Q.F16:
        data = w.astype(np.float16)
    else:
        data = quantize(w, qtype)
    return Tensor("w", (COLS, ROWS), qtype, data)


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q8_0, Q.F16, Q.F32], ids=lambda q: q.name)
def test_matvec_and_matmul_match_gguf_dequantize(qtype):
    t = _tensor(qtype)
    w = dequantize(np.asarray(t.data), qtype).reshape(ROWS, COLS).astype(np.float64)
    packed = pack_tensors([t])
    rng = np.random.default_rng(1)
    x = rng.normal(size=COLS).astype(np.float32)
    ref = w @ x
    y = multiply_once(packed, x)
    assert np.max(np.abs(y - ref)) < 1e-4 * np.max(np.abs(ref))
    xs = rng.normal(size=(11, COLS)).astype(np.float32)  # 11 tokens: one full tile and a partial one
    ref2 = xs.astype(np.float64) @ w.T
    y2 = multiply_once(packed, xs)
    assert np.max(np.abs(y2 - ref2)) < 1e-4 * np.max(np.abs(ref2))


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q8_0], ids=lambda q: q.name)
def test_weights_stay_quantized_after_repacking(qtype):
    packed = pack_tensors([_tensor(qtype)])
    bits = 8 * packed.nbytes / (ROWS * COLS)
    # packed values plus float32 scales: 5 (Q4_0: 4 + 2 scales of 32 bits / 32), 6 (Q4_1), 9 (Q8_0)
    assert bits == {Q.Q4_0: 6.0, Q.Q4_1: 6.0, Q.Q8_0: 9.0}[qtype]
