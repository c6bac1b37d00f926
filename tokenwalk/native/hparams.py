"""The engine's configuration of a model: the hyper-parameters the core reads from its GGUF
metadata (`tokenwalk.gguf.hparams`, as llama.cpp's llama-hparams; the model specs read the
same), the vocabulary's size from the embedding table, and what the kernels need checked.

Counts are plain integers, ``rope_base`` the RoPE frequency base, ``rms_eps`` the RMSNorm
epsilon. The checks say what the engine's kernels need (full-width RoPE, head size a
multiple of 8, widths multiples of the 32-value quantization block) in one line each.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.errors import TokenwalkError
from tokenwalk.gguf.hparams import HParams, read_hparams
from tokenwalk.native.model_file import ModelFile


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
    hp = _read(file)
    cfg = LlamaConfig(**_shapes(file, hp), rope_dims=hp.rope_dims)
    if cfg.head_dim % 8 or cfg.rope_dims != cfg.head_dim or cfg.head_dim * cfg.head_count != cfg.embedding_length:
        raise TokenwalkError(f"{file.path}: head size {cfg.head_dim} with rope.dimension_count {cfg.rope_dims} is not "
                             "supported (the engine needs full-width RoPE, a head size that is a multiple of 8 and "
                             "heads that fill embedding_length)")
    _check_widths(file.path, cfg.embedding_length, cfg.feed_forward_length)
    return cfg


def _read(file: ModelFile) -> HParams:
    """The file's hyper-parameters as the core reads them (`tokenwalk.gguf.hparams`), with the
    keys that are optional there and needed here."""
    hp = read_hparams(file.metadata, file.path)
    for name, suffix in (("feed_forward_length", "feed_forward_length"), ("context_length", "context_length")):
        if getattr(hp, name) is None:
            raise TokenwalkError(f"{file.path}: metadata key {hp.architecture}.{suffix} is missing; the engine "
                                 f"needs it for a {hp.architecture} model")
    return hp


def _shapes(file: ModelFile, hp: HParams) -> dict:
    """The fields every family's config has: the core's counts, the vocabulary's size from
    the embedding table (what the kernels index), the RoPE base and the norm's epsilon."""
    names = ("layers", "embedding_length", "head_count", "head_count_kv", "head_dim", "feed_forward_length",
             "context_length", "rope_base", "rms_eps")
    return {name: getattr(hp, name) for name in names} | {"vocab_size": int(file.tensors["token_embd.weight"].shape[1])}


def _check_widths(path: str, embedding_length: int, feed_forward_length: int) -> None:
    if embedding_length % 32 or feed_forward_length % 32:
        raise TokenwalkError(f"{path}: embedding_length {embedding_length} / feed_forward_length "
                             f"{feed_forward_length} must be multiples of 32 (the quantization block)")


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


def gemma3_hparams(file: ModelFile) -> Gemma3Config:
    """The hyper-parameters of a Gemma 3 file (keys under ``gemma3.``): its sliding layers and
    their RoPE base are llama.cpp's rule for the architecture (`tokenwalk.gguf.hparams`)."""
    hp = _read(file)
    if hp.rope_scaling not in ("none", "linear"):
        raise TokenwalkError(f"{file.path}: {hp.architecture}.rope.scaling.type is {hp.rope_scaling!r}; the engine "
                             "supports linear scaling only")
    cfg = Gemma3Config(
        **_shapes(file, hp),
        rope_base_swa=hp.rope_base_swa,
        rope_scale_global=1.0 / hp.rope_scaling_factor if hp.rope_scaling == "linear" else 1.0,
        sliding_window=hp.sliding_window or 0,
        layer_windows=hp.layer_windows(),
    )
    if cfg.head_dim % 8 or hp.value_dim != cfg.head_dim:
        raise TokenwalkError(f"{file.path}: key length {cfg.head_dim} and value length {hp.value_dim} are not "
                             "supported (the engine needs equal lengths, a multiple of 8)")
    _check_widths(file.path, cfg.embedding_length, cfg.feed_forward_length)
    return cfg
