"""Every weight layout the engine supports (Q4_0, Q4_1, Q5_0, Q8_0, Q4_K, Q6_K, F16, F32) through its matrix-
vector (decode) and matrix-matrix (prefill) kernels, against gguf.quants' dequantization.

The matrix is quantized by gguf-py itself, so the bytes are what a GGUF file holds; the
engine repacks them (cl.packing.pack_tensors) and multiplies on the OpenCL device.
Rows of 96 columns (three 32-weight blocks: an odd count, which Q5_0 pads) and, for the
256-weight K-quant blocks, of 512. Tolerance: float32 rounding of the dot products, 1e-4
relative to the largest output. Where the decode kernel multiplies integers (x86 with AVX2,
as llama.cpp does), its input is first rounded to 8 bits per value, 32 values per scale
(llama.cpp's quantize_row_q8_0): the decode reference is then the dequantized matrix times
that rounded input, written here in numpy, with the same 1e-4. The prefill product rounds its
input the same way where it multiplies integers (matmul_q8: x86 with AVX2, and Q8_0 weights
only where the CPU has VNNI), and is held to the same reference.
"""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("pyopencl")

# after importorskip, so that a machine without gguf or pyopencl skips these tests rather than failing
from gguf import GGMLQuantizationType as Q  # noqa: E402  (after importorskip)
from gguf.quants import dequantize, quantize  # noqa: E402  (after importorskip)

from tests.support.engine_kernels import (  # noqa: E402  (after importorskip)
    decode_rounds_input,
    multiply_once,
    multiply_sharing_input,
    prefill_rounds_input,
)
from tokenwalk.native.cl.packing import pack_tensors  # noqa: E402  (after importorskip)
from tokenwalk.native.model_file import Tensor  # noqa: E402  (after importorskip)

ROWS = 40
K_QUANTS = (Q.Q4_K, Q.Q6_K)


def _cols(qtype) -> int:
    return 512 if qtype in K_QUANTS else 96


