"""The KV cache in bytes: per token, and reserved for a whole context (num_ctx).

Every layer that keeps a KV cache stores one key and one value per KV head per token,
each `head_dim` numbers:

    bytes per token = 2 x KV layers x KV heads x head size x bytes per number

Qwen3.6 35B-A3B in f16: 2 x 10 x 2 x 256 x 2 = 20,480 bytes (grouped-query attention
and only one layer in four with full attention). The dense 7B without GQA:
2 x 32 x 32 x 128 x 2 = 524,288 bytes, 0.5 MB. Engines reserve the cache for the whole
num_ctx when the model loads, used or not.

Units: bytes; GB = 1e9 bytes.
"""

from __future__ import annotations

from tokenwalk.errors import TokenwalkError
from tokenwalk.gguf.ggml_types import ggml_type

# Cache types an engine offers (llama.cpp / Ollama: OLLAMA_KV_CACHE_TYPE) and the ggml
# type each is stored as. Quantized caches are blocks of 32 numbers with one fp16 scale
# (q8_0: 34 bytes; q4_0: 18 bytes), so their bytes per number are not round.
KV_TYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16", "q8_0": "Q8_0", "q4_0": "Q4_0"}


def kv_bytes_per_element(kv_type: str = "f16") -> float:
    """Bytes per cached number for a cache type: f16 2, q8_0 34/32, q4_0 18/32.

    Bytes per block over numbers per block of the ggml type the cache is stored as.
    """
    key = str(kv_type).lower()
    if key not in KV_TYPES:
        raise TokenwalkError(f"kv_type: unknown cache type {kv_type!r} (known: {', '.join(KV_TYPES)})")
    stored = ggml_type(KV_TYPES[key])
    return stored.type_size / stored.block_size


def kv_layers(model) -> int:
    """Layers that keep a KV cache: `model.kv_layers` (a hybrid model's full-attention
    layers; every layer of a plain transformer, as `ModelSpec` fills it in)."""
    return int(model.kv_layers)


def kv_bytes_per_token(model, kv_type: str = "f16", kv_layer_count: int | None = None) -> float:
    """Bytes of keys and values one token adds to the cache, over all layers that keep one.

    2 x KV layers x KV heads x head_dim x bytes per number. `kv_layer_count` overrides the
    model's KV layers (for example all of a hybrid model's layers, to show what the hybrid
    design saves). Qwen3.6 f16: 20,480; dense 7B fp16: 524,288.
    """
    layers = kv_layers(model) if kv_layer_count is None else int(kv_layer_count)
    return 2 * layers * model.head_count_kv * model.head_dim * kv_bytes_per_element(kv_type)


def kv_cache_bytes(model, tokens: int, kv_type: str = "f16") -> float:
    """Bytes of the cache that holds `tokens` tokens (134 MB for Qwen3.6 at ~6,550 tokens)."""
    return tokens * kv_bytes_per_token(model, kv_type)


def kv_reservation_bytes(model, num_ctx: int, kv_type: str = "f16", kv_layer_count: int | None = None) -> float:
    """Bytes reserved at load time for a context of `num_ctx` tokens, used or not.

    Qwen3.6 f16: num_ctx 16,384 -> 336 MB; 262,144 -> 5.4 GB (and 21.5 GB if all 40
    layers kept a cache, `kv_layer_count=40`).
    """
    if num_ctx < 0:
        raise TokenwalkError(f"num_ctx: must be >= 0, got {num_ctx}")
    return num_ctx * kv_bytes_per_token(model, kv_type, kv_layer_count)
