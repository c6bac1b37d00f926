"""Quantization of one block of weights, and the bits per weight of real GGUF formats.

The figure's quantizer follows Q4_0's rule at any bit width n: a block of weights shares
one scale d, stored as a 16-bit float; each weight is stored as an integer level in
-2^(n-1) ... 2^(n-1) - 1 (at 4 bits, -8 ... 7, as Q4_0); reading back is level × d.
The scale is set by the block's largest weight m (largest |w|, sign kept):
d = m / -2^(n-1), so m itself lands exactly on the level -2^(n-1) and nothing is clipped
except, at most, a weight of the opposite sign as large as m (clipped to 2^(n-1) - 1).

Why one large weight hurts: it sets d for the whole block, so the small weights get few
levels near zero. The K formats soften this with a second level of smaller scales.

Bits per weight count the scale: n + 16 / block size (4 + 16/32 = 4.5 for Q4_0).
The real formats' figures come from ggml's block sizes (tokenwalk.gguf.ggml_types).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from tokenwalk.gguf.ggml_types import bits_per_weight as _format_bits_per_weight

SCALE_BITS = 16  # one fp16 scale per block

# The formats the article names, with bits per weight from ggml's block layouts.
FORMAT_NAMES = ("Q8_0", "Q4_0", "Q4_K", "Q6_K")
FORMAT_BITS_PER_WEIGHT = {name: _format_bits_per_weight(name) for name in FORMAT_NAMES}


def to_fp16(x: float) -> float:
    """x rounded to the nearest IEEE half-precision float (what a GGUF block stores).

    Example: to_fp16(0.1) = 0.0999755859375. Overflow (|x| > 65504) raises ValueError.
    """
    try:
        return struct.unpack("<e", struct.pack("<e", x))[0]
    except (OverflowError, struct.error):
        raise ValueError(f"to_fp16: {x} does not fit in a 16-bit float") from None


@dataclass(frozen=True)
class QuantizedBlock:
    """One block after quantization. Errors are reconstructed − original (weight units)."""

    bits: int
    weights: list[float]
    scale: float  # fp16-rounded, weight units per level
    levels: list[int]  # integers in level_min ... level_max
    reconstructed: list[float]  # level × scale
    errors: list[float]  # reconstructed − weight
    largest_abs_weight: float
    mean_abs_error: float  # weight units
    mean_error_share: float  # mean |error| / largest |weight| (0.03 = 3 %)
    max_error_share: float  # largest |error| / largest |weight|
    level_min: int
    level_max: int
    bits_per_weight: float  # bits + 16 / block size (the scale included)

    def to_dict(self) -> dict:
        return asdict(self)


def level_range(bits: int) -> tuple[int, int]:
    """Integer levels at ``bits`` bits: (-2^(bits-1), 2^(bits-1) - 1)."""
    if not 1 < bits <= 16:
        raise ValueError(f"bits must be between 2 and 16, got {bits}")
    half = 1 << (bits - 1)
    return -half, half - 1


def quantize_block(weights: Sequence[float], bits: int) -> QuantizedBlock:
    """Quantize one block of weights at ``bits`` bits with one fp16 scale (Q4_0's rule).

    weights: the block (any length >= 1; ggml's Q4_0 and Q8_0 blocks hold 32).
    Levels are the nearest integers to w / d under the stored (fp16) scale d, halves
    rounded up, clamped to the level range.
    """
    if not weights:
        raise ValueError("quantize_block: empty block")
    lo, hi = level_range(bits)
    m = max(weights, key=abs)  # the largest weight, sign kept
    scale = to_fp16(m / lo) if m else 0.0
    if scale:
        levels = [min(hi, max(lo, math.floor(w / scale + 0.5))) for w in weights]
    else:
        levels = [0] * len(weights)
    rec = [q * scale for q in levels]
    errors = [r - w for r, w in zip(rec, weights, strict=False)]
    amax = abs(m)
    mean_abs = math.fsum(abs(e) for e in errors) / len(errors)
    max_abs = max(abs(e) for e in errors)
    return QuantizedBlock(
        bits=bits,
        weights=list(weights),
        scale=scale,
        levels=levels,
        reconstructed=rec,
        errors=errors,
        largest_abs_weight=amax,
        mean_abs_error=mean_abs,
        mean_error_share=mean_abs / amax if amax else 0.0,
        max_error_share=max_abs / amax if amax else 0.0,
        level_min=lo,
        level_max=hi,
        bits_per_weight=block_bits_per_weight(bits, len(weights)),
    )


def block_bits_per_weight(bits: int, block_size: int) -> float:
    """Bits per weight of a block with one fp16 scale: bits + 16 / block_size."""
    return bits + SCALE_BITS / block_size
