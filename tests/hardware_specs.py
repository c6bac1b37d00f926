"""The models and machines the hardware tests use: the project's presets.

Stand-ins (tests/hardware_standins.py) remain for tests that vary a field.
"""

from hardware_standins import h100, laptop_standin as laptop  # noqa: F401  (machines until their presets land)
from tokenwalk.model_spec import load_model


def seven_b():
    """The dense 7B in fp16 of the H100 examples."""
    return load_model("dense-7b-fp16")


def qwen():
    """Qwen3.6 35B-A3B Q4_K_M, the article's model."""
    return load_model("qwen3.6-35b-a3b")
