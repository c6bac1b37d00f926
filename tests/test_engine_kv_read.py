"""What a decode step reads from the KV cache (tokenwalk.native.kv_cache.kv_bytes_read), on
stand-in configs: a sliding layer reads at most its window, a global layer every position."""

from types import SimpleNamespace

import pytest

pytest.importorskip("numpy")

from tokenwalk.native.kv_cache import bytes_per_position, kv_bytes_read  # noqa: E402


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
