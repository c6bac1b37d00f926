"""Which graph runs which file: the one table from ``general.architecture`` to the engine's code.

Adding a family is its hyper-parameters, its weights' loader and its graph (a module), one
row here and its name in supported.py (what the help lists, without importing the engine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tokenwalk.native.graph_gemma3 import Gemma3Graph
from tokenwalk.native.graph_llama import LlamaGraph
from tokenwalk.native.graph_qwen2 import Qwen2Graph
from tokenwalk.native.hparams import gemma3_hparams, llama_hparams
from tokenwalk.native.supported import ARCHITECTURE_NAMES
from tokenwalk.native.weights import load_gemma3_weights, load_qwen2_weights, load_weights


@dataclass(frozen=True)
class Architecture:
    """An architecture the engine runs: how to read its hyper-parameters and which graph runs it."""

    name: str
    hparams: Callable  # (ModelFile) -> config
    weights: Callable  # (device, programs, OpenModel) -> ModelWeights
    graph: type  # (device, programs, config, weights, kv, chunk_tokens, decode_items) -> graph;
    # graph.program_defines(config) -> the kernels' compile-time shape


ARCHITECTURES = {
    "llama": Architecture("llama", llama_hparams, load_weights, LlamaGraph),
    "gemma3": Architecture("gemma3", gemma3_hparams, load_gemma3_weights, Gemma3Graph),
    # the llama hyper-parameters under qwen2.* keys; Q/K/V biases and NEOX RoPE in the graph
    "qwen2": Architecture("qwen2", llama_hparams, load_qwen2_weights, Qwen2Graph),
}
# the help names the families from supported.py, which must be these
if tuple(ARCHITECTURES) != ARCHITECTURE_NAMES:
    raise ImportError(f"tokenwalk.native.supported.ARCHITECTURE_NAMES {ARCHITECTURE_NAMES} "
                      f"differs from the engine's table {tuple(ARCHITECTURES)}")
