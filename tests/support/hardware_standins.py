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
    embedding_length: int = 4096
    vocab_size: int | None = None
    tied_embeddings: bool | None = None
    expert_count: int = 0
    expert_used_count: int = 0
    expert_ffn_length: int | None = None
    expert_bytes: float | None = None

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.size_bytes / self.params


@dataclass
class StandinMachine:
    name: str = "standin-h100"
    bandwidth_gbs: float = 3350.0
    fp16_tflops: float = 990.0
    memory_gb: float = 80.0
    disk_gbs: float = 7.0
    backend: str | None = None
    system_and_apps_bytes: float | None = None
    calibration: dict | None = None
    spec_file: str = ""


def qwen_standin():
    """Qwen3.6 35B-A3B Q4_K_M in the article's numbers (until the preset is used)."""
    return StandinModel(name="standin-qwen3.6", params=35_505_251_456, active_params=3e9,
                        size_bytes=21_718_480_960, bytes_read_per_token=1.84e9, layers=40, kv_layers=10,
                        head_count=16, head_count_kv=2, head_dim=256, context_length=262_144,
                        expert_count=256, expert_used_count=8)


def laptop_standin():
    # carries the laptop preset's calibration, so it is timed on the laptop's measurements
    from tokenwalk.specs.machine import load_machine

    preset = load_machine("laptop-860m")
    return StandinMachine(name="laptop-860m", bandwidth_gbs=128.0, fp16_tflops=2.3, memory_gb=64.0, disk_gbs=7.0,
                          calibration=preset.calibration, spec_file=preset.spec_file)


def seven_b():
    return StandinModel()


def h100():
    return StandinMachine()
