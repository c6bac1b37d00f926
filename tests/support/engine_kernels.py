"""The engine's kernels run once, for the kernel tests (test_engine_weight_types.py): one packed
matrix through the decode and prefill products, and what a program's products do with their
input. The engine itself runs its kernels through tokenwalk.native.cl.ops (launch lists); this
module composes those launches for one matrix at a time."""

from __future__ import annotations

import math

import numpy as np

from tokenwalk.native.cl.device import Device
from tokenwalk.native.cl.ops import (
    MODE_WRITE,
    RoundedInput,
    RowCounters,
    device_matrix,
    enqueue,
    int_matmul_shape,
    kernel,
    matvec,
    products,
)
from tokenwalk.native.cl.packing import PackedMatrix
from tokenwalk.native.cl.programs import PAD_TOKENS, QUERY_TILE, TILE_TOKENS, Programs

_ONCE: dict = {}
ONCE_MAX_BLOCKS = 19  # the widest row the one-off products take: 608 columns (the tests' widest)


def _once_programs(device: str | None, defines: dict) -> tuple:
    """(device, programs) for the one-off products and probes: one Programs per set of
    ``defines``, whatever the matrix's width, so each kernel variant compiles once per process."""
    if device not in _ONCE:
        _ONCE[device] = (Device(device), {})
    dev, by_defines = _ONCE[device]
    key = tuple(sorted(defines.items()))
    if key not in by_defines:
        by_defines[key] = Programs(dev, 64, MAX_BLOCKS=ONCE_MAX_BLOCKS, **defines)
    return dev, by_defines[key]


