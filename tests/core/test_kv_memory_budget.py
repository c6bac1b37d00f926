"""The memory budget (figure 22) as a module: parts, free, fits, the measured system share."""

import pytest

from tests.support.hardware_specs import h100, laptop, qwen, seven_b
from tests.support.hardware_standins import StandinMachine
from tokenwalk.data_refs import resolve
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.memory_budget import memory_budget, system_bytes


def test_laptop_system_share_is_the_measurement():
    assert system_bytes(laptop()) == resolve({"from": "measurements/laptop.json", "key": "system_and_apps_bytes"})
    assert system_bytes(h100()) == 0  # a server card's memory holds only the model


def test_fig22_parts_add_up_to_64_gb():
    budget = memory_budget(qwen(), laptop(), 16_384)
    parts = dict(budget.parts())
    assert list(parts) == ["system", "weights", "kv_cache", "free"]
    assert sum(parts.values()) == pytest.approx(64e9)
    assert budget.fits
    assert budget.free_bytes / 1e9 == pytest.approx(9.8, abs=0.15)


def test_fig22_ollamas_default_context_leaves_about_5_gb():
    budget = memory_budget(qwen(), laptop(), 262_144)
    assert round(budget.kv_cache_bytes / 1e9, 1) == 5.4
    assert budget.free_bytes / 1e9 == pytest.approx(4.8, abs=0.15)


def test_q8_0_cache_frees_memory():
    assert memory_budget(qwen(), laptop(), 262_144, "q8_0").free_bytes > memory_budget(qwen(), laptop(), 262_144).free_bytes


def test_a_model_larger_than_memory_does_not_fit():
    budget = memory_budget(seven_b(), StandinMachine(memory_gb=8), 4096)
    assert not budget.fits and budget.free_bytes < 0
    assert dict(budget.parts())["free"] == 0


def test_system_override_and_unknown_machine():
    assert memory_budget(seven_b(), h100(), 1000, system=10e9).system_bytes == 10e9
    assert system_bytes(StandinMachine(name="../laptop-860m")) == 0


def test_bad_kv_type_is_an_error():
    with pytest.raises(TokenwalkError, match="kv_type"):
        memory_budget(qwen(), laptop(), 1000, "q9")
