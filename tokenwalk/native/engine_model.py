"""Open a llama-architecture GGUF for the engine: its hyper-parameters and tensors.

The tensor data stay in the file's memory map (``gguf.GGUFReader``); nothing is
dequantized here. Unsupported architectures and tensor types raise a one-line
TokenwalkError that says what and what to do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from gguf import GGUFReader

from ..errors import TokenwalkError

SUPPORTED_ARCHITECTURES = ("llama",)
SUPPORTED_TYPES = ("F32", "F16", "Q8_0", "Q4_0", "Q4_1")


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


@dataclass
class OpenModel:
    path: str
    reader: GGUFReader
    config: LlamaConfig
    tensors: dict  # name -> gguf ReaderTensor
    metadata: dict  # scalar metadata (arrays of the tokenizer left out)


def _field(reader: GGUFReader, key: str, path: str, default=None):
    f = reader.fields.get(key)
    if f is None:
        if default is not None:
            return default
        raise TokenwalkError(f"{path}: metadata key {key} is missing; the engine needs it for a llama model")
    return f.contents()


def open_model(path, reader: GGUFReader | None = None) -> OpenModel:
    """Memory-map ``path`` and check that the engine can run it."""
    path = str(path)
    if not os.path.exists(path):
        raise TokenwalkError(f"{path}: no such model file; pass --model with the path of a .gguf file")
    if reader is None:
        try:
            reader = GGUFReader(path)
        except Exception as error:  # gguf raises ValueError/struct errors for bad files
            raise TokenwalkError(f"{path}: not a readable GGUF file ({error})") from None
    arch = _field(reader, "general.architecture", path)
    if arch not in SUPPORTED_ARCHITECTURES:
        raise TokenwalkError(f"{path}: general.architecture is {arch!r}; the engine runs "
                             f"{', '.join(SUPPORTED_ARCHITECTURES)} models only (try a Llama, SmolLM2 or "
                             "TinyLlama GGUF)")
    tensors = {t.name: t for t in reader.tensors}
    for t in reader.tensors:
        if t.tensor_type.name not in SUPPORTED_TYPES:
            raise TokenwalkError(f"{path}: tensor {t.name} has type {t.tensor_type.name}; the engine supports "
                                 f"{', '.join(SUPPORTED_TYPES)} (re-quantize the model to one of these)")
    a = arch
    n_embd = int(_field(reader, f"{a}.embedding_length", path))
    heads = int(_field(reader, f"{a}.attention.head_count", path))
    heads_kv = int(_field(reader, f"{a}.attention.head_count_kv", path, heads))
    head_dim = n_embd // heads
    vocab = int(tensors["token_embd.weight"].shape[1])
    cfg = LlamaConfig(
        layers=int(_field(reader, f"{a}.block_count", path)),
        embedding_length=n_embd,
        head_count=heads,
        head_count_kv=heads_kv,
        head_dim=head_dim,
        feed_forward_length=int(_field(reader, f"{a}.feed_forward_length", path)),
        vocab_size=vocab,
        context_length=int(_field(reader, f"{a}.context_length", path)),
        rope_base=float(_field(reader, f"{a}.rope.freq_base", path, 10000.0)),
        rope_dims=int(_field(reader, f"{a}.rope.dimension_count", path, head_dim)),
        rms_eps=float(_field(reader, f"{a}.attention.layer_norm_rms_epsilon", path, 1e-5)),
    )
    if head_dim % 8 or cfg.rope_dims != head_dim:
        raise TokenwalkError(f"{path}: head size {head_dim} with rope.dimension_count {cfg.rope_dims} is not "
                             "supported (the engine needs full-width RoPE and a head size that is a multiple of 8)")
    if n_embd % 32 or cfg.feed_forward_length % 32:
        raise TokenwalkError(f"{path}: embedding_length {n_embd} / feed_forward_length "
                             f"{cfg.feed_forward_length} must be multiples of 32 (the quantization block)")
    meta = {}
    for key, f in reader.fields.items():
        if key.startswith("tokenizer.ggml.") and key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                                                          "tokenizer.ggml.token_type"):
            continue
        try:
            meta[key] = f.contents()
        except Exception:  # an odd field the engine does not need
            pass
    return OpenModel(path=path, reader=reader, config=cfg, tensors=tensors, metadata=meta)