def multiply_once(packed: PackedMatrix, x: np.ndarray, device: str | None = None, counted: bool = False,
                  **defines) -> np.ndarray:
    """y = W x through the engine's kernels for one packed matrix: x of shape (cols,) runs the
    decode matrix-vector kernel, x of shape (ntok, cols) the prefill matrix-matrix kernel.
    For tests of every weight layout (device and programs are cached between calls);
    ``defines`` go to the kernels' compiler (NO_INT_DOT=1: the float path other devices take);
    ``counted``: the decode kernel's work-items take rows from a counter, as in the engine."""
    if packed.cols > ONCE_MAX_BLOCKS * 32:
        raise ValueError(f"multiply_once: {packed.cols} columns, at most {ONCE_MAX_BLOCKS * 32}")
    dev, programs = _once_programs(device, defines)
    m = device_matrix(dev, programs, packed)
    x = np.ascontiguousarray(x, dtype=np.float32)
    ntok = 1 if x.ndim == 1 else x.shape[0]
    pad = math.ceil(ntok / PAD_TOKENS) * PAD_TOKENS
    xp = np.zeros((pad, packed.cols), np.float32)
    xp[:ntok] = x.reshape(ntok, packed.cols)
    xb = dev.upload(xp)
    y = np.zeros((ntok, packed.rows), np.float32)
    yb = dev.empty(y.nbytes)
    zero = []
    if x.ndim == 1:
        counters = RowCounters(dev, 1) if counted else None
        zero = [counters.zero] if counted else []
        launches = [matvec(m, xb, yb, MODE_WRITE, items=2 if counted else 8, counters=counters)]
    elif m.int_shape[0]:
        rounded = RoundedInput.allocate(dev, pad, packed.cols)  # alive until the launches have run
        launches = products(xb, ntok, [(m, yb, False, None, 0)], rounded)
    else:
        rpi = max(1, math.ceil(packed.rows / 8))
        launches = [kernel(m.program, "matmul", (math.ceil(packed.rows / rpi), pad // TILE_TOKENS), m.qs, m.scales,
                           xb, yb, np.int32(packed.rows), np.int32(packed.cols), np.int32(rpi), np.int32(0),
                           np.int32(ntok), np.int32(packed.rows), np.int32(0))]
    enqueue(dev, [*zero, *launches])
    dev.read(y, yb)
    return y[0] if x.ndim == 1 else y


def multiply_sharing_input(packed: list[PackedMatrix], xs: np.ndarray, device: str | None = None) -> list:
    """y_i = W_i xs for each packed matrix, as one prefill launch list (cl/ops.products): the
    matrices with an integer product read one rounding of xs (ntok, cols), as Q|K|V and V do."""
    dev, programs = _once_programs(device, {})
    xs = np.ascontiguousarray(xs, dtype=np.float32)
    ntok, cols = xs.shape
    pad = math.ceil(ntok / PAD_TOKENS) * PAD_TOKENS
    xp = np.zeros((pad, cols), np.float32)
    xp[:ntok] = xs
    xb = dev.upload(xp)
    ms = [device_matrix(dev, programs, p) for p in packed]
    ys = [np.zeros((ntok, p.rows), np.float32) for p in packed]
    ybs = [dev.empty(y.nbytes) for y in ys]
    rounded = RoundedInput.allocate(dev, pad, cols)  # alive until the launches have run
    enqueue(dev, products(xb, ntok, [(m, yb, False, None, 0) for m, yb in zip(ms, ybs, strict=True)], rounded))
    return [dev.read(y, yb) for y, yb in zip(ys, ybs, strict=True)]


def prefill_rounds_input(kernel_type: str, device: str | None = None, **defines) -> bool:
    """Whether the prefill matrix-matrix product of weight layout ``kernel_type`` rounds its
    input to 8 bits per value, 32 values per scale, as decode does (matmul_q8, the integer
    path: x86 with AVX2; Q8_0 only where the CPU has VNNI)."""
    dev, programs = _once_programs(device, defines)
    return int_matmul_shape(dev, programs, kernel_type)[0] > 0


def decode_rounds_input(kernel_type: str, device: str | None = None, **defines) -> bool:
    """Whether the decode matrix-vector product of weight layout ``kernel_type`` rounds its
    input to 8 bits per value, 32 values per scale (the integer path of kernels/quants.cl,
    compiled where the device's compiler targets x86 with AVX2), as llama.cpp's q8_0."""
    dev, programs = _once_programs(device, defines)
    out = dev.empty(4)
    enqueue(dev, [kernel(programs.get(kernel_type), "decode_rounds_input", (1,), out)])
    return bool(dev.read(np.zeros(1, np.int32), out)[0])


def prefill_attention_once(qkv: np.ndarray, keys: np.ndarray, values: np.ndarray, rows: int, cells: dict,
                           pos0: int, window: int, heads: int, device: str | None = None, **defines) -> np.ndarray:
    """The prefill attention kernel (kernels/attention.cl) for one chunk of ``len(qkv)`` tokens at
    positions ``pos0``.., one KV head of head size 64: ``qkv`` of shape (ntok, (heads + 2) x 64),
    the cache of ``rows`` cells filled from ``cells`` ({cell: position}, keys[position] and
    values[position] as fp16; cells not named hold zeros). Returns (ntok, heads x 64) floats."""
    dev, programs = _once_programs(device, defines)
    hd, ntok = 64, len(qkv)
    k = np.zeros((rows // 8, hd, 8), np.float16)  # kv_cache.cl: keys by groups of eight cells
    v = np.zeros((rows, hd), np.float16)
    for cell, pos in cells.items():
        k[cell // 8, :, cell % 8] = keys[pos]
        v[cell] = values[pos]
    q = np.zeros((math.ceil(ntok / PAD_TOKENS) * PAD_TOKENS, qkv.shape[1]), np.float32)
    q[:ntok] = qkv
    out = np.zeros((len(q), heads * hd), np.float32)
    bk, bv, bq = dev.upload(k.view(np.uint16)), dev.upload(v.view(np.uint16)), dev.upload(q)
    state, bo = dev.upload(np.array([pos0, 0, 0, 0], np.int32)), dev.empty(out.nbytes)
    enqueue(dev, [kernel(programs.get("F32"), "attention", (heads, math.ceil(ntok / QUERY_TILE)), bq, bk, bv, bo,
                         state, np.int32(heads), np.int32(1), np.int32(rows), np.float32(0.125), np.int32(ntok),
                         np.int32(window))])
    dev.read(out, bo)
    return out[:ntok]
