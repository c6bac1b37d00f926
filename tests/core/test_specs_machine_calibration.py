"""A machine's measured facts travel with its spec: the laptop preset carries its
memory budget and its timing calibration; a rename keeps them, a user's file named like the
preset does not pick them up. Also: the data folder can be substituted, and a GGUF file's
tensor table says whether its output head is the embedding (the prefill correction)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.gguf_files import write_hybrid_moe_file
from tokenwalk import data_refs
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.physics import roofline
from tokenwalk.physics.memory_budget import system_bytes
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model, model_from_gguf
from tokenwalk.timing import model as timing_model
from tokenwalk.timing.calibration import is_calibrated

PRESET = data_refs.DEFAULT_ROOT / "machines" / "laptop-860m.json"


def _write(tmp_path, name: str, change) -> str:
    data = json.loads(PRESET.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_the_laptop_preset_carries_its_budget_and_calibration():
    laptop = load_machine("laptop-860m")
    assert is_calibrated(laptop) and laptop.system_and_apps_bytes > 0
    assert system_bytes(laptop) == laptop.system_and_apps_bytes
    assert timing_model.coefficients(laptop).row == "laptop-860m"


def test_a_renamed_copy_keeps_what_was_measured(tmp_path):
    laptop = load_machine("laptop-860m")
    renamed = load_machine(_write(tmp_path, "my-laptop", lambda d: d.update(name="my-laptop")))
    assert renamed.system_and_apps_bytes == laptop.system_and_apps_bytes
    ours, theirs = timing_model.coefficients(renamed), timing_model.coefficients(laptop)
    assert (ours.bandwidth_efficiency, ours.launch_cost_s, ours.compute_efficiency) == (
        theirs.bandwidth_efficiency, theirs.launch_cost_s, theirs.compute_efficiency)


def test_a_user_file_named_like_the_preset_is_not_calibrated_by_it(tmp_path):
    def strip(data):
        data.pop("calibration")
        data.pop("system_and_apps_bytes")

    mine = load_machine(_write(tmp_path, "laptop-860m", strip))
    assert mine.name == "laptop-860m" and not is_calibrated(mine)
    assert system_bytes(mine) == 0.0
    assert timing_model.coefficients(mine).row != "laptop-860m"  # the fit's row of its backend


def test_the_data_folder_can_be_substituted(tmp_path):
    shutil.copytree(data_refs.DEFAULT_ROOT / "machines", tmp_path / "machines")
    shutil.copytree(data_refs.DEFAULT_ROOT / "measurements", tmp_path / "measurements")
    edited = json.loads(PRESET.read_text(encoding="utf-8"))
    edited["bandwidth_gbs"] = 256
    (tmp_path / "machines" / "laptop-860m.json").write_text(json.dumps(edited), encoding="utf-8")
    with data_refs.use_data_root(tmp_path):
        assert load_machine("laptop-860m").bandwidth_gbs == 256
        assert data_refs.data_label("machines/x.json").startswith(str(tmp_path))
    assert load_machine("laptop-860m").bandwidth_gbs == 128


def test_one_reader_one_error_style(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  oops\n}", encoding="utf-8")
    with pytest.raises(Exception, match=r"bad.json: line 2 column 3: not valid JSON"):
        load_machine(str(bad))
    with pytest.raises(Exception, match=r"tokenwalk/data/nothing/here.json: no such data file"):
        data_refs.read_data_json("nothing/here.json")


def test_tied_embeddings_come_from_the_tensor_table(tmp_path):
    """A file with its own output.weight is untied; SmolLM2 (no output.weight) is tied, so a
    prompt step skips the head for all but the last token (it was silently never skipped)."""
    hybrid = model_from_gguf(read_gguf_header(write_hybrid_moe_file(tmp_path / "h.gguf")))
    assert hybrid.tied_embeddings is False
    smol = load_model("smollm2-135m")
    assert smol.tied_embeddings is True
    assert roofline.prefill_skipped_flops(smol, 512) == 2 * 49152 * 576 * 511
    assert load_model("qwen3.6-35b-a3b").tied_embeddings is None  # not known: nothing skipped


def test_every_kind_of_model_and_machine_satisfies_the_protocols():
    from tests.support.hardware_standins import StandinMachine, StandinModel
    from tokenwalk.specs.protocols import Machine, Model
    from tokenwalk.timing.llama_bench import load_runs

    run = load_runs()[0]
    for model in (load_model("qwen3.6-35b-a3b"), run.model, StandinModel()):
        assert isinstance(model, Model), model
    for machine in (load_machine("laptop-860m"), run.machine, StandinMachine()):
        assert isinstance(machine, Machine), machine
