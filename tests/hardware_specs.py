"""The models and machines the hardware tests use (stand-ins until the presets land)."""

from hardware_standins import h100, laptop_standin as laptop, qwen_standin as qwen, seven_b  # noqa: F401
