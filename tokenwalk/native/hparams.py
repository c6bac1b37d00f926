"""Hyper-parameters of a model, read from its GGUF metadata (llama.cpp's llama-hparams).

Keys are ``{architecture}.*`` (``llama.block_count``, ...); counts are plain integers,
``rope_base`` the RoPE frequency base, ``rms_eps`` the RMSNorm epsilon. The checks say what
the engine's kernels need (full-width RoPE, head size a multiple of 8, widths multiples of
the 32-value quantization block) in one line each.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.model_file import ModelFile, metadata_field


@dataclass(frozen=True)
class LlamaConfig:
    """Hyper-parameters of a llama-architecture model (counts; rope_base is the RoPE base)."""

    layers: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    head_dim: int
    feed_forward_length: int
    vocab_size: int
    context_length: int
    rope_base: float
    rope_dims: int
    rms_eps: float


def llama_hparams(file: ModelFile) -> LlamaConfig:
    """The hyper-parameters of a llama-family file (keys under its own architecture name)."""
    meta, path, a = file.metadata, file.path, file.architecture
    n_embd = int(metadata_field(meta, f"{a}.embedding_length", path))
    heads = int(metadata_field(meta, f"{a}.attention.head_count", path))
    heads_kv = int(metadata_field(meta, f"{a}.attention.head_count_kv", path, heads))
    head_dim = n_embd // heads
    cfg = LlamaConfig(
        layers=int(metadata_field(meta, f"{a}.block_count", path)),
        embedding_length=n_embd,
        head_count=heads,
        head_count_kv=heads_kv,
        head_dim=head_dim,
        feed_forward_length=int(metadata_field(meta, f"{a}.feed_forward_length", path)),
        vocab_size=int(file.tensors["token_embd.weight"].shape[1]),
        context_length=int(metadata_field(meta, f"{a}.context_length", path)),
        rope_base=float(metadata_field(meta, f"{a}.rope.freq_base", path, 10000.0)),
        rope_dims=int(metadata_field(meta, f"{a}.rope.dimension_count", path, head_dim)),
        rms_eps=float(metadata_field(meta, f"{a}.attention.layer_norm_rms_epsilon", path, 1e-5)),
    )
    if head_dim % 8 or cfg.rope_dims != head_dim:
        raise TokenwalkError(f"{path}: head size {head_dim} with rope.dimension_count {cfg.rope_dims} is not "
                             "supported (the engine needs full-width RoPE and a head size that is a multiple of 8)")
    if n_embd % 32 or cfg.feed_forward_length % 32:
        raise TokenwalkError(f"{path}: embedding_length {n_embd} / feed_forward_length "
                             f"{cfg.feed_forward_length} must be multiples of 32 (the quantization block)")
    return cfg


@dataclass(frozen=True)
class Gemma3Config:
    """Hyper-parameters of a Gemma 3 model (counts; RoPE bases; windows in tokens).

    ``layer_windows[i]`` is layer i's sliding window in tokens, 0 for a layer that attends
    to the whole context; ``rope_scale_global`` multiplies the global layers' positions
    (1 / the linear rope.scaling.factor, 1.0 without one).
    """

    layers: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    head_dim: int
    feed_forward_length: int
    vocab_size: int
    context_length: int
    rope_base: float  # global layers
    rope_base_swa: float  # sliding-window layers
    rope_scale_global: float
    rms_eps: float
    sliding_window: int
    layer_windows: tuple

    @property
    def rope_dims(self) -> int:
        return self.head_dim


# Gemma 3 in llama.cpp (src/llama-model.cpp, LLM_ARCH_GEMMA3): with a sliding window in the
# header, set_swa_pattern(6) (layer il slides unless il % 6 == 5) and the sliding layers'
# RoPE base is fixed at 10,000 (rope_freq_base_train_swa); the global layers take
# gemma3.rope.freq_base and any linear rope.scaling.factor.
GEMMA3_SWA_PERIOD = 6
GEMMA3_ROPE_BASE_SWA = 10000.0


def gemma3_hparams(file: ModelFile) -> Gemma3Config:
    """The hyper-parameters of a Gemma 3 file (keys under ``gemma3.``)."""
    meta, path, a = file.metadata, file.path, file.architecture
    n_embd = int(metadata_field(meta, f"{a}.embedding_length", path))
    heads = int(metadata_field(meta, f"{a}.attention.head_count", path))
    heads_kv = int(metadata_field(meta, f"{a}.attention.head_count_kv", path, heads))
    head_dim = int(metadata_field(meta, f"{a}.attention.key_length", path, n_embd // heads))
    value_dim = int(metadata_field(meta, f"{a}.attention.value_length", path, head_dim))
    layers = int(metadata_field(meta, f"{a}.block_count", path))
    window = int(meta.get(f"{a}.attention.sliding_window") or 0)
    windows = tuple(window if window > 0 and i % GEMMA3_SWA_PERIOD < GEMMA3_SWA_PERIOD - 1 else 0
                    for i in range(layers))
    scaling = meta.get(f"{a}.rope.scaling.type", "none")
    factor = float(meta.get(f"{a}.rope.scaling.factor", 1.0) or 1.0)
    if scaling not in ("none", "linear"):
        raise TokenwalkError(f"{path}: {a}.rope.scaling.type is {scaling!r}; the engine supports linear scaling only")
    cfg = Gemma3Config(
        layers=layers,
        embedding_length=n_embd,
        head_count=heads,
        head_count_kv=heads_kv,
        head_dim=head_dim,
        feed_forward_length=int(metadata_field(meta, f"{a}.feed_forward_length", path)),
        vocab_size=int(file.tensors["token_embd.weight"].shape[1]),
        context_length=int(metadata_field(meta, f"{a}.context_length", path)),
        rope_base=float(metadata_field(meta, f"{a}.rope.freq_base", path, 1000000.0)),
        rope_base_swa=GEMMA3_ROPE_BASE_SWA,
        rope_scale_global=1.0 / factor if scaling == "linear" else 1.0,
        rms_eps=float(metadata_field(meta, f"{a}.attention.layer_norm_rms_epsilon", path, 1e-6)),
        sliding_window=window,
        layer_windows=windows,
    )
    if head_dim % 8 or value_dim != head_dim:
        raise TokenwalkError(f"{path}: key length {head_dim} and value length {value_dim} are not supported "
                             "(the engine needs equal lengths, a multiple of 8)")
    if n_embd % 32 or cfg.feed_forward_length % 32:
        raise TokenwalkError(f"{path}: embedding_length {n_embd} / feed_forward_length "
                             f"{cfg.feed_forward_length} must be multiples of 32 (the quantization block)")
    return cfg
