"""Values written from memory: every data entry whose text says a value was recalled carries
the machine-readable flag (`recalled`, a list of its own field names), every flag names a
field the entry has, and the walk (CLI and simulator) names the recalled values it uses."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tests.support.data_substitute import substitute_data_file
from tokenwalk.errors import SpecError
from tokenwalk.specs.machine import load_machine, machine_from_dict
from tokenwalk.specs.model import load_model
from tokenwalk.specs.recalled import check_recalled, recalled_note, walk_notes
from tokenwalk.walk import Request, walk_request

DATA = Path(__file__).resolve().parents[2] / "tokenwalk" / "data"
# Words a source text uses for a value nobody opened a page for.
RECALL_WORDS = re.compile(r"recalled|from memory|remembered|not opened", re.IGNORECASE)
REQUEST = Request(prompt_tokens=512, output_tokens=16)


def _entries(path: Path) -> list[tuple[str, dict]]:
    """The data entries of one file: each object of a list file (machines.json, the runs),
    else the file's object itself (a preset, a measurement file)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    label = str(path.relative_to(DATA))
    if isinstance(data, list):
        return [(f"{label}[{i}]", entry) for i, entry in enumerate(data) if isinstance(entry, dict)]
    # files that key their entries by name: llama-bench's models.json, families.json and cpu_cores.json
    for key in ("models", "families", "cores"):
        if isinstance(data, dict) and isinstance(data.get(key), dict):
            rest = {k: v for k, v in data.items() if k != key}
            return [(label, rest)] + [(f"{label}: {key}.{name}", entry) for name, entry in data[key].items()
                                      if isinstance(entry, dict)]
    # prefill_shape.json: each pair's models carry specs of their own, each with its flags
    if isinstance(data, dict) and isinstance(data.get("pairs"), dict):
        specs = [(f"{label}: pairs.{name}.{side}.spec", pair[side]["spec"]) for name, pair in data["pairs"].items()
                 for side in ("dense", "moe") if isinstance(pair.get(side, {}).get("spec"), dict)]
        rest = json.loads(json.dumps(data))
        for pair in rest["pairs"].values():
            for side in ("dense", "moe"):
                pair.get(side, {}).pop("spec", None)
        return [(label, rest)] + specs
    return [(label, data)] if isinstance(data, dict) else []


def _texts(value):
    """Every string inside `value`, however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def problems(label: str, entry: dict) -> list[str]:
    """What is wrong with one entry: a text that says 'recalled' without the flag, or a flag
    that names no field of the entry."""
    out = []
    flagged = entry.get("recalled")
    said = [t for k, v in entry.items() if k != "recalled" for t in _texts(v) if RECALL_WORDS.search(t)]
    if said and not flagged:
        out.append(f"{label}: says {RECALL_WORDS.search(said[0]).group(0)!r} but has no 'recalled' list")
    try:
        check_recalled(entry, label)
    except SpecError as error:
        out.append(str(error))
    return out


def test_the_checker_catches_an_unflagged_mention_and_a_flag_on_no_field():
    assert problems("x", {"bandwidth_gbs": 5, "source": "vendor spec (recalled)"}) == [
        "x: says 'recalled' but has no 'recalled' list"]
    assert problems("x", {"bandwidth_gbs": 5, "source": "written from memory", "recalled": ["bandwidth_gbs"]}) == []
    assert problems("x", {"bandwidth_gbs": 5, "recalled": ["fp16_tflops"]}) == [
        "x: field 'recalled' names 'fp16_tflops', which is not a field of this entry"]
    assert problems("x", {"recalled": "bandwidth_gbs"}) == [
        "x: field 'recalled' must be a list of field names, not 'bandwidth_gbs'"]
    assert problems("x", {"source": "a spec table (opened)"}) == []


def test_every_recalled_value_in_the_data_is_flagged_and_every_flag_names_a_field():
    files = sorted(DATA.rglob("*.json"))
    assert len(files) > 10
    found = [p for path in files for label, entry in _entries(path) for p in problems(label, entry)]
    assert found == []


def test_the_flags_in_the_data_are_where_the_sourcing_left_them():
    """The recalled values that are left: the RTX 4070 SUPER's bandwidth (its page was the
    RTX 4070's; its GDDR6X is quoted from board partners' card names), the memory types no
    page confirmed; the runs of the 4070 SUPER carry their bandwidth's flag, every other run none."""
    machines = json.loads((DATA / "llama-bench" / "machines.json").read_text(encoding="utf-8"))
    flags = {m["name"]: m.get("recalled", []) for m in machines}
    assert flags["NVIDIA RTX 4070 SUPER"] == ["bandwidth_gbs"]
    assert flags["AMD Radeon RX 7900 GRE"] == [] and flags["NVIDIA RTX 5070 Ti"] == []
    # the small models' machines add recalled families, bandwidths (a bus width, a channel count)
    # and two boards' unified memory; two CPUs' clocks (a turbo, another board's) are recalled
    assert {field for f in flags.values() for field in f} == {"bandwidth_gbs", "memory_type", "family", "unified_memory",
                                                              "cpu_cores"}
    assert {name for name, f in flags.items() if "cpu_cores" in f} == {
        "Intel Xeon Platinum 8358 (CPU, 128 logical cores)",
        "Cix CP8180 (CPU, MetaComputing AI PC Framework 13 mainboard)"}
    # memory types sourced on 2026-12-07 (a page opened for each, quoted in memory_source)
    assert flags["Apple M1 (7-core GPU)"] == flags["AMD Radeon RX 7800 XT"] == flags["NVIDIA L40S"] == []
    # and on 2026-12-08: five more memory types, two CPUs' families
    assert flags["NVIDIA RTX 4090"] == flags["NVIDIA Tesla T4"] == []
    assert flags["Intel Core i5-4278U (CPU, MacBook Pro 2014)"] == ["bandwidth_gbs"]
    assert sum("memory_type" in f for f in flags.values()) == 53
    designs = json.loads((DATA / "llama-bench" / "cpu_cores.json").read_text(encoding="utf-8"))["cores"]
    assert {name for name, d in designs.items() if d.get("recalled")} == {
        "Zen 5 (512-bit)", "Raptor Cove", "Sunny Cove (server)", "Apple M4 P-core", "Cortex-X1", "Cortex-A55",
        "Cortex-A720", "Cortex-A520", "Skymont"}
    assert {name for name, f in flags.items() if "bandwidth_gbs" in f} == {
        "NVIDIA RTX 4070 SUPER", "Intel Core Ultra 7 268V (Arc 140V iGPU)", "Intel Core i5-4278U (CPU, MacBook Pro 2014)"}
    runs = json.loads((DATA / "llama-bench" / "benchmarks.json").read_text(encoding="utf-8"))
    flagged_runs = {r["machine"] for r in runs if r.get("recalled")}
    assert flagged_runs == {"NVIDIA RTX 4070 SUPER"}
    assert all(r["recalled"] == ["bandwidth_gbs"] for r in runs if r.get("recalled"))