def _tensor(qtype, rows: int = ROWS):
    rng = np.random.default_rng(7)
    COLS = _cols(qtype)
    w = rng.normal(0, 0.5, size=(rows, COLS)).astype(np.float32)
    w[3, :32] = 1e-6  # a block of tiny values: fp16 subnormal scales
    w[5, :256] += 1.5  # a block far from zero: Q4_K's minimums at work
    if qtype in K_QUANTS:
        # gguf-py dequantizes K-quants but does not quantize them: random blocks (every byte
        # pattern is a valid block) with finite fp16 scales in the places the format keeps them
        size, scale_at = {Q.Q4_K: (144, (0, 2)), Q.Q6_K: (210, (208,))}[qtype]
        data = rng.integers(0, 256, size=(rows, COLS // 256, size), dtype=np.uint8)
        for at in scale_at:
            d = rng.uniform(1e-3, 2e-2, size=(rows, COLS // 256)).astype(np.float16)
            data[:, :, at:at + 2] = d.view(np.uint8).reshape(rows, COLS // 256, 2)
        data[3, 0, 0:2] = np.array([1e-7], np.float16).view(np.uint8)  # a subnormal fp16 scale
        data = data.reshape(rows, -1)
    elif qtype == Q.F32:
        data = w
    elif qtype == Q.F16:
        data = w.astype(np.float16)
    else:
        data = quantize(w, qtype)
    return Tensor("w", (COLS, rows), qtype, data)


def q8_rounded(x: np.ndarray) -> np.ndarray:
    """x rounded as llama.cpp's quantize_row_q8_0: per 32 values d = max|x| / 127, round(x / d) * d."""
    blocks = x.astype(np.float32).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    d = amax / np.float32(127)
    q = np.rint(blocks * np.where(amax > 0, np.float32(127) / np.where(amax > 0, amax, 1), 0))
    return (q * d).reshape(x.shape).astype(np.float64)


def test_q8_rounding_stand_in():
    x = np.array([0.5, -1.0, 0.25, 0.0] * 8, np.float32)
    r = q8_rounded(x)
    assert r[1] == pytest.approx(-1.0) and r[0] == pytest.approx(64 / 127)  # 63.5 -> 64 (half to even)
    assert np.max(np.abs(r - x)) <= 0.5 / 127 + 1e-7


def test_decode_rounds_input_on_x86_avx2():
    import pyopencl as cl

    dev = cl.get_platforms()[0].get_devices()[0]
    if "avx2" not in dev.name and "avx512" not in dev.name and "skylake" not in dev.name:
        pytest.skip(f"{dev.name}: not a PoCL x86 device with AVX2")
    assert decode_rounds_input("Q4_K") and decode_rounds_input("Q8_0")
    assert not decode_rounds_input("F32")


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q8_0, Q.Q4_K, Q.Q6_K, Q.F16, Q.F32],
                         ids=lambda q: q.name)
def test_matvec_and_matmul_match_gguf_dequantize(qtype):
    t = _tensor(qtype)
    COLS = _cols(qtype)
    w = dequantize(np.asarray(t.data), qtype).reshape(ROWS, COLS).astype(np.float64)
    packed = pack_tensors([t])
    rng = np.random.default_rng(1)
    x = rng.normal(size=COLS).astype(np.float32)
    ref = w @ (q8_rounded(x) if decode_rounds_input(packed.kernel_type) else x)
    y = multiply_once(packed, x)
    assert np.max(np.abs(y - ref)) < 1e-4 * np.max(np.abs(ref))
    _check_prefill(packed, w, rng)


def _check_prefill(packed, w, rng, **defines):
    # 11 tokens: one full tile of the float matmul and a partial one; 37: two tiles of 16
    # tokens of the integer one and a partial third
    for ntok in (11, 37):
        xs = rng.normal(size=(ntok, w.shape[1])).astype(np.float32)
        rounds = prefill_rounds_input(packed.kernel_type, **defines)
        ref = (np.stack([q8_rounded(x) for x in xs]) if rounds else xs.astype(np.float64)) @ w.T
        y = multiply_once(packed, xs, **defines)
        assert np.max(np.abs(y - ref)) < 1e-4 * np.max(np.abs(ref))


@pytest.mark.parametrize("defines", [{"INT_VNNI": 0}, {"INT_YMM": 1}, {"INT_YMM": 1, "INT_VNNI": 0}],
                         ids=["no-vnni", "ymm", "ymm-no-vnni"])
@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q8_0, Q.Q4_K, Q.Q6_K], ids=lambda q: q.name)
def test_integer_prefill_variants_match(qtype, defines):
    """The integer prefill product as CPUs without VNNI (vpmaddubsw and vpmaddwd; INT_VNNI=0) or
    without AVX-512 (8 tokens per tile in 256-bit vectors; INT_YMM=1) compile it."""
    t = _tensor(qtype)
    w = dequantize(np.asarray(t.data), qtype).reshape(ROWS, _cols(qtype)).astype(np.float64)
    _check_prefill(pack_tensors([t]), w, np.random.default_rng(3), **defines)


@pytest.mark.parametrize("rows", [33, 96], ids=["a-last-row-alone", "three-rows-an-item"])
@pytest.mark.parametrize("qtype", [Q.Q5_0, Q.Q4_K, Q.Q6_K], ids=lambda q: q.name)
def test_integer_prefill_rows_taken_two_at_a_time_and_one_left(qtype, rows):
    """matmul_q8 takes a work-item's rows two at a time where it has AVX-512's registers
    (products.cl, MM_ROWS): 33 rows give the last work-item one row alone, 96 give every
    work-item three (a pair and one). Each row matches the dequantized matrix times the
    rounded input, as the 40 rows above do."""
    t = _tensor(qtype, rows)
    w = dequantize(np.asarray(t.data), qtype).reshape(rows, _cols(qtype)).astype(np.float64)
    rng = np.random.default_rng(11)
    _check_prefill(pack_tensors([t]), w, rng)


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q8_0], ids=lambda q: q.name)
def test_decode_product_of_wide_rows_with_rows_from_a_counter(qtype):
    """Rows of 19 blocks: two groups of eight (the integer path sums eight blocks at a time,
    then applies their eight scales together) and three left over. The product matches the
    dequantized matrix times the rounded input within 1e-4, and the engine's way of handing
    out rows (a counter per launch, one work-item per core) gives the same bits as fixed ranges."""
    cols = 19 * 32
    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.5, size=(ROWS, cols)).astype(np.float32)
    w[7, 64:96] = 1e-6  # a block of tiny values: fp16 subnormal scales
    packed = pack_tensors([Tensor("w", (cols, ROWS), qtype, quantize(w, qtype))])
    wd = dequantize(quantize(w, qtype), qtype).reshape(ROWS, cols).astype(np.float64)
    x = rng.normal(size=cols).astype(np.float32)
    ref = wd @ (q8_rounded(x) if decode_rounds_input(packed.kernel_type) else x)
    y = multiply_once(packed, x)
    assert np.max(np.abs(y - ref)) < 1e-4 * np.max(np.abs(ref))
    assert np.array_equal(multiply_once(packed, x, counted=True), y)


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q8_0, Q.Q4_K, Q.Q6_K], ids=lambda q: q.name)
def test_device_reads_the_bytes_the_file_holds(qtype):
    t = _tensor(qtype)
    packed = pack_tensors([t])
    # scales kept in their stored fp16: the device layout is exactly as large as the file's
    # blocks (Q4_0 4.5 bits a weight, Q4_1 5, Q8_0 8.5, Q4_K 4.5, Q6_K 6.5625)
    assert packed.nbytes == np.asarray(t.data).nbytes


