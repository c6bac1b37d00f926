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

MODE_WRITE, MODE_ACCUMULATE, MODE_SWIGLU, MODE_GEGLU = 0, 1, 2, 3  # matvec output modes (kernels/matvec.cl)


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


@dataclass(frozen=True)
class MatvecPhase:
    """A decode matrix-vector product before it is a launch: ``m`` and the kernel's arguments
    after the weights (x, y, rows, cols, rows per grab, mode, norm weights, yoff, splits, and
    the residual's t, w and out), as kernels/matvec.cl's matvec_phase takes them."""

    m: DeviceMatrix
    args: tuple
    eps: float

    @property
    def rows(self) -> int:
        return int(self.args[2])


@dataclass(frozen=True)
class AttentionPhase:
    """A decode attention before it is a launch: its program and attention_decode's arguments
    (kernels/attention.cl), over ``kv_heads`` x ``splits`` units."""

    program: object
    args: tuple
    kv_heads: int
    splits: int


def matvec_phase(m: DeviceMatrix, x, y, mode: int, *, items: int, norm_w=None, eps: float = 0.0,
                 rows: int | None = None, yoff: int = 0, splits: int = 0, residual: tuple | None = None,
                 counted: bool = True) -> MatvecPhase:
    """y[yoff:] = W x over ``rows`` output rows (default all), fused with RMSNorm of x
    (``norm_w``, ``eps``) and the output ``mode``, shared by ``items`` work-items.
    ``splits`` > 0: x is attention_decode's partial softmaxes over that many key ranges,
    merged inside the product. ``residual`` = (t, w, out): the input is x + RMSNorm(t) * w
    (a post-norm and residual add fused in), which the product also writes to ``out`` (not x).
    ``counted``: the work-items take rows from a counter, 16 grabs each on average; without,
    work-item i computes the i-th of ``items`` equal ranges."""
    rows = rows or m.packed.rows
    items = min(items, rows)
    rpi = math.ceil(rows / (16 * items)) if counted else math.ceil(rows / items)
    t, w, out = residual or (None, None, None)
    return MatvecPhase(m, (x, y, np.int32(rows), np.int32(m.packed.cols), np.int32(rpi), np.int32(mode), norm_w,
                           np.int32(yoff), np.int32(splits), t, w, out), float(eps))


def _matvec_launch(phase: MatvecPhase, items: int, counters: RowCounters | None) -> tuple:
    rows, rpi = phase.rows, int(phase.args[4])
    size = min(items, rows) if counters is not None else math.ceil(rows / rpi)
    return kernel(phase.m.program, "matvec", (size,), phase.m.qs, phase.m.scales, *phase.args[:7],
                  np.float32(phase.eps), *phase.args[7:], None if counters is None else counters.buffer,
                  np.int32(0 if counters is None else counters.take()))


def matvec(m: DeviceMatrix, x, y, mode: int, *, items: int, norm_w=None, eps: float = 0.0,
           rows: int | None = None, yoff: int = 0, splits: int = 0, residual: tuple | None = None,
           counters: RowCounters | None = None) -> tuple:
    """One decode launch of ``matvec_phase``'s product (``counters``: the step's row counters,
    one taken for this launch; None: fixed ranges)."""
    phase = matvec_phase(m, x, y, mode, items=items, norm_w=norm_w, eps=eps, rows=rows, yoff=yoff, splits=splits,
                         residual=residual, counted=counters is not None)
    return _matvec_launch(phase, items, counters)


# decode_chain's phases in order (kernels/decode_chain.cl): two products, attention, three products
CHAIN_PHASES = ("M", "M", "A", "M", "M", "M")
# per phase a counter that hands out and one that counts what is done; the waiters asleep
CHAIN_COUNTERS = 2 * len(CHAIN_PHASES) + 1
_UNUSED_MATVEC = (np.int32(0), None, None, None, None, np.int32(0), np.int32(0), np.int32(0), np.int32(0), None,
                  np.int32(0), np.int32(0), None, None, None)


def chain_runs(phases: list) -> list[list]:
    """``phases`` in runs that decode_chain can run as one launch: in CHAIN_PHASES order, each
    run as long as it can be, whatever the products' weight layouts (the chain's program has
    a section for each)."""
    runs, run, at = [], [], 0
    for ph in phases:
        kind = "A" if isinstance(ph, AttentionPhase) else "M"
        slot = next((i for i in range(at, len(CHAIN_PHASES)) if CHAIN_PHASES[i] == kind), None)
        if slot is None:
            runs.append(run)
            run = []
            slot = CHAIN_PHASES.index(kind)
        run.append((slot, ph))
        at = slot + 1
    return [*runs, run] if run else runs


def decode_step_launches(device: Device, phases: list, items: int, chains: Programs | None) -> tuple[RowCounters, list]:
    """The launches of a decode step of ``phases`` (MatvecPhase, AttentionPhase, in order) on
    ``items`` work-items: with ``chains`` (the model's programs; CPU devices), runs of them as
    single decode_chain launches (kernels/decode_chain.cl) of one program with a section per
    weight layout of the step's chained products, else one launch each. Returns the step's
    row counters (kept alive with the launches) and the launches, the counters' zeroing first."""
    runs = chain_runs(phases) if chains is not None else [[(0, ph)] for ph in phases]
    chained = [run for run in runs if len(run) > 1]
    layouts = tuple(sorted({ph.m.packed.kernel_type for run in chained for _, ph in run if isinstance(ph, MatvecPhase)}))
    program = chains.chain(layouts) if layouts else None
    singles = sum(1 for run in runs if len(run) == 1 and isinstance(run[0][1], MatvecPhase))
    counters = RowCounters(device, singles + CHAIN_COUNTERS * len(chained))
    attention = next((ph for ph in phases if isinstance(ph, AttentionPhase)), None)
    no_attention = () if attention is None else tuple(
        None if not isinstance(a, np.generic) else type(a)(0) for a in attention.args)
    seq = [counters.zero]
    for run in runs:
        if len(run) == 1:
            ph = run[0][1]
            if isinstance(ph, AttentionPhase):
                seq.append(kernel(ph.program, "attention_decode", (ph.kv_heads, ph.splits), *ph.args))
            else:
                seq.append(_matvec_launch(ph, items, counters))
            continue
        by_slot = dict(run)
        eps = {ph.eps for ph in by_slot.values() if isinstance(ph, MatvecPhase)}  # a run of two or more has a product
        if len(eps) > 1:
            raise ValueError("the products of a decode chain differ in their norm's epsilon")
        slot = counters.take()
        for _ in range(CHAIN_COUNTERS - 1):
            counters.take()
        args = [counters.buffer, np.int32(slot), np.float32(eps.pop())]
        for i, kind in enumerate(CHAIN_PHASES):
            ph = by_slot.get(i)
            if kind == "A":
                args += ph.args if ph is not None else no_attention
            elif ph is None:
                args += _UNUSED_MATVEC
            else:
                args += (np.int32(layouts.index(ph.m.packed.kernel_type)), ph.m.qs, ph.m.scales, *ph.args)
        seq.append(kernel(program, "decode_chain", (max(1, items),), *args))
    return counters, seq


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
        xl = m0.int_shape[0]
        # every tile that one of the products reads (their QTILES may differ by layout)
        tiles = max(math.ceil(ntok / (xl * t[0].int_shape[1])) * t[0].int_shape[1] for t in ints)
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


def kernel_launches(launches) -> int:
    """Kernel launches in a launch list (the tuples; a list also holds fills of row counters
    and row copies, which launch no kernel)."""
    return sum(1 for op in launches if isinstance(op, tuple))


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
