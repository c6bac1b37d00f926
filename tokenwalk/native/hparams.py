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
