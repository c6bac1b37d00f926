"""Open a llama-architecture GGUF for the engine: its hyper-parameters and tensors.

The header is read by the core's reader (tokenwalk.gguf.header, a fraction of a second;
gguf.GGUFReader builds numpy views of all 98,000 tokenizer strings, several seconds) and
the tensor data stay in a numpy memory map of the file, in the shapes gguf-py uses, so
gguf.quants can dequantize them. Nothing is dequantized here. Unsupported architectures and
tensor types raise a one-line TokenwalkError that says what and what to do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import quant_shape_to_byte_shape

from tokenwalk.errors import TokenwalkError
from tokenwalk.gguf.header import read_gguf_header

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
class Tensor:
    """A tensor of the file: GGUF shape (ne0 first), gguf-py type, data as a memory-mapped view
    (quantized: uint8 rows of packed blocks; F32/F16: float rows), as gguf.GGUFReader gives."""

    name: str
    shape: tuple
    tensor_type: GGMLQuantizationType
    data: np.ndarray


@dataclass
class OpenModel:
    path: str
    config: LlamaConfig
    tensors: dict  # name -> Tensor
    metadata: dict  # key -> python value


def _field(meta: dict, key: str, path: str, default=None):
    if key not in meta:
        if default is not None:
            return default
        raise TokenwalkError(f"{path}: metadata key {key} is missing; the engine needs it for a llama model")
    return meta[key]


def _map_tensors(path: str, header) -> dict:
    # a plain ndarray view of the map: numpy.memmap views cost a Python call per slice operation
    mm = np.memmap(path, mode="r", dtype=np.uint8).view(np.ndarray)
    tensors = {}
    for info in header.tensors:
        try:
            qtype = GGMLQuantizationType[info.ggml_type]
        except KeyError:
            raise TokenwalkError(f"{path}: tensor {info.name} has type {info.ggml_type}; the engine supports "
                                 f"{', '.join(SUPPORTED_TYPES)} (re-quantize the model to one of these)") from None
        raw = mm[info.data_offset:info.data_offset + info.n_bytes]
        shape = tuple(reversed(info.shape))  # numpy order: rows first
        if qtype == GGMLQuantizationType.F32:
            data = raw.view(np.float32).reshape(shape)
        elif qtype == GGMLQuantizationType.F16:
            data = raw.view(np.float16).reshape(shape)
        else:
            data = raw.reshape(quant_shape_to_byte_shape(shape, qtype))
        tensors[info.name] = Tensor(info.name, tuple(info.shape), qtype, data)
    return tensors


def open_model(path) -> OpenModel:
    """Memory-map ``path`` and check that the engine can run it."""
    path = str(path)
    if not os.path.exists(path):
        raise TokenwalkError(f"{path}: no such model file; pass --model with the path of a .gguf file")
    header = read_gguf_header(path)  # raises GGUFError (a TokenwalkError) for bad files
    meta = dict(header.metadata)
    arch = _field(meta, "general.architecture", path)
    if arch not in SUPPORTED_ARCHITECTURES:
        raise TokenwalkError(f"{path}: general.architecture is {arch!r}; the engine runs "
                             f"{', '.join(SUPPORTED_ARCHITECTURES)} models only (try a Llama, SmolLM2 or "
                             "TinyLlama GGUF)")
    for t in header.tensors:
        if t.ggml_type not in SUPPORTED_TYPES:
            raise TokenwalkError(f"{path}: tensor {t.name} has type {t.ggml_type}; the engine supports "
                                 f"{', '.join(SUPPORTED_TYPES)} (re-quantize the model to one of these)")
    tensors = _map_tensors(path, header)
    a = arch
    n_embd = int(_field(meta, f"{a}.embedding_length", path))
    heads = int(_field(meta, f"{a}.attention.head_count", path))
    heads_kv = int(_field(meta, f"{a}.attention.head_count_kv", path, heads))
    head_dim = n_embd // heads
    vocab = int(tensors["token_embd.weight"].shape[1])
    cfg = LlamaConfig(
        layers=int(_field(meta, f"{a}.block_count", path)),
        embedding_length=n_embd,
        head_count=heads,
        head_count_kv=heads_kv,
        head_dim=head_dim,
        feed_forward_length=int(_field(meta, f"{a}.feed_forward_length", path)),
        vocab_size=vocab,
        context_length=int(_field(meta, f"{a}.context_length", path)),
        rope_base=float(_field(meta, f"{a}.rope.freq_base", path, 10000.0)),
        rope_dims=int(_field(meta, f"{a}.rope.dimension_count", path, head_dim)),
        rms_eps=float(_field(meta, f"{a}.attention.layer_norm_rms_epsilon", path, 1e-5)),
    )
    if head_dim % 8 or cfg.rope_dims != head_dim:
        raise TokenwalkError(f"{path}: head size {head_dim} with rope.dimension_count {cfg.rope_dims} is not "
                             "supported (the engine needs full-width RoPE and a head size that is a multiple of 8)")
    if n_embd % 32 or cfg.feed_forward_length % 32:
        raise TokenwalkError(f"{path}: embedding_length {n_embd} / feed_forward_length "
                             f"{cfg.feed_forward_length} must be multiples of 32 (the quantization block)")
    return OpenModel(path=path, config=cfg, tensors=tensors, metadata=meta)
