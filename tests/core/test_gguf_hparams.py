"""One reading of a GGUF file's meaning (tokenwalk/gguf/hparams.py): the model specs and the
engine get their hyper-parameters from it, so on the same file they agree; the sliding-window
rule per architecture is stated there alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tokenwalk.errors import GGUFError
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.gguf.hparams import SWA_RULES, read_hparams
from tokenwalk.specs.model import model_from_gguf

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / ".cache" / "models"
# file, architecture, layers, width, heads, KV heads, head size, FFN width, sliding layers, window
# (each read from the file's header with gguf-py's reader when these were written)
FILES = [
    ("SmolLM2-135M-Instruct.Q4_1.gguf", "llama", 30, 576, 9, 3, 64, 1536, 0, None),
    ("gemma-3-270m-q4_k_m.gguf", "gemma3", 18, 640, 4, 1, 256, 2048, 15, 512),
    ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2", 24, 896, 14, 2, 64, 4864, 0, None),
]


def _header(name: str):
    path = MODELS / name
    if not path.exists():
        pytest.skip(f"{name} not fetched (run make setup)")
    return read_gguf_header(path)


@pytest.mark.parametrize("name, arch, layers, width, heads, kv_heads, head_dim, ffn, sliding, window", FILES)
def test_specs_and_engine_read_the_same_hyper_parameters(name, arch, layers, width, heads, kv_heads, head_dim, ffn,
                                                         sliding, window):
    pytest.importorskip("numpy")
    from tokenwalk.native.architectures import ARCHITECTURES
    from tokenwalk.native.model_file import map_model_file

    header = _header(name)
    spec = model_from_gguf(header)
    cfg = ARCHITECTURES[header.architecture].hparams(map_model_file(str(MODELS / name), header))
    assert (spec.architecture, spec.layers, spec.embedding_length, spec.head_count, spec.head_count_kv,
            spec.head_dim, spec.feed_forward_length, spec.kv_layers_swa, spec.sliding_window) == (
        arch, layers, width, heads, kv_heads, head_dim, ffn, sliding, window)
    for field in ("layers", "embedding_length", "head_count", "head_count_kv", "head_dim", "feed_forward_length",
                  "context_length", "vocab_size"):
        assert getattr(cfg, field) == getattr(spec, field), field
    windows = getattr(cfg, "layer_windows", (0,) * cfg.layers)  # llama and qwen2: no sliding layers
    assert sum(1 for w in windows if w) == spec.kv_layers_swa
    assert {w for w in windows if w} <= {spec.sliding_window}


def test_gemma3_slides_five_layers_in_six_by_llamas_rule():
    header = _header("gemma-3-270m-q4_k_m.gguf")
    assert "gemma3.attention.sliding_window_pattern" not in header.metadata  # the rule decides, not the file
    hp = read_hparams(header.metadata, header.source)
    assert hp.sliding_window_pattern == SWA_RULES["gemma3"][0] == 6
    assert hp.layer_windows() == (512, 512, 512, 512, 512, 0) * 3
    assert (hp.rope_base, hp.rope_base_swa) == (1_000_000.0, 10_000.0)  # the sliding layers' base is fixed


def test_a_header_that_says_which_layers_slide_is_followed():
    """A period or per-layer flags in the header win over the architecture's rule, for the
    counts and for the windows alike (stand-in metadata)."""
    meta = {"general.architecture": "gemma3", "gemma3.block_count": 8, "gemma3.embedding_length": 64,
            "gemma3.attention.head_count": 4, "gemma3.attention.sliding_window": 128}
    by_period = read_hparams({**meta, "gemma3.attention.sliding_window_pattern": 4}, "m.gguf")
    assert by_period.layer_windows() == (128, 128, 128, 0, 128, 128, 128, 0) and by_period.kv_layers_swa == 6
    flags = [True, False] * 4
    by_flags = read_hparams({**meta, "gemma3.attention.sliding_window_pattern": flags}, "m.gguf")
    assert by_flags.layer_windows() == (128, 0, 128, 0, 128, 0, 128, 0) and by_flags.kv_layers_swa == 4
    off = read_hparams({**meta, "gemma3.attention.sliding_window": 0}, "m.gguf")
    assert off.layer_windows() == (0,) * 8 and off.kv_layers_swa == 0
    # a qwen2 file's window is ignored, as llama.cpp ignores it
    qwen = read_hparams({k.replace("gemma3", "qwen2"): v for k, v in meta.items()}
                        | {"general.architecture": "qwen2"}, "m.gguf")
    assert qwen.kv_layers_swa == 0 and qwen.layer_windows() == (0,) * 8 and qwen.sliding_window == 128


def test_a_bad_rope_base_is_one_line_naming_the_key():
    meta = {"general.architecture": "llama", "llama.block_count": 2, "llama.embedding_length": 64,
            "llama.attention.head_count": 4, "llama.rope.freq_base": "fast"}
    with pytest.raises(GGUFError, match=r"^m.gguf: metadata key 'llama.rope.freq_base' should be a number > 0, "
                                        r"not 'fast'$"):
        read_hparams(meta, "m.gguf")


def test_no_other_module_reads_the_sliding_window_rule():
    """The period of an architecture's sliding layers is written once, and both readers of a
    file's header (the specs, the engine) take their hyper-parameters from that module."""
    package = ROOT / "tokenwalk"
    owners, readers = [], []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & {"SWA_RULES", "_SWA_RULES", "GEMMA3_SWA_PERIOD"}:
            owners.append(path.relative_to(package).as_posix())
        if any(isinstance(n, ast.ImportFrom) and n.module == "tokenwalk.gguf.hparams"
               and "read_hparams" in {a.name for a in n.names} for n in ast.walk(tree)):
            readers.append(path.relative_to(package).as_posix())
    assert owners == ["gguf/hparams.py"]
    assert readers == ["native/hparams.py", "specs/model.py"]
