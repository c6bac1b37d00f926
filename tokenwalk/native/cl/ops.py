"""Kernel launches: what the model's graph asks the device to do.

A launch is a kernel with its arguments set once and its global size, stored as a tuple
``(kernel, global_size, local_size)``; a graph is a list of launches (and row copies) that
``enqueue`` puts on the queue without waiting. On PoCL a round trip to the device costs
tens of microseconds and an enqueue a few, so the host waits once per decoded token (when
it reads the logits), never per kernel.

Matrix products take a ``DeviceMatrix`` (a packed weight matrix uploaded with its program):
``matvec`` is the decode path (one token, RMSNorm of the input and the output mode fused
in); ``products`` the prefill path: ``matmul_q8`` (the input rounded to 8 bits once per chunk
by ``quantize_tiles``, integer products, tiles of 16 tokens) where the program has it (x86
CPUs), else ``matmul`` (float, tiles of ``TILE_TOKENS`` tokens). Sizes are bytes, bandwidth
GB/s (1e9 bytes per second), times seconds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.cl.device import Device, opencl
from tokenwalk.native.cl.packing import PackedMatrix
from tokenwalk.native.cl.programs import TILE_TOKENS, Programs

MODE_WRITE, MODE_ACCUMULATE, MODE_SWIGLU, MODE_GEGLU = 0, 1, 2, 3  # matvec output modes (kernels/products.cl)


@dataclass
class DeviceMatrix:
    """A packed weight matrix on the device: its values, its scales and the program of its layout."""

    packed: PackedMatrix
    qs: object  # cl.Buffer
    scales: object  # cl.Buffer
    program: object  # cl.Program
    int_shape: tuple = (0, 0)  # (XL, QTILES) of its integer prefill product (matmul_q8), (0, 0): the float matmul

    @property
    def nbytes(self) -> int:
        """Bytes a full pass over this matrix reads on the device."""
        return self.packed.nbytes


def device_matrix(device: Device, programs: Programs, packed: PackedMatrix) -> DeviceMatrix:
    """Upload ``packed`` and build (or reuse) the program of its layout."""
    return DeviceMatrix(packed, device.upload(packed.qs), device.upload(packed.scales),
                        programs.get(packed.kernel_type), int_matmul_shape(device, programs, packed.kernel_type))


def int_matmul_shape(device: Device, programs: Programs, kernel_type: str) -> tuple[int, int]:
    """(XL, QTILES): tokens per tile and tiles per work-item of the integer prefill product of
    layout ``kernel_type`` (kernels/products.cl, matmul_q8), or (0, 0) where its program runs the
    float matmul (no INT_DOT: GPUs, NO_INT_DOT=1, F16, F32; Q8_0 without VNNI)."""
    shapes = programs.__dict__.setdefault("_int_shapes", {})
    if kernel_type not in shapes:
        out = device.empty(8)
        enqueue(device, [kernel(programs.get(kernel_type), "matmul_q8_shape", (1,), out)])
        shapes[kernel_type] = tuple(int(v) for v in device.read(np.zeros(2, np.int32), out))
    return shapes[kernel_type]


@dataclass(frozen=True)
class CopyRow:
    """A device-side copy of row ``row`` (``row_bytes`` long) of ``src`` into ``dst``."""

    dst: object
    src: object
    row: int
    row_bytes: int


def kernel(program, name: str, global_size: tuple, *args) -> tuple:
    """A launch of kernel ``name`` of ``program`` over ``global_size`` work-items, one per group."""
    k = opencl().Kernel(program, name)
    k.set_args(*args)
    return (k, tuple(global_size), (1,) * len(global_size))


class RowCounters:
    """One int32 counter per matrix-vector launch of a step, from which the launch's
    work-items take their rows a few at a time (kernels/products.cl, matvec): each work-item
    prepares the input (norm, 8-bit rounding) once, however many rows it ends up with, and a
    work-item whose core is busy elsewhere takes fewer. ``zero`` (first in a step's launch
    list) resets them all."""

    def __init__(self, device: Device, capacity: int):
        self.buffer = device.empty(4 * capacity)
        self.capacity, self.used = int(capacity), 0
        self.zero = ZeroBuffer(self.buffer, 4 * self.capacity)

    def take(self) -> int:
        """The index of a counter of its own for one launch."""
        if self.used >= self.capacity:
            raise ValueError(f"more than {self.capacity} matrix-vector launches in a step")
        self.used += 1
        return self.used - 1


@dataclass(frozen=True)
class ZeroBuffer:
    """A device-side fill of ``n_bytes`` zero bytes at the start of ``buffer``."""

    buffer: object
    n_bytes: int


def matvec(m: DeviceMatrix, x, y, mode: int, *, items: int, norm_w=None, eps: float = 0.0,
           rows: int | None = None, yoff: int = 0, splits: int = 0, residual: tuple | None = None,
           counters: RowCounters | None = None) -> tuple:
    """One decode launch: y[yoff:] = W x over ``rows`` output rows (default all), fused with
    RMSNorm of x (``norm_w``, ``eps``) and the output ``mode``, on ``items`` work-items.
    ``splits`` > 0: x is attention_decode's partial softmaxes over that many key ranges,
    merged inside the launch. ``residual`` = (t, w, out): the input is x + RMSNorm(t) * w
    (a post-norm and residual add fused in), which the launch also writes to ``out`` (not x).
    ``counters``: the work-items take rows from a counter of their own, 16 grabs each on
    average; without, work-item i computes the i-th of ``items`` equal ranges."""
    pm = m.packed
    rows = rows or pm.rows
    items = min(items, rows)
    rpi = math.ceil(rows / (16 * items)) if counters is not None else math.ceil(rows / items)
    t, w, out = residual or (x, x, y)
    return kernel(m.program, "matvec", (items if counters is not None else math.ceil(rows / rpi),), m.qs, m.scales,
                  x, y, np.int32(rows),
                  np.int32(pm.cols), np.int32(rpi), np.int32(mode), np.int32(norm_w is not None),
                  norm_w if norm_w is not None else x, np.float32(eps), np.int32(yoff), np.int32(splits),
                  np.int32(residual is not None), t, w, out,
                  None if counters is None else counters.buffer,
                  np.int32(0 if counters is None else counters.take()))


def matmul(m: DeviceMatrix, x, y, ntok: int, accumulate: bool, ldy: int | None = None, yoff: int = 0) -> tuple:
    """One prefill launch: y (+)= W x for ``ntok`` tokens, in tiles of TILE_TOKENS tokens;
    token t's outputs land at y[t * ldy + yoff:] (ldy: default the matrix's rows)."""
    pm = m.packed
    tiles = math.ceil(ntok / TILE_TOKENS)
    chunks = max(1, min(pm.rows, math.ceil(32 / tiles)))
    rpi = math.ceil(pm.rows / chunks)
    return kernel(m.program, "matmul", (math.ceil(pm.rows / rpi), tiles), m.qs, m.scales, x, y, np.int32(pm.rows),
                  np.int32(pm.cols), np.int32(rpi), np.int32(int(accumulate)), np.int32(ntok),
                  np.int32(ldy or pm.rows), np.int32(yoff))


@dataclass
class RoundedInput:
    """Room for a prefill product's input rounded to 8 bits (quantize_tiles' xq and xf), for
    ``pad_tokens`` tokens of up to ``max_cols`` values; the products that read the same input
    share one rounding."""

    xq: object  # cl.Buffer, int8 levels by tiles of XL tokens
    xf: object  # cl.Buffer, float32 scales and sums

    @classmethod
    def allocate(cls, device: Device, pad_tokens: int, max_cols: int) -> RoundedInput:
        return cls(device.empty(pad_tokens * max_cols), device.empty(pad_tokens * (max_cols // 32) * 3 * 4))


def products(x, ntok: int, targets, rounded: RoundedInput | None) -> list:
    """The launches of the prefill products that read ``x`` (``ntok`` tokens): for each
    (m, y, accumulate, ldy, yoff) of ``targets``, y (+)= m x. Matrices with an integer product
    read x rounded once into ``rounded`` (one quantize_tiles launch first); the others run matmul."""
    seq = []
    ints = [t for t in targets if t[0].int_shape[0]]
    if ints and rounded is not None:
        m0 = ints[0][0]
        xl, qtiles = m0.int_shape
        tiles = math.ceil(ntok / (xl * qtiles)) * qtiles
        seq.append(kernel(m0.program, "quantize_tiles", (tiles * xl,), x, rounded.xq, rounded.xf,
                          np.int32(m0.packed.cols), np.int32(ntok)))
    for m, y, accumulate, ldy, yoff in targets:
        if m.int_shape[0] and rounded is not None:
            seq.append(matmul_q8(m, rounded, y, ntok, accumulate, ldy, yoff))
        else:
            seq.append(matmul(m, x, y, ntok, accumulate, ldy, yoff))
    return seq


def matmul_q8(m: DeviceMatrix, rounded: RoundedInput, y, ntok: int, accumulate: bool, ldy: int | None = None,
              yoff: int = 0) -> tuple:
    """One integer prefill launch: y (+)= W x for ``ntok`` tokens from x rounded into ``rounded``
    (quantize_tiles), in groups of QTILES tiles of XL tokens; outputs as matmul's."""
    pm = m.packed
    xl, qtiles = m.int_shape
    groups = math.ceil(ntok / (xl * qtiles))
    chunks = max(1, min(pm.rows, math.ceil(32 / groups)))
    rpi = math.ceil(pm.rows / chunks)
    return kernel(m.program, "matmul_q8", (math.ceil(pm.rows / rpi), groups), m.qs, m.scales, rounded.xq,
                  rounded.xf, y, np.int32(pm.rows), np.int32(pm.cols), np.int32(rpi), np.int32(int(accumulate)),
                  np.int32(ntok), np.int32(ldy or pm.rows), np.int32(yoff))


