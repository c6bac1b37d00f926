"""The data store (`tokenwalk.data_refs.DataStore`): a data folder and what has been read and
derived from it, passed to what reads data files. A new store reads afresh; a store that
has read a file keeps it; the default store serves callers that pass none."""

import json
import shutil

import pytest

from tests.support.hardware_specs import qwen
from tokenwalk import data_refs
from tokenwalk.data_refs import DataStore
from tokenwalk.errors import TokenwalkError
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model
from tokenwalk.timing import model as timing_model
from tokenwalk.timing import stages as timing
from tokenwalk.timing.llama_bench import load_runs
from tokenwalk.walk import Request, walk_request


@pytest.fixture
def folder(tmp_path):
    """A copy of tokenwalk/data/ to edit."""
    root = tmp_path / "data"
    shutil.copytree(data_refs.DEFAULT_ROOT, root)
    return root


def _edit(path, change):
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_store_reads_a_file_once_and_a_new_store_reads_it_again(folder):
    store = DataStore(folder)
    assert load_machine("h100-sxm", store).bandwidth_gbs == 3350
    _edit(folder / "machines" / "h100-sxm.json", lambda d: d.update(bandwidth_gbs=4000))
    assert load_machine("h100-sxm", store).bandwidth_gbs == 3350  # the file as the store read it
    assert load_machine("h100-sxm", DataStore(folder)).bandwidth_gbs == 4000
    assert load_machine("h100-sxm").bandwidth_gbs == 3350  # the default store: tokenwalk/data/


def test_a_walk_reads_its_data_from_the_store_it_is_given(folder):
    """Template 0.25 s in the store's timing_load.json: the walk given that store has it; the
    walk without one reads tokenwalk/data/ (0 s)."""
    _edit(folder / "timing_load.json", lambda d: d["cpu_stages"]["template_s"].update(value=0.25))
    store = DataStore(folder)
    request = Request(2_900, 100)
    model, machine = load_model("qwen3.6-35b-a3b", store), load_machine("laptop-860m", store)
    assert walk_request(model, machine, request, store).stage("template").seconds == 0.25
    assert walk_request(model, machine, request).stage("template").seconds == 0.0


def test_a_calibration_is_solved_from_the_stores_measurements(folder):
    """The laptop's prefill measured at 120 tok/s instead of 93 in one store: that store's solve
    gives a higher compute efficiency, and the default store's is untouched."""
    _edit(folder / "measurements" / "laptop.json", lambda d: d["values"]["prefill_tok_s_moe"].update(value=120))
    laptop = load_machine("laptop-860m")
    before = timing_model.coefficients(laptop)
    edited = timing_model.coefficients(laptop, store=DataStore(folder))
    assert edited.compute_efficiency > before.compute_efficiency
    assert edited.bandwidth_efficiency == before.bandwidth_efficiency
    assert timing_model.coefficients(laptop) == before


def test_derived_values_are_kept_by_the_store_that_derived_them(folder):
    store = DataStore(folder)
    laptop = load_machine("laptop-860m", store)
    timed = timing.timed_machine(qwen(), laptop, store=store)
    # the solve, the load calibration, the ladder's disk: derived once, kept by the store
    assert timing.timed_machine(qwen(), laptop, store=store) == timed
    kinds = {key[0] for key in store._derived}
    assert {"calibration", "load calibration", "disk rung GB/s"} <= kinds
    assert load_runs(store=store) == load_runs(store=store) and "llama-bench runs" in {key[0] for key in store._derived}
    store.forget()
    assert not store._derived


def test_use_store_makes_a_store_the_default_inside_the_block(folder):
    _edit(folder / "machines" / "h100-sxm.json", lambda d: d.update(bandwidth_gbs=4000))
    store = DataStore(folder)
    with data_refs.use_store(store):
        assert data_refs.default_store() is store
        assert load_machine("h100-sxm").bandwidth_gbs == 4000
    assert data_refs.default_store() is not store
    assert load_machine("h100-sxm").bandwidth_gbs == 3350


def test_errors_name_the_stores_file(tmp_path):
    store = DataStore(tmp_path)
    with pytest.raises(TokenwalkError, match=f"^{tmp_path}/timing_load.json: no such data file$"):
        timing.timing_data(store)
    with pytest.raises(TokenwalkError, match=r"^tokenwalk/data/nothing.json: no such data file$"):
        DataStore().read_json("nothing.json")
    with pytest.raises(TokenwalkError, match=r"not a path inside the data folder"):
        store.read_json("../machines/h100-sxm.json")
