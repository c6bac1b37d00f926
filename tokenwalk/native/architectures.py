"""Which graph runs which file: the one table from ``general.architecture`` to the engine's code.

Adding a family (Gemma 3 next) is one module with its hyper-parameters and its graph, and
one row here. Nothing else names an architecture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tokenwalk.native.graph_llama import LlamaGraph
from tokenwalk.native.hparams import llama_hparams


@dataclass(frozen=True)
class Architecture:
    """An architecture the engine runs: how to read its hyper-parameters and which graph runs it."""

    name: str
    hparams: Callable  # (ModelFile) -> config
    graph: type  # (device, programs, config, weights, kv, chunk_tokens, decode_items) -> graph


ARCHITECTURES = {
    "llama": Architecture("llama", llama_hparams, LlamaGraph),
}
