"""What the engine runs, as names only: light enough for `tokenwalk generate --help` (no numpy,
no pyopencl). ``architectures.ARCHITECTURES`` is keyed by ARCHITECTURE_NAMES and
``model_file`` refuses tensors outside WEIGHT_TYPES; both check against this table at import."""

from __future__ import annotations

# general.architecture -> the families the engine has a graph for (see architectures.py)
ARCHITECTURE_NAMES = ("llama", "gemma3", "qwen2")
# tensor types the engine's kernels read
WEIGHT_TYPES = ("F32", "F16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q4_K", "Q6_K")
