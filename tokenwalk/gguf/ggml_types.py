"""The number formats a GGUF tensor can be stored in (ggml types), and what they cost.

A ggml type stores a tensor in blocks: `block_size` weights share `type_size` bytes
(their integer levels plus the block's scales). So a tensor of n weights takes
n / block_size × type_size bytes, and a format's bits per weight are
8 × type_size / block_size, scales included: Q8_0 8.5, Q4_0 4.5, Q4_K 4.5, Q6_K 6.5625.

The ids and sizes are the ones ggml writes into GGUF files, as gguf-py 0.19 knows them
(`gguf.constants.GGMLQuantizationType` and `GGML_QUANT_SIZES`); each size is spelled the
way ggml's block structs add it up, so it can be checked against ggml's sources. Ids that
ggml has retired (4, 5, 31-33, 36-38) are unknown here, as they are to gguf-py.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.errors import TokenwalkError

# Weights in one block of the K-quant (super-block) formats.
QK_K = 256


@dataclass(frozen=True)
class GGMLType:
    """One storage format: `block_size` weights in `type_size` bytes."""

    name: str
    type_id: int
    block_size: int
    type_size: int

    @property
    def bits_per_weight(self) -> float:
        """Bits per stored weight, block scales included (8 × type_size / block_size)."""
        return 8 * self.type_size / self.block_size

    @property
    def quantized(self) -> bool:
        """True for block formats (scales shared by a block), False for plain numbers."""
        return self.block_size > 1


# name, id, block size (weights), bytes per block. Sums follow ggml's block structs
# (d and m are fp16 scale and minimum; qs the packed levels; scales the sub-block scales).
_TABLE = [
    ("F32", 0, 1, 4),
    ("F16", 1, 1, 2),
    ("Q4_0", 2, 32, 2 + 16),
    ("Q4_1", 3, 32, 2 + 2 + 16),
    ("Q5_0", 6, 32, 2 + 4 + 16),
    ("Q5_1", 7, 32, 2 + 2 + 4 + 16),
    ("Q8_0", 8, 32, 2 + 32),
    ("Q8_1", 9, 32, 4 + 4 + 32),
    ("Q2_K", 10, QK_K, 2 + 2 + QK_K // 16 + QK_K // 4),
    ("Q3_K", 11, QK_K, 2 + QK_K // 4 + QK_K // 8 + 12),
    ("Q4_K", 12, QK_K, 2 + 2 + QK_K // 2 + 12),
    ("Q5_K", 13, QK_K, 2 + 2 + QK_K // 2 + QK_K // 8 + 12),
    ("Q6_K", 14, QK_K, 2 + QK_K // 2 + QK_K // 4 + QK_K // 16),
    ("Q8_K", 15, QK_K, 4 + QK_K + QK_K // 8),
    ("IQ2_XXS", 16, QK_K, 2 + QK_K // 4),
    ("IQ2_XS", 17, QK_K, 2 + QK_K // 4 + QK_K // 32),
    ("IQ3_XXS", 18, QK_K, 2 + QK_K // 4 + QK_K // 8),
    ("IQ1_S", 19, QK_K, 2 + QK_K // 8 + QK_K // 16),
    ("IQ4_NL", 20, 32, 2 + 16),
    ("IQ3_S", 21, QK_K, 2 + QK_K // 4 + QK_K // 8 + QK_K // 32 + 4),
    ("IQ2_S", 22, QK_K, 2 + QK_K // 4 + QK_K // 16),
    ("IQ4_XS", 23, QK_K, 2 + 2 + QK_K // 2 + QK_K // 64),
    ("I8", 24, 1, 1),
    ("I16", 25, 1, 2),
    ("I32", 26, 1, 4),
    ("I64", 27, 1, 8),
    ("F64", 28, 1, 8),
    ("IQ1_M", 29, QK_K, QK_K // 8 + QK_K // 16 + QK_K // 32),
    ("BF16", 30, 1, 2),
    ("TQ1_0", 34, QK_K, 2 + 4 * 13),
    ("TQ2_0", 35, QK_K, 2 + 64),
    ("MXFP4", 39, 32, 1 + 16),
    ("NVFP4", 40, 64, 4 + 32),
    ("Q1_0", 41, 128, 2 + 16),
]

GGML_TYPES: dict[str, GGMLType] = {name: GGMLType(name, tid, bs, ts) for name, tid, bs, ts in _TABLE}
GGML_TYPES_BY_ID: dict[int, GGMLType] = {t.type_id: t for t in GGML_TYPES.values()}

# llama_ftype (llama.h): a file's general.file_type -> the name people use for its mix of
# the types above (Q4_K_M: mostly Q4_K, some tensors Q6_K).
LLAMA_FTYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
                11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
                17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}


def ggml_type(name_or_id: str | int) -> GGMLType:
    """The format with this name ("Q4_K", case-insensitive) or id (12)."""
    if isinstance(name_or_id, int):
        found = GGML_TYPES_BY_ID.get(name_or_id)
    else:
        found = GGML_TYPES.get(str(name_or_id).upper())
    if found is None:
        raise TokenwalkError(f"unknown ggml type {name_or_id!r} (known: {', '.join(GGML_TYPES)})")
    return found


def bits_per_weight(name_or_id: str | int) -> float:
    """Bits per weight of a format, scales included (Q4_K → 4.5, Q6_K → 6.5625)."""
    return ggml_type(name_or_id).bits_per_weight


def tensor_n_elements(shape) -> int:
    """Number of weights in a tensor of this shape (the product of its dimensions)."""
    n = 1
    for dim in shape:
        n *= int(dim)
    return n


def tensor_n_bytes(shape, name_or_id: str | int) -> int:
    """Bytes a tensor of this shape takes in this format.

    `shape` is in GGUF order (first dimension = the row length, ne0). A row must hold a
    whole number of blocks; ggml refuses anything else, and so does this function.
    """
    t = ggml_type(name_or_id)
    shape = [int(d) for d in shape]
    if shape and shape[0] % t.block_size:
        raise TokenwalkError(
            f"a {t.name} row must hold whole blocks of {t.block_size} weights, "
            f"but the first dimension is {shape[0]}"
        )
    return tensor_n_elements(shape) // t.block_size * t.type_size
