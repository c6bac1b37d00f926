"""The KV cache in bytes: per token, and reserved for a whole context (num_ctx).

Every layer that keeps a KV cache stores one key and one value per KV head per token,
each `head_dim` numbers:

    bytes per token = 2 x KV layers x KV heads x head size x bytes per number

Qwen3.6 35B-A3B in f16: 2 x 10 x 2 x 256 x 2 = 20,480 bytes (grouped-query attention
and only one layer in four with full attention). The dense 7B without GQA:
2 x 32 x 32 x 128 x 2 = 524,288 bytes, 0.5 MB. Engines reserve the cache for the whole
num_ctx when the model loads, used or not.

Layers come in three kinds (`kv_layer_kinds`): full attention keeps every token of the
context, a sliding window of N tokens keeps the last N (Gemma 3: 15 of its 18 layers,
N = 512), and DeltaNet-style layers keep none. So the cache is a function of the context,
per kind, in two forms:

- what the attention needs (`kv_cache_bytes`): full layers hold `tokens` tokens, sliding
  layers min(tokens, N);
- what llama.cpp allocates by default (`kv_reservation_bytes`): full layers num_ctx cells,
  sliding layers GGML_PAD(min(num_ctx, N + n_ubatch), 256) cells with n_ubatch 512
  (llama_kv_cache_iswa in src/llama-kv-cache-iswa.cpp: `size_swa = GGML_PAD(std::min(
  size_base, hparams.n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)`, one sequence;
  `--swa-full` gives them num_ctx cells like the others).

Gemma 3 270M in f16 at 32,768 tokens: 3 x 32,768 + 15 x 1,024 cells of 1,024 bytes,
116 MB allocated, not the 604 MB of 18 full layers.

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


LLAMA_CPP_N_UBATCH = 512    # llama_context_default_params(): n_ubatch
SWA_CELL_PAD = 256          # llama-kv-cache-iswa.cpp: the SWA cache is always padded to 256


def kv_layer_kinds(model) -> dict:
    """Layers per attention kind: {"full", "sliding", "none", "window"} (window: tokens a
    sliding layer keeps, None without sliding layers). Qwen3.6: 10 full, 30 none;
    Gemma 3 270M: 3 full, 15 sliding of 512."""
    sliding = int(getattr(model, "kv_layers_swa", 0) or 0)
    kv = kv_layers(model)
    return {"full": kv - sliding, "sliding": sliding, "none": int(model.layers) - kv,
            "window": int(model.sliding_window) if sliding else None}


def kv_bytes_per_token_per_layer(model, kv_type: str = "f16") -> float:
    """Bytes of one token's keys and values in one layer: 2 x KV heads x head_dim x bytes."""
    return 2 * model.head_count_kv * model.head_dim * kv_bytes_per_element(kv_type)


