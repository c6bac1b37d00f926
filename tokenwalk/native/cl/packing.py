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
    qs: np.ndarray  # packed values (or the f16/f32 weights, or Q4_K's blocks)
    scales: np.ndarray  # scales as stored (uint8 bytes or fp16); a dummy for F16, F32, Q4_K

    @property
    def nbytes(self) -> int:
        """Bytes a full pass over this matrix reads on the device."""
        dummy = self.kernel_type in ("F16", "F32", "Q4_K")
        return int(self.qs.nbytes + (0 if dummy else self.scales.nbytes))


def _rows_bytes(tensor) -> tuple[np.ndarray, int, int]:
    cols, rows = int(tensor.shape[0]), int(tensor.shape[1]) if len(tensor.shape) > 1 else 1
    return np.asarray(tensor.data), rows, cols


def _bytes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def pack_tensors(tensors, name: str = "") -> PackedMatrix:
    """Pack one matrix, or several with the same type and width stacked by rows (fused Q|K|V)."""
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
    data = np.concatenate([p[0].reshape(p[1], -1) for p in parts], axis=0)
    if gtype in ("F16", "F32"):
        dtype = np.float16 if gtype == "F16" else np.float32
        w = np.ascontiguousarray(data.view(dtype) if data.dtype == np.uint8 else data.astype(dtype, copy=False))
        return PackedMatrix(gtype, rows, cols, w.reshape(rows, cols), np.zeros(2, np.float16))
    nb = cols // BLOCK_WEIGHTS.get(gtype, 32)
    blocks = data.reshape(rows, nb, BLOCK_BYTES[gtype])
    if gtype == "Q4_K":
        return PackedMatrix(gtype, rows, cols, np.ascontiguousarray(data).reshape(-1), np.zeros(2, np.uint8))
    if gtype == "Q6_K":
        qs = blocks[:, :, 0:192]  # ql (128) | qh (64)
        scales = np.concatenate([blocks[:, :, 192:208].reshape(rows, -1), blocks[:, :, 208:210].reshape(rows, -1)],
                                axis=1)  # per row: int8 scales [nb][16], then d [nb]
        return PackedMatrix(gtype, rows, cols, np.ascontiguousarray(qs), np.ascontiguousarray(scales))
    if gtype == "Q5_0":
        d = blocks[:, :, 0:2].reshape(rows, -1)
        if nb % 2:
            d = np.concatenate([d, np.zeros((rows, 2), np.uint8)], axis=1)
        scales = np.concatenate([d, blocks[:, :, 2:6].reshape(rows, -1)], axis=1)  # d [nb (even)], qh [nb]
        return PackedMatrix(gtype, rows, cols, np.ascontiguousarray(blocks[:, :, 6:22]), np.ascontiguousarray(scales))
    head = {"Q4_1": 4, "Q4_0": 2, "Q8_0": 2}[gtype]  # scale bytes at the start of each block
    qs = np.ascontiguousarray(blocks[:, :, head:])
    return PackedMatrix(gtype, rows, cols, qs, _bytes(blocks[:, :, :head]).view(np.uint16).reshape(rows, -1))
