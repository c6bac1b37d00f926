"""A GGUF file for the engine: its metadata and its tensors, memory-mapped, nothing decoded.

The header is read by the core's reader (tokenwalk.gguf.header, a fraction of a second;
gguf.GGUFReader builds numpy views of all 98,000 tokenizer strings, several seconds) and
the tensor data stay in a numpy memory map of the file, in the shapes gguf-py uses, so
gguf.quants can dequantize them. Which architecture the file holds, and what its
hyper-parameters are, is decided by tokenwalk.native.model. Sizes are bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import quant_shape_to_byte_shape

from tokenwalk.errors import TokenwalkError
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.native.supported import WEIGHT_TYPES

SUPPORTED_TYPES = WEIGHT_TYPES


@dataclass
class Tensor:
    """A tensor of the file: GGUF shape (ne0 first), gguf-py type, data as a memory-mapped view
    (quantized: uint8 rows of packed blocks; F32/F16: float rows), as gguf.GGUFReader gives."""

    name: str
    shape: tuple
    tensor_type: GGMLQuantizationType
    data: np.ndarray


@dataclass
class ModelFile:
    """A GGUF file's header fields and tensors (name -> Tensor)."""

    path: str
    metadata: dict  # key -> python value
    tensors: dict  # name -> Tensor

    @property
    def architecture(self):
        return self.metadata.get("general.architecture")


def metadata_field(meta: dict, key: str, path: str, default=None):
    """``meta[key]``; ``default`` where the key is missing, else a one-line TokenwalkError."""
    if key not in meta:
        if default is not None:
            return default
        raise TokenwalkError(f"{path}: metadata key {key} is missing; the engine needs it for a "
                             f"{meta.get('general.architecture', 'llama')} model")
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


def read_header(path):
    """(path as str, header) of an existing GGUF file; one-line errors for a missing or bad file."""
    path = str(path)
    if not os.path.exists(path):
        raise TokenwalkError(f"{path}: no such model file; pass --model with the path of a .gguf file")
    return path, read_gguf_header(path)  # raises GGUFError (a TokenwalkError) for bad files


def map_model_file(path: str, header) -> ModelFile:
    """Memory-map the tensors of ``path`` (header read by ``read_header``); every tensor type
    must be one the kernels have a layout for."""
    for t in header.tensors:
        if t.ggml_type not in SUPPORTED_TYPES:
            raise TokenwalkError(f"{path}: tensor {t.name} has type {t.ggml_type}; the engine supports "
                                 f"{', '.join(SUPPORTED_TYPES)} (re-quantize the model to one of these)")
    return ModelFile(path=path, metadata=dict(header.metadata), tensors=_map_tensors(path, header))