def kv_cells(model, num_ctx: int, kind: str, allocated: bool = False, n_ubatch: int = LLAMA_CPP_N_UBATCH,
             swa_full: bool = False) -> int:
    """Tokens one layer of `kind` ("full" or "sliding") holds for a context of `num_ctx`.

    allocated=False: what the attention needs (a window keeps min(num_ctx, N)); True: the
    cells llama.cpp allocates (sliding: GGML_PAD(min(num_ctx, N + n_ubatch), 256), or
    num_ctx with swa_full).
    """
    if num_ctx < 0:
        raise TokenwalkError(f"num_ctx: must be >= 0, got {num_ctx}")
    if kind == "full" or (allocated and swa_full):
        return int(num_ctx)
    if kind != "sliding":
        raise TokenwalkError(f"kind: {kind!r} is not 'full' or 'sliding'")
    window = int(model.sliding_window or 0)
    if not allocated:
        return min(int(num_ctx), window)
    cells = min(int(num_ctx), window + int(n_ubatch))
    return -(-cells // SWA_CELL_PAD) * SWA_CELL_PAD


def kv_bytes_by_kind(model, num_ctx: int, kv_type: str = "f16", allocated: bool = False,
                     n_ubatch: int = LLAMA_CPP_N_UBATCH, swa_full: bool = False) -> dict:
    """Bytes of the cache per layer kind for a context of `num_ctx` tokens: {"full",
    "sliding"} (layers x cells x bytes per token and layer); see `kv_cells` for the forms."""
    kinds = kv_layer_kinds(model)
    per = kv_bytes_per_token_per_layer(model, kv_type)
    return {kind: kinds[kind] * kv_cells(model, num_ctx, kind, allocated, n_ubatch, swa_full) * per
            if kinds[kind] else 0.0 for kind in ("full", "sliding")}


def kv_layers(model) -> int:
    """Layers that keep a KV cache, full or sliding: `model.kv_layers` (a hybrid model's
    full-attention layers; every layer of a plain transformer, as `ModelSpec` fills it in)."""
    return int(model.kv_layers)


def kv_bytes_per_token(model, kv_type: str = "f16", kv_layer_count: int | None = None) -> float:
    """Bytes of keys and values one token adds to the cache, over all layers that keep one
    (sliding layers included: every token is written; past the window it replaces one).

    2 x KV layers x KV heads x head_dim x bytes per number. `kv_layer_count` overrides the
    model's KV layers (for example all of a hybrid model's layers, to show what the hybrid
    design saves). Qwen3.6 f16: 20,480; dense 7B fp16: 524,288.
    """
    layers = kv_layers(model) if kv_layer_count is None else int(kv_layer_count)
    return layers * kv_bytes_per_token_per_layer(model, kv_type)


def kv_cache_bytes(model, tokens: int, kv_type: str = "f16") -> float:
    """Bytes the attention needs for `tokens` tokens of context: full layers keep them all,
    sliding layers the last N (134 MB for Qwen3.6 at ~6,550 tokens; Gemma 3 270M at
    32,768: 3 x 32,768 + 15 x 512 tokens x 1,024 bytes, 108 MB)."""
    if tokens < 0:
        raise TokenwalkError(f"tokens: must be >= 0, got {tokens}")
    return sum(kv_bytes_by_kind(model, tokens, kv_type).values())


def kv_reservation_bytes(model, num_ctx: int, kv_type: str = "f16", kv_layer_count: int | None = None,
                         n_ubatch: int = LLAMA_CPP_N_UBATCH, swa_full: bool = False) -> float:
    """Bytes reserved at load time for a context of `num_ctx` tokens, used or not, as
    llama.cpp allocates them (sliding layers: see `kv_cells`).

    Qwen3.6 f16: num_ctx 16,384 -> 336 MB; 262,144 -> 5.4 GB (and 21.5 GB if all 40
    layers kept a full cache, `kv_layer_count=40`). Gemma 3 270M at 32,768: 116 MB.
    """
    if num_ctx < 0:
        raise TokenwalkError(f"num_ctx: must be >= 0, got {num_ctx}")
    if kv_layer_count is not None:
        return num_ctx * kv_bytes_per_token(model, kv_type, kv_layer_count)
    return sum(kv_bytes_by_kind(model, num_ctx, kv_type, True, n_ubatch, swa_full).values())


def kv_at_context(model, tokens: int, kv_type: str = "f16", n_ubatch: int = LLAMA_CPP_N_UBATCH) -> dict:
    """The cache at a context of `tokens` (the model's own context in `inspect` and the
    simulator's GGUF picker): cells a layer holds and bytes per kind, needed and allocated."""
    kinds = kv_layer_kinds(model)
    present = [k for k in ("full", "sliding") if kinds[k]]
    out = {"tokens": int(tokens), "kv_type": kv_type, "n_ubatch": int(n_ubatch),
           "cells_per_layer": {"needed": {k: kv_cells(model, tokens, k) for k in present},
                               "allocated": {k: kv_cells(model, tokens, k, True, n_ubatch) for k in present}},
           "needed_bytes": kv_bytes_by_kind(model, tokens, kv_type),
           "allocated_bytes": kv_bytes_by_kind(model, tokens, kv_type, True, n_ubatch)}
    for form in ("needed_bytes", "allocated_bytes"):
        out[form]["total"] = sum(out[form].values())
    return out