def test_a_recalled_list_naming_no_field_is_one_line_naming_the_file():
    with pytest.raises(SpecError, match=r"^my\.json: field 'recalled' names 'clock_ghz', which is not a field"):
        machine_from_dict({"name": "m", "bandwidth_gbs": 100, "fp16_tflops": 10, "memory_gb": 8,
                           "recalled": ["clock_ghz"]}, "my.json")
    spec = machine_from_dict({"name": "m", "bandwidth_gbs": 100, "fp16_tflops": 10, "memory_gb": 8,
                              "recalled": ["bandwidth_gbs"]}, "my.json")
    assert spec.recalled == ("bandwidth_gbs",)


def _flag(fields):
    def change(data):
        data["recalled"] = list(fields)
        return data
    return change


def test_a_walk_on_a_flagged_machine_names_the_recalled_value(monkeypatch):
    """A stand-in of the rtx-5080 preset whose bandwidth is flagged: the walk's note names it
    with its value; a flagged field the walk does not read (compute units) gets none."""
    model = load_model("smollm2-135m")
    sourced = walk_request(model, load_machine("rtx-5080"), REQUEST)
    assert sourced.notes == () and sourced.to_dict()["notes"] == []
    substitute_data_file(monkeypatch, "machines/rtx-5080.json", _flag(["bandwidth_gbs", "compute_units"]))
    flagged = walk_request(load_model("smollm2-135m"), load_machine("rtx-5080"), REQUEST)
    assert flagged.notes == ("machine: bandwidth 960 GB/s: recalled, no source opened",)
    # the note changes nothing else
    assert flagged.decode_tok_s == sourced.decode_tok_s and flagged.warnings == sourced.warnings


def test_a_walk_on_a_flagged_model_names_the_recalled_value(monkeypatch):
    substitute_data_file(monkeypatch, "models/smollm2-135m.json", _flag(["head_count_kv"]))
    model = load_model("smollm2-135m")
    walk = walk_request(model, load_machine("rtx-5080"), REQUEST)
    assert walk.notes == (f"model: head count kv {model.head_count_kv}: recalled, no source opened",)


def test_the_presets_flagged_today_are_noted():
    """m4-max's FP16 estimate (its clock recalled) and Qwen3.6's reconstructed tensor table."""
    walk = walk_request(load_model("qwen3.6-35b-a3b"), load_machine("m4-max"), REQUEST)
    assert walk.notes == ("model: tensor table: recalled, no source opened",
                          "machine: FP16 peak 16.2\u00a0TFLOP/s: recalled, no source opened")


def test_note_wording_per_field():
    assert recalled_note("fp16_tflops", 92.0) == "FP16 peak 92\u00a0TFLOP/s: recalled, no source opened"
    assert recalled_note("memory_type", "GDDR6X") == "memory type GDDR6X: recalled, no source opened"
    assert recalled_note("bandwidth_gbs", 3350) == "bandwidth 3.35 TB/s: recalled, no source opened"
    assert walk_notes({}, {"lanes_per_cu": 128, "memory_gb": 128}) == (
        "machine: memory 128\u00a0GB: recalled, no source opened",)


def test_the_cli_table_and_json_carry_the_note(tmp_path, capsys):
    from tokenwalk.cli import main

    machine = {"name": "box", "bandwidth_gbs": 576, "fp16_tflops": 92.0, "memory_gb": 16, "backend": "ROCm",
               "recalled": ["bandwidth_gbs"]}
    path = tmp_path / "box.json"
    path.write_text(json.dumps(machine), encoding="utf-8")
    argv = ["walk", "--model", "smollm2-135m", "--machine", str(path), "--prompt-tokens", "100", "--output-tokens", "10"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "note            machine: bandwidth 576 GB/s: recalled, no source opened" in out.splitlines()
    assert main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == ["machine: bandwidth 576 GB/s: recalled, no source opened"]


def test_the_simulator_panel_shows_the_note_for_a_flagged_preset_only():
    from tokenwalk_app.entry import simulate_view

    form = {"model": "smollm2-135m", "prompt_tokens": "512", "output_tokens": "16"}
    flagged = simulate_view(dict(form, machine="m4-max"))["html"]
    notes = re.findall(r'<p class="tw-note">(.*?)</p>', flagged)
    assert notes == [html.escape("machine: FP16 peak 16.2\u00a0TFLOP/s: recalled, no source opened")]
    assert "tw-note" not in simulate_view(dict(form, machine="rtx-5080"))["html"]
