"""Repack GGUF weight matrices into the device layouts of kernels/quants.cl (still quantized).

GGUF stores a quantized row as consecutive blocks (scale(s) then packed values: 18, 20, 22,
34, 144 or 210 bytes each), which leaves the values of most formats unaligned for vector
loads. At load time each matrix is split into an aligned array of packed values and an
array of scales, both copied byte for byte: the scales stay in the file's fp16, so the
device reads exactly the bytes the file holds (Q5_0 pads its scales to an even count per row
when a row has an odd number of blocks). Q4_K blocks are 144 bytes, a multiple of 16, and
are uploaded as stored. Nothing is dequantized or re-rounded. This is the kernels' side of
the weights (ggml's repacking); which tensors form which matrix is the model's side
(tokenwalk.native.weights). Sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokenwalk.errors import TokenwalkError

# GGUF types the kernels have a layout for (the program variant is named after the type).
KERNEL_TYPES = ("Q4_0", "Q4_1", "Q5_0", "Q8_0", "Q4_K", "Q6_K", "F16", "F32")
BLOCK_BYTES = {"Q4_1": 20, "Q4_0": 18, "Q5_0": 22, "Q8_0": 34, "Q4_K": 144, "Q6_K": 210}
BLOCK_WEIGHTS = {"Q4_K": 256, "Q6_K": 256}  # others: 32


@dataclass
class PackedMatrix:
    """One weight matrix in device layout: y = W x with W of shape (rows, cols)."""

    kernel_type: str  # program variant: the GGUF type
    rows: int
    cols: int
    # Each an array or a tuple of arrays stacked by rows (fused matrices), often strided
    # views of the file's memory map: Device.upload copies them in C order.
    qs: np.ndarray | tuple  # packed values (or the f16/f32 weights, or Q4_K's blocks)
    scales: np.ndarray | tuple  # scales as stored (uint8 bytes or fp16); a dummy for F16, F32, Q4_K

    @property
    def nbytes(self) -> int:
        """Bytes a full pass over this matrix reads on the device."""
        dummy = self.kernel_type in ("F16", "F32", "Q4_K")
        return int(_nbytes(self.qs) + (0 if dummy else _nbytes(self.scales)))


def _nbytes(parts) -> int:
    return sum(p.nbytes for p in parts) if isinstance(parts, tuple) else parts.nbytes


def _rows_bytes(tensor) -> tuple[np.ndarray, int, int]:
    cols, rows = int(tensor.shape[0]), int(tensor.shape[1]) if len(tensor.shape) > 1 else 1
    return np.asarray(tensor.data), rows, cols


def _field(blocks: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Bytes start:stop of every block of ``blocks`` (rows x blocks x block bytes, C order), as
    a (rows, blocks) array of one opaque item each: a strided view, not a copy. numpy copies
    such items whole, several times faster than the same bytes sliced one by one (165 MB of
    Q5_0 values: 0.04 s instead of 0.10 s)."""
    rows, nb, size = blocks.shape
    item = np.dtype({"names": ["f"], "formats": [f"V{stop - start}"], "offsets": [start], "itemsize": size})
    return np.ascontiguousarray(blocks).reshape(-1).view(item)["f"].reshape(rows, nb)


def _stacked(arrays: list) -> np.ndarray | tuple:
    """The parts' arrays stacked by rows: a lone part as it is, several as a tuple. Each is
    often a strided view of the file's memory map, which Device.upload copies straight into
    the device's buffer, part after part, so the host never holds a copy of the weights."""
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def pack_tensors(tensors, name: str = "") -> PackedMatrix:
    """Pack one matrix, or several with the same type and width stacked by rows (fused Q|K|V).
    ``qs`` and ``scales`` may be strided views of the tensors' data (Device.upload copies them)."""
    types = {t.tensor_type.name for t in tensors}
    if len(types) != 1:
        raise ValueError(f"cannot fuse tensors of types {sorted(types)}")
    gtype = types.pop()
    if gtype not in KERNEL_TYPES:
        raise TokenwalkError(f"tensor {name or tensors[0].name} has type {gtype}; the engine supports "
                             f"{', '.join(KERNEL_TYPES)}")
    parts = [_rows_bytes(t) for t in tensors]
    cols = parts[0][2]
    rows = sum(p[1] for p in parts)
    if gtype in ("F16", "F32"):
        dtype = np.float16 if gtype == "F16" else np.float32
        w = _stacked([(d.view(dtype) if d.dtype == np.uint8 else d.astype(dtype, copy=False)).reshape(r, cols)
                      for d, r, _ in parts])
        return PackedMatrix(gtype, rows, cols, w, np.zeros(2, np.float16))
    nb = cols // BLOCK_WEIGHTS.get(gtype, 32)
    blocks = [(d.reshape(r, nb, BLOCK_BYTES[gtype]), r) for d, r, _ in parts]
    if gtype == "Q4_K":
        return PackedMatrix(gtype, rows, cols, _stacked([b.reshape(-1) for b, _ in blocks]), np.zeros(2, np.uint8))
    if gtype == "Q6_K":
        qs = _stacked([_field(b, 0, 192) for b, _ in blocks])  # ql (128) | qh (64)
        scales = _stacked([np.concatenate([b[:, :, 192:208].reshape(r, -1), b[:, :, 208:210].reshape(r, -1)], axis=1)
                           for b, r in blocks])  # per row: int8 scales [nb][16], then d [nb]
        return PackedMatrix(gtype, rows, cols, qs, scales)
    if gtype == "Q5_0":
        def q5_scales(b, r):  # per row: d [nb, padded to an even count], qh [nb]
            even = nb + nb % 2
            out = np.zeros((r, 2 * even + 4 * nb), np.uint8)
            out[:, :2 * nb].view("V2")[:] = _field(b, 0, 2)
            out[:, 2 * even:].view("V4")[:] = _field(b, 2, 6)
            return out
        scales = _stacked([q5_scales(b, r) for b, r in blocks])
        return PackedMatrix(gtype, rows, cols, _stacked([_field(b, 6, 22) for b, _ in blocks]), scales)
    head = {"Q4_1": 4, "Q4_0": 2, "Q8_0": 2}[gtype]  # scale bytes at the start of each block
    qs = _stacked([_field(b, head, BLOCK_BYTES[gtype]) for b, _ in blocks])
    scales = _stacked([_field(b, 0, head) for b, _ in blocks])  # per row: d (Q4_1: d, m) [nb]
    return PackedMatrix(gtype, rows, cols, qs, scales)
