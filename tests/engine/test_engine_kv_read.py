"""What a decode step reads from the KV cache (tokenwalk.native.kv_cache.kv_bytes_read), on
stand-in configs: a sliding layer reads at most its window, a global layer every position.
And what the cache holds (layer_rows, kv_cache_nbytes): a global layer a cell for every
position, a sliding layer a ring of llama.cpp's size for its SWA cache (src/llama-kv-cache-iswa.cpp:
GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256) cells), the engine's prefill chunk as n_ubatch."""

from types import SimpleNamespace

import pytest

pytest.importorskip("numpy")

from tokenwalk.native.kv_cache import (  # noqa: E402  (after importorskip)
    bytes_per_position,
    kv_bytes_read,
    kv_cache_nbytes,
    layer_rows,
)
from tokenwalk.physics.kv_cache import kv_reservation_bytes  # noqa: E402
from tokenwalk.specs.model import load_model  # noqa: E402

# Gemma 3 270M's shape: 18 layers, every sixth global, a window of 512, one KV head of 256
GEMMA3_270M = SimpleNamespace(layers=18, head_count_kv=1, head_dim=256,
                              layer_windows=tuple(0 if i % 6 == 5 else 512 for i in range(18)))


def test_global_layers_read_every_cached_position():
    cfg = SimpleNamespace(layers=30, head_count_kv=3, head_dim=64)  # a llama config has no windows
    assert kv_bytes_read(cfg, 6000) == bytes_per_position(cfg) * 6000 == 30 * 2 * 3 * 64 * 2 * 6000


def test_sliding_layers_read_their_window_only():
    # Gemma 3 270M's shape: 18 layers, every sixth global, a window of 512, one KV head of 256
    windows = tuple(0 if i % 6 == 5 else 512 for i in range(18))
    cfg = SimpleNamespace(layers=18, head_count_kv=1, head_dim=256, layer_windows=windows)
    per_layer_position = 2 * 1 * 256 * 2  # fp16 keys and values
    assert kv_bytes_read(cfg, 6000) == per_layer_position * (3 * 6000 + 15 * 512)
    assert kv_bytes_read(cfg, 100) == per_layer_position * 18 * 100  # inside the window: everything


def test_gemma3_kv_cache_at_32k_is_what_llama_cpp_allocates():
    # llama.cpp, one sequence, n_ubatch 512 (its default): 3 global layers of n_ctx = 32,768 cells,
    # 15 sliding ones of GGML_PAD(min(32,768, 512 + 512), 256) = 1,024; 1,024 bytes a cell and layer
    rows = layer_rows(GEMMA3_270M, 32_768, 512)
    assert rows == ((1024,) * 5 + (32_768,)) * 3
    llama_cpp = (3 * 32_768 + 15 * 1024) * 2 * 1 * 256 * 2
    assert kv_cache_nbytes(GEMMA3_270M, rows) == llama_cpp == 116_391_936
    assert llama_cpp == kv_reservation_bytes(load_model("gemma3-270m"), 32_768)  # the article's rule
    # the engine's default chunk of 128 tokens: rings of GGML_PAD(512 + 128, 256) = 768 cells
    assert kv_cache_nbytes(GEMMA3_270M, layer_rows(GEMMA3_270M, 32_768, 128)) == (3 * 32_768 + 15 * 768) * 1024
    # --swa-full (and this engine before the ring): every layer 32,768 cells, 604 MB
    full = layer_rows(GEMMA3_270M, 32_768, 128, swa_full=True)
    assert full == (32_768,) * 18 and kv_cache_nbytes(GEMMA3_270M, full) == 603_979_776


def test_a_ring_never_outgrows_the_context_and_global_layers_round_to_key_groups():
    assert layer_rows(GEMMA3_270M, 700, 128) == ((704,) * 6) * 3  # GGML_PAD(min(700, 640), 256) = 768 > 704
    assert layer_rows(GEMMA3_270M, 2048, 512) == ((1024,) * 5 + (2048,)) * 3
    llama = SimpleNamespace(layers=30, head_count_kv=3, head_dim=64)  # no windows: every layer global
    assert layer_rows(llama, 100, 128) == (112,) * 30
