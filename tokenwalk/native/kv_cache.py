"""The KV cache on the device (llama.cpp's llama-kv-cache): fp16 keys and values per layer.

fp16 as llama.cpp's default cache. Layout (kernels/kv_cache.cl): per KV head, CACHE_ROWS(ctx)
positions, that is ctx + 8 rounded up to a multiple of 8; keys transposed by groups of eight
positions, values row by row. Sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.cl.device import Device, DeviceMemoryError


def cache_rows(ctx_tokens: int) -> int:
    """Positions a layer's cache holds per KV head: CACHE_ROWS in kernels/kv_cache.cl."""
    return (int(ctx_tokens) + 15) // 8 * 8


def bytes_per_position(config) -> int:
    """Bytes one position adds to the cache: fp16 keys and values of every layer."""
    return 2 * config.layers * config.head_count_kv * config.head_dim * 2


def kv_bytes_read(config, position: float) -> float:
    """Bytes of fp16 keys and values a decode step reads at ``position`` (tokens already in
    the cache): every cached position on a global layer, at most its window on a sliding one
    (``config.layer_windows``, 0 for global; a config without it has global layers only)."""
    per_layer = 2 * config.head_count_kv * config.head_dim * 2
    windows = getattr(config, "layer_windows", None) or (0,) * config.layers
    return sum(per_layer * (min(position, w) if w else position) for w in windows)


@dataclass
class KVCache:
    """Key and value buffers, one of each per layer, for ``ctx_tokens`` positions."""

    ctx_tokens: int
    k: list  # cl.Buffer per layer
    v: list  # cl.Buffer per layer
    nbytes: int  # keys and values of every layer


def allocate_kv_cache(device: Device, config, ctx_tokens: int) -> KVCache:
    """Zeroed buffers for ``ctx_tokens`` positions; a one-line error when they do not fit."""
    halves = config.head_count_kv * cache_rows(ctx_tokens) * config.head_dim  # fp16 entries per layer
    nbytes = 2 * config.layers * halves * 2
    try:
        k = [device.zeros(halves // 2) for _ in range(config.layers)]
        v = [device.zeros(halves // 2) for _ in range(config.layers)]
    except DeviceMemoryError as error:
        raise TokenwalkError(f"the KV cache for {ctx_tokens} tokens ({nbytes / 1e9:.2f} GB) "
                             f"does not fit on {device.short_name()}; pass a smaller --ctx ({error})") from None
    return KVCache(ctx_tokens=int(ctx_tokens), k=k, v=v, nbytes=nbytes)
