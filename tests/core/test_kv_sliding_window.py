"""Sliding-window layers: counted per kind from the header or llama.cpp's rule, and KV bytes
as the attention needs them and as llama.cpp allocates them."""

from __future__ import annotations

import pytest
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as V

from tests.support.gguf_files import ROOT, write_gguf
from tokenwalk.cli.inspect import format_report, inspect_model
from tokenwalk.errors import SpecError
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.physics.kv_cache import (
    kv_bytes_by_kind,
    kv_bytes_per_token,
    kv_cache_bytes,
    kv_cells,
    kv_layer_kinds,
    kv_reservation_bytes,
)
from tokenwalk.physics.memory_budget import memory_budget
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import layer_kind_counts, load_model, model_from_dict, model_from_gguf, model_to_preset

GEMMA3 = ROOT / ".cache" / "models" / "gemma-3-270m-q4_k_m.gguf"
needs_gemma3 = pytest.mark.skipif(not GEMMA3.exists(),
                                  reason="Gemma 3 270M file not fetched (make setup joins it into .cache/models/)")


def write_small(path, arch: str, layers: int, extra=(), window: int | None = 64):
    """A tiny GGUF of `layers` blocks, 2 query heads and 1 KV head of 16, with `extra` keys."""
    kvs = [(f"{arch}.block_count", layers, V.UINT32, None),
           (f"{arch}.context_length", 4096, V.UINT32, None),
           (f"{arch}.embedding_length", 32, V.UINT32, None),
           (f"{arch}.attention.head_count", 2, V.UINT32, None),
           (f"{arch}.attention.head_count_kv", 1, V.UINT32, None),
           (f"{arch}.attention.key_length", 16, V.UINT32, None)]
    if window is not None:
        kvs.append((f"{arch}.attention.sliding_window", window, V.UINT32, None))
    tensors = [("token_embd.weight", (32, 64), Q.F32)]
    tensors += [(f"blk.{i}.attn_q.weight", (32, 32), Q.F32) for i in range(layers)]
    return write_gguf(path, arch, kvs + list(extra), tensors)


def kinds_of(path):
    m = model_from_gguf(read_gguf_header(path))
    return m, kv_layer_kinds(m)


def test_gemma3_rule_every_sixth_layer_global(tmp_path):
    """gemma3 without a pattern key: llama.cpp's set_swa_pattern(6), 5 sliding then 1 global."""
    m, kinds = kinds_of(write_small(tmp_path / "g3.gguf", "gemma3", 18))
    assert kinds == {"full": 3, "sliding": 15, "none": 0, "window": 64}
    assert m.sliding_window_pattern == 6 and "set_swa_pattern(6)" in m.sources["sliding_window_pattern"]
    _, kinds = kinds_of(write_small(tmp_path / "g3b.gguf", "gemma3", 26))     # Gemma 3 1B
    assert (kinds["full"], kinds["sliding"]) == (4, 22)


def test_gemma3_without_window_has_no_sliding_layers(tmp_path):
    """llama.cpp: gemma3 with no sliding_window (or 0) builds no SWA cache."""
    _, kinds = kinds_of(write_small(tmp_path / "a.gguf", "gemma3", 12, window=None))
    assert (kinds["full"], kinds["sliding"]) == (12, 0)
    _, kinds = kinds_of(write_small(tmp_path / "b.gguf", "gemma3", 12, window=0))
    assert (kinds["full"], kinds["sliding"]) == (12, 0)


def test_gemma2_alternates_with_its_default_window(tmp_path):
    """gemma2: alternate layers slide; no window key means llama.cpp's 4096."""
    m, kinds = kinds_of(write_small(tmp_path / "g2.gguf", "gemma2", 26, window=None))
    assert kinds == {"full": 13, "sliding": 13, "none": 0, "window": 4096}
    assert "4096" in m.sources["sliding_window"]


def test_header_pattern_wins_period_and_flags(tmp_path):
    """The header's sliding_window_pattern decides: a period, or per-layer flags."""
    extra = [("gemma3.attention.sliding_window_pattern", 3, V.UINT32, None)]
    _, kinds = kinds_of(write_small(tmp_path / "p.gguf", "gemma3", 9, extra))
    assert (kinds["full"], kinds["sliding"]) == (3, 6)
    flags = [True, True, False, True, False, False]
    extra = [("gemma4.attention.sliding_window_pattern", flags, V.ARRAY, V.BOOL)]
    _, kinds = kinds_of(write_small(tmp_path / "f.gguf", "gemma4", 6, extra))
    assert (kinds["full"], kinds["sliding"]) == (3, 3)


def test_unknown_architecture_window_without_rule_slides_nothing(tmp_path):
    """A qwen2-style file's sliding_window is ignored by llama.cpp: every layer is full."""
    m, kinds = kinds_of(write_small(tmp_path / "q.gguf", "qwen2", 8))
    assert (kinds["full"], kinds["sliding"]) == (8, 0)
    assert "no rule" in m.sources["kv_layers_swa"]


