"""Open a GGUF model for the engine (llama.cpp's llama-model): its file, architecture and
hyper-parameters, checked once.

The architecture comes from the header's ``general.architecture`` through the table in
tokenwalk.native.architectures; nothing is dequantized here. Unsupported architectures and
tensor types raise a one-line TokenwalkError that says what and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.architectures import ARCHITECTURES, Architecture
from tokenwalk.native.model_file import map_model_file, metadata_field, read_header


@dataclass
class OpenModel:
    """A model the engine can run: file path, hyper-parameters, tensors and header fields."""

    path: str
    config: object  # the architecture's config (LlamaConfig for the llama family)
    tensors: dict  # name -> model_file.Tensor
    metadata: dict  # key -> python value
    architecture: Architecture


def open_model(path, header=None) -> OpenModel:
    """Memory-map ``path`` and check that the engine can run it (``header``: the file's header
    if the caller has read it already)."""
    if header is None:
        path, header = read_header(path)
    else:
        path = str(path)
    meta = header.metadata
    arch = metadata_field(meta, "general.architecture", path)
    if arch not in ARCHITECTURES:
        raise TokenwalkError(f"{path}: general.architecture is {arch!r}; the engine runs "
                             f"{', '.join(ARCHITECTURES)} models only (try a Llama, SmolLM2, TinyLlama, "
                             "Gemma 3 or Qwen2 GGUF)")
    file = map_model_file(path, header)
    architecture = ARCHITECTURES[arch]
    return OpenModel(path=path, config=architecture.hparams(file), tensors=file.tensors, metadata=file.metadata,
                     architecture=architecture)
