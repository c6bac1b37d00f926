"""Machine specs and the memory ladder: presets with sources, JSON with a missing field."""

from __future__ import annotations

import json

import pytest

from tokenwalk.errors import SpecError
from tokenwalk.specs.machine import (
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    VENDORS,
    list_machine_presets,
    load_machine,
    memory_ladder,
)
from tokenwalk.specs.schema import read_preset

PRESETS = ["h100-sxm", "laptop-860m", "m4-max", "rtx-5080", "rtx-5090"]


def test_the_agreed_presets_exist():
    assert list_machine_presets() == PRESETS


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_value_has_a_source(name):
    data, _ = read_preset("machines", name)
    values = [k for k in data if k in REQUIRED_FIELDS or k in OPTIONAL_FIELDS]
    # `recalled` names fields, it is no value of its own
    assert [k for k in values if k not in ("sources", "recalled") and not data["sources"].get(k)] == []


def test_laptop_numbers_of_the_article():
    """LPDDR5X-8000 on 128 bits: 8,000e6 transfers x 16 bytes = 128 GB/s; 64 GB; 8 CUs of 64 lanes."""
    laptop = load_machine("laptop-860m")
    assert laptop.bandwidth_gbs == 8000e6 * 128 / 8 / 1e9 == 128
    assert (laptop.memory_gb, laptop.compute_units, laptop.lanes_per_cu) == (64, 8, 64)
    # the peak fp16 rate is the lanes' arithmetic at the boost clock, counted as AMD counts RDNA3 and
    # as the fit's RDNA3 machines are (see its source): 2 per fused multiply-add x 2 packed x 2 dual issue
    assert laptop.fp16_tflops == pytest.approx(laptop.compute_units * laptop.lanes_per_cu * 2 * 2 * 2
                                               * laptop.clock_ghz / 1e3)


def test_h100_numbers_of_the_article():
    """FIGURES.md #11: 80 GB at 3.35 TB/s, ~990 dense TFLOP/s, 132 SMs, 50 MB L2, 228 KB per SM;
    H100 vs laptop bandwidth about 26 times."""
    h100 = load_machine("h100-sxm")
    assert (h100.bandwidth_gbs, h100.memory_gb, h100.compute_units) == (3350, 80, 132)
    assert round(h100.fp16_tflops, -1) == 990
    assert h100.l2_cache_bytes == 50 * 2**20 and h100.shared_memory_per_cu_bytes == 228 * 2**10
    assert round(h100.bandwidth_gbs / load_machine("laptop-860m").bandwidth_gbs) == 26


def test_desktop_and_apple_bandwidths_of_the_article():
    assert (load_machine("rtx-5090").bandwidth_gbs, load_machine("rtx-5090").memory_gb) == (1792, 32)
    assert (load_machine("rtx-5080").bandwidth_gbs, load_machine("rtx-5080").memory_gb) == (960, 16)
    assert load_machine("m4-max").bandwidth_gbs == 546


def test_memory_ladder_rungs():
    """FIGURES.md #11: NVMe 7 GB/s, PCIe 5.0 64 GB/s, HBM3 80 GB at 3.35 TB/s, L2 50 MB, 228 KB x 132."""
    rungs = {r.role: r for r in memory_ladder()}
    assert [r.role for r in memory_ladder()] == ["disk", "host", "vram", "l2", "sm"]
    assert rungs["disk"].bandwidth_gbs == 7 and "nvme" in rungs["disk"].name.lower()
    assert rungs["host"].bandwidth_gbs == 64 and "PCIe 5.0" in rungs["host"].name
    assert (rungs["vram"].bandwidth_gbs, rungs["vram"].capacity_bytes) == (3350, 80e9)
    assert rungs["l2"].capacity_bytes == load_machine("h100-sxm").l2_cache_bytes
    assert (rungs["sm"].capacity_bytes, rungs["sm"].count) == (228 * 1024, 132)
    assert all(r.source for r in rungs.values())


# Who made each preset's chip: what its title says (the laptop's is AMD's Radeon 860M in a ThinkPad).
PRESET_VENDORS = {"h100-sxm": "NVIDIA", "laptop-860m": "AMD", "m4-max": "Apple", "rtx-5080": "NVIDIA",
                  "rtx-5090": "NVIDIA"}
CHIP_WORDS = {"NVIDIA": "NVIDIA", "AMD": "Radeon", "Apple": "Apple", "Intel": "Intel"}


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_names_its_chips_maker(name):
    """Each preset says who made its chip (`vendor`, with a source naming the maker), the maker
    its title names: the fit's rows per backend and maker ("Vulkan/Intel") need it."""
    machine = load_machine(name)
    assert machine.vendor == PRESET_VENDORS[name] and machine.vendor in VENDORS
    assert CHIP_WORDS[machine.vendor] in machine.title
    assert machine.vendor in machine.sources["vendor"]


MINIMAL = {"name": "mine", "bandwidth_gbs": 100, "fp16_tflops": 20, "memory_gb": 24}


def test_json_machine(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**MINIMAL, "backend": "vulkan", "compute_units": 32}))
    m = load_machine(path)
    assert (m.name, m.bandwidth_gbs, m.backend, m.compute_units) == ("mine", 100, "vulkan", 32)


def test_json_machine_vendor(tmp_path):
    """`vendor` is one of VENDORS, spelled as listed; anything else is one line naming the file and field."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**MINIMAL, "vendor": "Intel"}))
    assert load_machine(path).vendor == "Intel"
    path.write_text(json.dumps(MINIMAL))
    assert load_machine(path).vendor is None
    for bad in ("Lenovo", "nvidia"):
        path.write_text(json.dumps({**MINIMAL, "vendor": bad}))
        with pytest.raises(SpecError) as info:
            load_machine(path)
        assert str(info.value) == f"{path}: field 'vendor' must be one of AMD, Apple, Intel, NVIDIA, not {bad!r}"
    path.write_text(json.dumps({**MINIMAL, "vendor": 3}))
    with pytest.raises(SpecError, match=f"^{path}: field 'vendor'"):
        load_machine(path)


@pytest.mark.parametrize("field", list(REQUIRED_FIELDS))
def test_json_missing_field(tmp_path, field):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({k: v for k, v in MINIMAL.items() if k != field}))
    with pytest.raises(SpecError) as info:
        load_machine(path)
    assert str(info.value).startswith(f"{path}: missing field '{field}'")


def test_unknown_machine():
    with pytest.raises(SpecError, match="not a machine preset .*laptop-860m"):
        load_machine("laptop")


def test_figure_11_ladder_follows_the_h100_preset(monkeypatch):
    """Figure 11: the HBM, L2 and shared-memory rungs are the h100-sxm preset's numbers,
    so editing the preset moves the ladder too (one place for each fact)."""
    from tests.support.data_substitute import substitute_data_file
    from tokenwalk.specs import machine as machine_spec

    substitute_data_file(monkeypatch, "machines/h100-sxm.json",
                         lambda data: dict(data, bandwidth_gbs=4000.0, compute_units=100))
    rungs = {r.role: r for r in machine_spec.memory_ladder()}
    assert rungs["vram"].bandwidth_gbs == 4000.0
    assert rungs["sm"].count == 100 and rungs["sm"].capacity_label == "228 KB x 100 SMs"
