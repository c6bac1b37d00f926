"""Repack GGUF weight matrices into the device layouts of kernels/llama.cl (still quantized).

GGUF stores a quantized row as consecutive blocks (scale(s) then packed values, 18, 20 or
34 bytes each), which leaves the values unaligned for vector loads. At load time each matrix
is split into an aligned array of packed values and an array of scales (float32, exact
copies of the file's fp16); the values and the scales are copied bit for bit, so nothing is
dequantized or re-rounded (Q4_0 becomes Q4_1 with m = -8 d, exact: a power-of-two multiple).
This is the kernels' side of the weights (ggml's repacking); which tensors form which
matrix is the model's side (tokenwalk.native.weights). Sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokenwalk.errors import TokenwalkError

# Device layout of each GGUF type (several GGUF types share one kernel program).
KERNEL_TYPE = {"Q4_1": "Q4_1", "Q4_0": "Q4_1", "Q8_0": "Q8_0", "F16": "F16", "F32": "F32"}
BLOCK_BYTES = {"Q4_1": 20, "Q4_0": 18, "Q8_0": 34}


@dataclass
class PackedMatrix:
    """One weight matrix in device layout: y = W x with W of shape (rows, cols)."""

    kernel_type: str  # program variant: Q4_1, Q8_0, F16, F32
    rows: int
    cols: int
    qs: np.ndarray  # packed values (or the f16/f32 weights)
    scales: np.ndarray  # float32 scales, exact copies of the file's fp16 (dummy for F16/F32)

    @property
    def nbytes(self) -> int:
        """Bytes a full pass over this matrix reads on the device."""
        return int(self.qs.nbytes + (self.scales.nbytes if self.kernel_type in ("Q4_1", "Q8_0") else 0))


def _rows_bytes(tensor) -> tuple[np.ndarray, int, int]:
    cols, rows = int(tensor.shape[0]), int(tensor.shape[1]) if len(tensor.shape) > 1 else 1
    return np.asarray(tensor.data), rows, cols


def pack_tensors(tensors, name: str = "") -> PackedMatrix:
    """Pack one matrix, or several with the same type and width stacked by rows (fused Q|K|V)."""
    types = {t.tensor_type.name for t in tensors}
    if len(types) != 1:
        raise ValueError(f"cannot fuse tensors of types {sorted(types)}")
    gtype = types.pop()
    if gtype not in KERNEL_TYPE:
        raise TokenwalkError(f"tensor {name or tensors[0].name} has type {gtype}; the engine supports "
                             f"{', '.join(KERNEL_TYPE)}")
    parts = [_rows_bytes(t) for t in tensors]
    cols = parts[0][2]
    rows = sum(p[1] for p in parts)
    data = np.concatenate([p[0].reshape(p[1], -1) for p in parts], axis=0)
    nb = cols // 32
    if gtype in ("F16", "F32"):
        dtype = np.float16 if gtype == "F16" else np.float32
        w = np.ascontiguousarray(data.view(dtype) if data.dtype == np.uint8 else data.astype(dtype, copy=False))
        return PackedMatrix(gtype, rows, cols, w.reshape(rows, cols), np.zeros(2, np.float16))
    blocks = data.reshape(rows, nb, BLOCK_BYTES[gtype])
    if gtype == "Q4_1":
        dm = np.ascontiguousarray(blocks[:, :, 0:4]).view(np.float16).reshape(rows, nb, 2)
        qs = np.ascontiguousarray(blocks[:, :, 4:20])
    elif gtype == "Q4_0":
        d = np.ascontiguousarray(blocks[:, :, 0:2]).view(np.float16).reshape(rows, nb)
        dm = np.stack([d, (d.astype(np.float32) * -8.0).astype(np.float16)], axis=-1)
        qs = np.ascontiguousarray(blocks[:, :, 2:18])
    else:  # Q8_0
        dm = np.ascontiguousarray(blocks[:, :, 0:2]).view(np.float16).reshape(rows, nb)
        qs = np.ascontiguousarray(blocks[:, :, 2:34]).view(np.int8)
    # fp16 -> fp32 is exact; float scales spare the kernels a software conversion per block
    # (PoCL has no fp16 loads) at the price of 4 (Q8_0) or 8 (Q4) more bytes per block.
    return PackedMatrix(KERNEL_TYPE[gtype], rows, cols, np.ascontiguousarray(qs),
                        np.ascontiguousarray(dm, dtype=np.float32))
