"""What "a model" and "a machine" are to the physics and timing modules: typed protocols.

`ModelSpec` and `MachineSpec` (tokenwalk.specs) satisfy them, and so do the published
llama-bench runs' `BenchModel` and `BenchMachine` and the tests' stand-ins: the modules
read these attributes directly, never with ``getattr(obj, name, default)``, so a field a
spec lacks is an AttributeError at once, not a default that silently turns a correction
off. Optional facts are None when unknown (``tied_embeddings``, ``expert_bytes`` and
``expert_ffn_length`` of a model without a tensor table or an expert width, ``fp16_tflops`` of a
machine without an FP16 figure, ``calibration`` of a machine without measurements).

Units as in the specs: parameters, bytes, GB/s, TFLOP/s.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Model(Protocol):
    """A model as the roofline, the KV cache and the timing model read it."""

    name: str
    params: float
    active_params: float
    size_bytes: float
    layers: int
    kv_layers: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    head_dim: int
    vocab_size: int | None
    context_length: int | None
    tied_embeddings: bool | None
    expert_count: int
    expert_used_count: int
    expert_ffn_length: int | None
    expert_bytes: float | None

    @property
    def bytes_read_per_token(self) -> float: ...

    @property
    def bits_per_weight(self) -> float: ...


@runtime_checkable
class Machine(Protocol):
    """A machine as the roofline and the timing model read it. `calibration` is the
    measurements its timing is solved on (None: timed on its backend's row of the fit);
    `spec_file` names where they were read, for errors."""

    name: str
    bandwidth_gbs: float
    fp16_tflops: float | None
    backend: str | None
    disk_gbs: float | None
    system_and_apps_bytes: float | None
    calibration: dict | None