def test_q5_0_pads_its_scales_to_an_even_count_per_row():
    t = _tensor(Q.Q5_0)
    packed = pack_tensors([t])
    # three blocks a row: 3 x 22 bytes in the file, plus one fp16 of padding on the device
    assert packed.nbytes == np.asarray(t.data).nbytes + 2 * ROWS


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q5_0, Q.Q8_0, Q.Q4_K, Q.Q6_K], ids=lambda q: q.name)
def test_the_float_path_other_devices_take_still_matches(qtype):
    """Devices whose compiler does not target x86 with AVX2 (GPUs) compile the float decode and
    prefill paths; NO_INT_DOT=1 forces them here: no input rounding, the dequantized matrix
    times x within 1e-4."""
    t = _tensor(qtype)
    COLS = _cols(qtype)
    w = dequantize(np.asarray(t.data), qtype).reshape(ROWS, COLS).astype(np.float64)
    packed = pack_tensors([t])
    assert not decode_rounds_input(packed.kernel_type, NO_INT_DOT=1)
    x = np.random.default_rng(2).normal(size=COLS).astype(np.float32)
    ref = w @ x
    y = multiply_once(packed, x, NO_INT_DOT=1)
    assert np.max(np.abs(y - ref)) < 1e-4 * np.max(np.abs(ref))
    assert not prefill_rounds_input(packed.kernel_type, NO_INT_DOT=1)
    xs = np.random.default_rng(4).normal(size=(11, COLS)).astype(np.float32)
    ref2 = xs.astype(np.float64) @ w.T
    y2 = multiply_once(packed, xs, NO_INT_DOT=1)
    assert np.max(np.abs(y2 - ref2)) < 1e-4 * np.max(np.abs(ref2))


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q8_0, Q.Q4_K, Q.Q6_K], ids=lambda q: q.name)
def test_prefill_and_decode_round_the_input_alike(qtype):
    """Where both multiply integers, a token's prefill product equals its decode product up to
    float32 sums in another order: the same 8-bit input, not merely an equally good one."""
    t = _tensor(qtype)
    packed = pack_tensors([t])
    if not (decode_rounds_input(packed.kernel_type) and prefill_rounds_input(packed.kernel_type)):
        pytest.skip("the decode or the prefill product of this layout multiplies floats here")
    xs = np.random.default_rng(5).normal(size=(3, _cols(qtype))).astype(np.float32) * [[1.0], [30.0], [1e-3]]
    prefill = multiply_once(packed, xs)
    for x, y in zip(xs, prefill, strict=True):
        decode = multiply_once(packed, x)
        assert np.max(np.abs(y - decode)) < 1e-6 * np.max(np.abs(decode))


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q8_0, Q.Q4_K, Q.Q6_K, Q.F16, Q.F32],
                         ids=lambda q: q.name)