def test_counts_are_arithmetic_for_huge_layer_counts():
    """A hostile header may claim 10^12 layers: counting must not loop over them."""
    counts = layer_kind_counts(10**12, swa_period=6)
    assert counts == {"full": 10**12 // 6, "sliding": 10**12 - 10**12 // 6, "none": 0}
    counts = layer_kind_counts(10**12, full_interval=4, swa_period=2)
    assert counts["none"] == 3 * 10**12 // 4 and counts["sliding"] == 0
    with pytest.raises(SpecError):
        layer_kind_counts(10, full_interval=65_521, swa_period=65_519)   # lcm over the bound


def test_hybrid_and_sliding_combine_per_layer():
    """DeltaNet layers keep nothing; among the attention layers the window rule applies."""
    assert layer_kind_counts(6, kv_per_layer=[0, 1, 1, 0], swa_period=2) == {"full": 1, "sliding": 1, "none": 4}
    assert layer_kind_counts(12, full_interval=2, swa_period=3) == {"full": 2, "sliding": 4, "none": 6}


def test_cells_needed_and_allocated():
    """Needed: min(ctx, N). Allocated (llama-kv-cache-iswa.cpp): GGML_PAD(min(ctx, N + 512), 256)."""
    m = load_model("gemma3-270m")
    assert kv_cells(m, 32_768, "sliding") == 512 and kv_cells(m, 100, "sliding") == 100
    assert kv_cells(m, 32_768, "sliding", allocated=True) == 1024
    assert kv_cells(m, 700, "sliding", allocated=True) == 768       # min(700, 1024) padded to 256
    assert kv_cells(m, 32_768, "sliding", allocated=True, n_ubatch=2048) == 2560
    assert kv_cells(m, 32_768, "sliding", allocated=True, swa_full=True) == 32_768
    assert kv_cells(m, 32_768, "full", allocated=True) == 32_768


def test_gemma3_preset_at_its_context_is_116_mb_not_604():
    """The issue's numbers: 3 x 32,768 + 15 x 1,024 cells of 1,024 bytes."""
    m = load_model("gemma3-270m")
    assert kv_bytes_per_token(m) == 18 * 1024 == 18_432
    allocated = kv_reservation_bytes(m, 32_768)
    assert allocated == (3 * 32_768 + 15 * 1024) * 1024 == 116_391_936
    assert round(allocated / 1e6) == 116
    assert round(kv_reservation_bytes(m, 32_768, swa_full=True) / 1e6) == 604
    assert kv_cache_bytes(m, 32_768) == (3 * 32_768 + 15 * 512) * 1024
    assert kv_bytes_by_kind(m, 32_768, allocated=True) == {"full": 3 * 32_768 * 1024, "sliding": 15 * 1024 * 1024}
    laptop = load_machine("laptop-860m")
    assert memory_budget(m, laptop, 32_768).kv_cache_bytes == allocated


def test_models_without_windows_keep_their_numbers():
    """Qwen3.6 (DeltaNet + full) and the dense 7B go through the same per-kind path unchanged."""
    qwen = load_model("qwen3.6-35b-a3b")
    assert kv_layer_kinds(qwen) == {"full": 10, "sliding": 0, "none": 30, "window": None}
    assert kv_reservation_bytes(qwen, 16_384) == 16_384 * 20_480
    assert kv_cache_bytes(qwen, 6550) == 6550 * 20_480
    d7 = load_model("dense-7b-fp16")
    assert kv_cache_bytes(d7, 4096) == 4096 * kv_bytes_per_token(d7)


def test_json_schema_fields():
    """kv_layers_swa and sliding_window, or sliding_window_pattern, in a model JSON."""
    base = {"name": "m", "params": 1e9, "size_bytes": 1e9, "layers": 12, "embedding_length": 512,
            "head_count": 8, "head_count_kv": 2, "head_dim": 64}
    m = model_from_dict({**base, "sliding_window": 1024, "sliding_window_pattern": 4}, "m.json")
    assert (m.kv_layers_full, m.kv_layers_swa) == (3, 9)
    m = model_from_dict({**base, "sliding_window": 1024, "kv_layers_swa": 10}, "m.json")
    assert (m.kv_layers_full, m.kv_layers_swa) == (2, 10)
    with pytest.raises(SpecError, match="sliding_window"):
        model_from_dict({**base, "kv_layers_swa": 4}, "m.json")
    with pytest.raises(SpecError, match="kv_layers_swa"):
        model_from_dict({**base, "sliding_window": 8, "kv_layers_swa": 13}, "m.json")


def test_inspect_prints_kinds_and_context(capsys):
    report = inspect_model("gemma3-270m")
    assert report["kv_layer_kinds"] == {"full": 3, "sliding": 15, "none": 0, "window": 512}
    assert report["kv_at_context"]["allocated_bytes"]["total"] == 116_391_936
    text = format_report(report)
    assert "15 attend through a sliding window of 512 tokens" in text
    assert "KV at 32,768 tokens" in text and "116 MB as llama.cpp allocates it" in text


@needs_gemma3
def test_real_gemma3_file():
    """The real file: header as the issue describes it, and the preset is that header."""
    header = read_gguf_header(GEMMA3)
    m = model_from_gguf(header, name="gemma3-270m")
    assert (m.architecture, m.layers, m.embedding_length, m.head_count, m.head_count_kv, m.head_dim) == \
        ("gemma3", 18, 640, 4, 1, 256)
    assert (m.feed_forward_length, m.vocab_size, m.context_length, m.size_bytes) == (2048, 262_144, 32_768,
                                                                                   253_113_024)
    assert kv_layer_kinds(m) == {"full": 3, "sliding": 15, "none": 0, "window": 512}
    assert round(kv_reservation_bytes(m, m.context_length) / 1e6) == 116
    assert {"Q8_0", "Q5_0", "Q4_K", "Q6_K", "F32"} == set(m.tensor_types)
    preset = model_to_preset(load_model("gemma3-270m"))
    from_file = model_to_preset(m)
    for key, value in from_file.items():
        if key not in ("title", "sources"):
            assert preset[key] == value, key


def test_simulator_gguf_picker_reports_what_inspect_does(tmp_path):
    """The browser's inspect_gguf gives the same kinds and bytes at context as `inspect`."""
    from tokenwalk_app.entry import inspect_gguf
    path = write_small(tmp_path / "g3.gguf", "gemma3", 18, window=512)
    data = path.read_bytes()
    info = inspect_gguf(data, len(data), "g3.gguf")
    report = inspect_model(str(path))
    assert info["kv_layer_kinds"] == report["kv_layer_kinds"] == {"full": 3, "sliding": 15, "none": 0,
                                                                   "window": 512}
    assert info["kv_at_context"] == report["kv_at_context"]
    assert info["kv_at_context"]["allocated_bytes"]["sliding"] == 15 * 1024 * 2 * 16 * 2


# Attention operations in sliding-window layers (physics.roofline): a query sees at most the
# window's keys, so a long prompt's attention in those layers grows linearly, not squarely.

def test_pairs_within_window_on_the_continuous_count():
    from tokenwalk.physics.roofline import pairs_within_window, prefill_query_key_pairs

    # no window, or a window the chunk never reaches: the full layer's count
    assert pairs_within_window(100, 50, None) == prefill_query_key_pairs(100, 50) == 100 * 50 + 100 * 100 / 2
    assert pairs_within_window(100, 50, 1000) == prefill_query_key_pairs(100, 50)
    # a chunk entirely past the window: chunk x window
    assert pairs_within_window(100, 600, 512) == 100 * 512
    # a chunk that reaches the window after 12 queries: the ramp, then the window
    assert pairs_within_window(100, 500, 512) == 12 * 500 + 12 * 12 / 2 + 88 * 512
    # from an empty cache, 6,380 tokens at 512: 512^2 / 2 + (6,380 - 512) x 512
    assert pairs_within_window(6380, 0, 512) == 512 * 512 / 2 + (6380 - 512) * 512


def test_gemma3_prompt_attention_counts_its_window_and_stand_ins_without_one_do_not():
    """Gemma 3 270M (3 global layers, 15 sliding of 512, 4 heads of 256) over a 6,380-token
    prompt: the operations the size check and this-machine's compute figure count."""
    from tokenwalk.physics.roofline import Peaks, chunk_attention_flops, prefill_query_key_pairs, prefill_step

    gemma = load_model("gemma3-270m")
    full = prefill_query_key_pairs(6380)
    windowed = 512 * 512 / 2 + (6380 - 512) * 512
    assert chunk_attention_flops(gemma, 6380) == 4 * 1024 * (3 * full + 15 * windowed)
    assert 69e6 < chunk_attention_flops(gemma, 6380) / 6380 < 71e6  # not 235 million a token
    # a prefill chunk past the window charges the sliding layers chunk x window pairs
    step = prefill_step(gemma, Peaks(1.0, 1.0), 512, 4096)
    weights = 512 * 2.0 * gemma.active_params
    assert step.flops - weights == 4 * 1024 * (3 * (512 * 4096 + 512 * 512 / 2) + 15 * 512 * 512)
    smol = load_model("smollm2-135m")  # no sliding layers: every layer sees the whole prompt
    assert chunk_attention_flops(smol, 6642) == 4 * 30 * 576 * prefill_query_key_pairs(6642)
    # a decode step 6,000 tokens deep: the global layers see 6,001 keys, the sliding ones 512
    from tokenwalk.physics.roofline import decode_step
    d = decode_step(gemma, Peaks(1.0, 1.0), 6000)
    assert d.flops - 2.0 * gemma.active_params == 4 * 1024 * (3 * 6001 + 15 * 512)
