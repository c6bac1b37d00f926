"""Small stand-ins for ModelSpec and MachineSpec, for tests that must not depend on presets.

The hardware modules read specs by attribute, so these carry only the fields they use.
Values are the article's round numbers (a 7B in fp16, the H100 SXM spec sheet).
"""

from dataclasses import dataclass


@dataclass
class StandinModel:
    name: str = "standin-7b"
    params: float = 7e9
    active_params: float = 7e9
    size_bytes: float = 14e9
    bytes_read_per_token: float = 14e9
    layers: int = 32
    kv_layers: int = 32
    head_count: int = 32
    head_count_kv: int = 32
    head_dim: int = 128
    context_length: int = 32768
    expert_count: int = 0
    expert_used_count: int = 0


@dataclass
class StandinMachine:
    name: str = "standin-h100"
    bandwidth_gbs: float = 3350.0
    fp16_tflops: float = 990.0
    memory_gb: float = 80.0
    disk_gbs: float = 7.0