def test_a_fused_matrix_multiplies_as_its_parts_stacked(qtype):
    """Q|K|V and gate|up are packed as the parts' strided views of the file, one after the
    other, and uploaded part by part (cl.packing._stacked, Device.upload): the fused product is
    the parts' products stacked, bit for bit, for every layout."""
    t = _tensor(qtype)
    data = np.asarray(t.data)
    half = ROWS // 2
    a = Tensor("a", (t.shape[0], half), qtype, data[:half])
    b = Tensor("b", (t.shape[0], ROWS - half), qtype, data[half:])
    fused = pack_tensors([a, b])
    assert isinstance(fused.qs, tuple) and fused.nbytes == pack_tensors([a]).nbytes + pack_tensors([b]).nbytes
    x = np.random.default_rng(9).normal(size=_cols(qtype)).astype(np.float32)
    y = multiply_once(fused, x)
    assert np.array_equal(y, np.concatenate([multiply_once(pack_tensors([a]), x), multiply_once(pack_tensors([b]), x)]))
    assert np.array_equal(y, multiply_once(pack_tensors([t]), x))


def test_products_of_different_tiles_share_one_rounded_input():
    """Q6_K's integer prefill product takes two tiles of tokens a work-item and Q4_0's four
    (cl/programs.py INT_TILES_BY_LAYOUT): where both read one rounding of the input, whichever
    comes first, each product equals its own, bit for bit, at a token count that fills neither's
    last tile."""
    if not all(prefill_rounds_input(q) for q in ("Q6_K", "Q4_0")):
        pytest.skip("the prefill products multiply floats here")
    rng = np.random.default_rng(11)
    w = rng.normal(0, 0.5, size=(ROWS, 512)).astype(np.float32)
    a = pack_tensors([_tensor(Q.Q6_K)])
    b = pack_tensors([Tensor("b", (512, ROWS), Q.Q4_0, quantize(w, Q.Q4_0))])
    xs = rng.normal(size=(37, 512)).astype(np.float32)
    for first, second in ((a, b), (b, a)):
        y1, y2 = multiply_sharing_input([first, second], xs)
        assert np.array_equal(y1, multiply_once(first, xs)) and np.array_equal(y2, multiply_once(second, xs))


def test_a_tile_count_the_padding_cannot_hold_is_refused():
    """QTILES tiles of up to 16 tokens must divide the padded chunk (PAD_TOKENS), or the
    rounding would write past its buffer: refused in one line before anything is compiled."""
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.native.cl.device import Device
    from tokenwalk.native.cl.programs import PAD_TOKENS, Programs

    with pytest.raises(TokenwalkError, match=f"QTILES=3: the prefill buffers hold chunks padded to {PAD_TOKENS} tokens"):
        Programs(Device(None), 64, QTILES=3)


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q5_0, Q.Q6_K], ids=lambda q: q.name)
def test_the_largest_levels_against_the_largest_inputs_do_not_overflow(qtype):
    """Without VNNI the integer prefill adds the 16-bit sums of two to eight groups before
    widening them (products.cl SUM16), safe while 2 x 127 x the largest level x the groups added
    stays below 32,767. Every level at its largest (Q4_0 15, Q5_0 31, Q6_K 63) against inputs
    that round to +127 or -127 is that bound's case: the product still equals the dequantized
    matrix times the input."""
    cols = 512
    if qtype == Q.Q6_K:  # ql, qh all ones (level 63), sixteen scales of 1, d = 0.01
        block = np.full(210, 0xFF, np.uint8)
        block[192:208] = 1
        block[208:210] = np.array([0.01], np.float16).view(np.uint8)
    else:  # d = 0.01, then Q5_0's fifth bits all set, then the nibbles all 15
        head = np.array([0.01], np.float16).view(np.uint8)
        block = np.concatenate([head, np.full(4 if qtype == Q.Q5_0 else 0, 0xFF, np.uint8), np.full(16, 0xFF, np.uint8)])
    per_row = cols // (256 if qtype == Q.Q6_K else 32)
    data = np.tile(block, (ROWS, per_row))
    packed = pack_tensors([Tensor("w", (cols, ROWS), qtype, data)])
    if not prefill_rounds_input(packed.kernel_type):
        pytest.skip("the prefill product of this layout multiplies floats here")
    w = dequantize(data, qtype).reshape(ROWS, cols).astype(np.float64)
    xs = np.array([np.full(cols, 3.0), np.full(cols, -3.0)], np.float32)
    y = multiply_once(packed, xs)
    ref = xs.astype(np.float64) @ w.T
    assert np.max(np.abs(y - ref)) < 1e-4 * np.max(np.abs(ref))
