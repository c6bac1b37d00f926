"""The KV cache on the device (llama.cpp's llama-kv-cache): fp16 keys and values per layer.

fp16 as llama.cpp's default cache. Layout (kernels/kv_cache.cl): per KV head, ``rows`` cells,
keys transposed by groups of eight cells, values row by row; position pos in cell pos % rows.
A global layer has a cell for every position of the context; a sliding-window layer keeps a
ring of llama.cpp's size (llama_kv_cache_iswa, src/llama-kv-cache-iswa.cpp:
``size_swa = GGML_PAD(std::min(size_base, hparams.n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)``,
one sequence; the rule is tokenwalk.physics.kv_cache.kv_cells), with the engine's prefill
chunk as n_ubatch: the window and a chunk of new positions, so that no key a query of the
chunk sees is overwritten before the chunk's attention has read it. Sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.cl.device import Device, DeviceMemoryError
from tokenwalk.physics.kv_cache import kv_cells

KEY_GROUP = 16  # keys the prefill attention reads at a time from a multiple of 16 (AVX-512): a layer's cells are a multiple


def global_rows(ctx_tokens: int) -> int:
    """Cells per KV head of a global layer: the context rounded up to KEY_GROUP."""
    return -(-int(ctx_tokens) // KEY_GROUP) * KEY_GROUP


def layer_rows(config, ctx_tokens: int, chunk_tokens: int, swa_full: bool = False) -> tuple:
    """Cells per KV head of each layer for ``ctx_tokens`` positions and prefill chunks of
    ``chunk_tokens``: a global layer ``global_rows``; a sliding one llama.cpp's SWA cells with
    n_ubatch = ``chunk_tokens`` (at most the global count), or the global count with
    ``swa_full`` (llama.cpp's --swa-full). A config without ``layer_windows`` has global layers only."""
    full = global_rows(ctx_tokens)
    windows = getattr(config, "layer_windows", None) or (0,) * config.layers
    rows = []
    for window in windows:
        if not window or swa_full:
            rows.append(full)
            continue
        ring = kv_cells(SimpleNamespace(sliding_window=window), int(ctx_tokens), "sliding", allocated=True,
                        n_ubatch=int(chunk_tokens))
        if ring < full and (ring % KEY_GROUP or ring < window - 1 + chunk_tokens):
            raise ValueError(f"a ring of {ring} cells cannot serve a window of {window} and chunks of {chunk_tokens}")
        rows.append(min(ring, full))
    return tuple(rows)


def kv_cache_nbytes(config, rows) -> int:
    """Bytes of fp16 keys and values of every layer, for ``rows`` cells per KV head of each."""
    return sum(2 * config.head_count_kv * r * config.head_dim * 2 for r in rows)


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
    rows: tuple  # cells per KV head of each layer (kernels/kv_cache.cl)
    k: list  # cl.Buffer per layer
    v: list  # cl.Buffer per layer
    nbytes: int  # keys and values of every layer


def allocate_kv_cache(device: Device, config, ctx_tokens: int, chunk_tokens: int, swa_full: bool = False) -> KVCache:
    """Zeroed buffers for ``ctx_tokens`` positions, prefilled in chunks of at most
    ``chunk_tokens`` (``layer_rows``); a one-line error when they do not fit."""
    rows = layer_rows(config, ctx_tokens, chunk_tokens, swa_full)
    nbytes = kv_cache_nbytes(config, rows)
    try:
        halves = [config.head_count_kv * r * config.head_dim for r in rows]  # fp16 entries per layer
        k = [device.zeros(h // 2) for h in halves]
        v = [device.zeros(h // 2) for h in halves]
    except DeviceMemoryError as error:
        raise TokenwalkError(f"the KV cache for {ctx_tokens} tokens ({nbytes / 1e9:.2f} GB) "
                             f"does not fit on {device.short_name()}; pass a smaller --ctx ({error})") from None
    return KVCache(ctx_tokens=int(ctx_tokens), rows=rows, k=k, v=v, nbytes=nbytes)