def enqueue(device: Device, launches) -> None:
    """Put ``launches`` (kernel tuples, CopyRow, ZeroBuffer) on the device's queue, without waiting."""
    cl = device.cl
    q = device.queue
    run = cl.enqueue_nd_range_kernel
    for op in launches:
        if type(op) is CopyRow:
            cl.enqueue_copy(q, op.dst, op.src, src_offset=op.row * op.row_bytes, byte_count=op.row_bytes)
        elif type(op) is ZeroBuffer:
            cl.enqueue_fill_buffer(q, op.buffer, np.int32(0), 0, op.n_bytes)
        else:
            run(q, op[0], op[1], op[2])


def read_bandwidth_gbs(device: Device, programs: Programs, size_bytes: int = 256 * 1024 * 1024,
                       repeats: int = 5) -> float:
    """Read bandwidth of the device's global memory in GB/s: a kernel sums a buffer larger
    than any cache, each work-item a contiguous chunk; best of ``repeats`` passes."""
    items = max(2, device.compute_units * 8)
    per_item = size_bytes // 32 // items // 4 * 4  # float8 elements, a multiple of 4
    n_bytes = per_item * items * 32
    if n_bytes <= 0:
        raise TokenwalkError(f"a bandwidth probe of {size_bytes} bytes is too small for {items} work-items")
    buf = device.empty(n_bytes, read_only=True)
    device.cl.enqueue_fill_buffer(device.queue, buf, np.float32(1.0), 0, n_bytes)
    sink = device.empty(items * 4)
    launch = kernel(programs.get("F32"), "read_bandwidth", (items,), buf, sink, np.int32(per_item))
    device.finish()
    best = math.inf
    for i in range(repeats + 1):  # the first pass warms up (page faults, compilation)
        t0 = time.perf_counter()
        enqueue(device, [launch])
        device.finish()
        if i:
            best = min(best, time.perf_counter() - t0)
    buf.release()
    return n_bytes / best / 1e9
