"""The models and machines the hardware tests use: the project's presets.

Stand-ins (tests/support/hardware_standins.py) remain for tests that need a field changed.
"""

from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model


def seven_b():
    """The dense 7B in fp16 of the H100 examples."""
    return load_model("dense-7b-fp16")


def qwen():
    """Qwen3.6 35B-A3B Q4_K_M, the article's model."""
    return load_model("qwen3.6-35b-a3b")


def h100():
    """One H100 SXM, the server of the hardware part."""
    return load_machine("h100-sxm")


def laptop():
    """The author's laptop: Radeon 860M sharing 64 GB at 128 GB/s."""
    return load_machine("laptop-860m")
