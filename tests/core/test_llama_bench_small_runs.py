"""benchmarks-small.json: the published runs of small models load through the same code
path as the fitted runs (`llama_bench.load_runs`), with their machine and model found in
machines.json and models.json; a malformed run fails in one line naming the file and the run."""

import json
import shutil

import pytest

from tokenwalk.errors import SpecError
from tokenwalk.timing import llama_bench

SMALL = "benchmarks-small.json"


def _rows():
    return json.loads((llama_bench.DATA_DIR / SMALL).read_text(encoding="utf-8"))


def _machine_names():
    return {entry["name"] for entry in json.loads((llama_bench.DATA_DIR / "machines.json").read_text(encoding="utf-8"))}


def test_every_small_run_loads_with_its_machine_and_model():
    rows = _rows()
    runs = llama_bench.load_runs(runs_file=SMALL)
    assert len(runs) == len(rows) >= 20
    machines = _machine_names()
    for run in runs:
        where = f"{SMALL}: run {run.index} ({run.label})"
        assert run.machine.name in machines, f"{where}: machine not in machines.json"
        assert run.machine.family and run.machine.architecture_year, f"{where}: no family year in families.json"
        assert run.tok_s > 0 and run.model.size_bytes > 0 and run.model.layers > 0, where
        # the file is of small models: 0.1B to 8B parameters
        assert 1e8 <= run.model.params <= 8.1e9, where
        assert run.test in ("pp512", "tg128"), where
        assert "https://github.com/" in run.source, f"{where}: the source names no address"
    assert {run.phase for run in runs} == {"decode", "prefill"}
    assert {"CPU", "Vulkan", "Metal"} <= {run.backend for run in runs}


def test_the_small_runs_stay_out_of_the_fitted_runs():
    small_sources = {run.source for run in llama_bench.load_runs(runs_file=SMALL)}
    fitted = llama_bench.load_runs()
    assert fitted and not small_sources & {run.source for run in fitted}


def test_a_decode_run_reads_a_plausible_share_of_its_bandwidth():
    """tok/s x bytes a token reads / spec bandwidth: a transcription slip of 10x lands outside."""
    shares = [run.bandwidth_share for run in llama_bench.load_runs(runs_file=SMALL) if run.bandwidth_share]
    assert len(shares) >= 5
    assert all(0.05 < share < 1.0 for share in shares), shares


def _copy_folder(tmp_path):
    folder = tmp_path / "llama-bench"
    shutil.copytree(llama_bench.DATA_DIR, folder)
    return folder


@pytest.mark.parametrize("key, value, message", [
    ("tok_s", -1.0, "benchmarks-small.json: run 2 'tok_s' must be a positive number, got -1.0"),
    ("size_bytes", "1.87 GiB", "benchmarks-small.json: run 2 'size_bytes' must be a positive number, got '1.87 GiB'"),
    ("model", "Llama 9 1B", "models.json: no entry for model 'Llama 9 1B' (run 2 of benchmarks-small.json)"),
    ("source", "", "benchmarks-small.json: run 2 has no 'source'"),
])
def test_a_malformed_small_run_is_refused_in_one_line(tmp_path, key, value, message):
    folder = _copy_folder(tmp_path)
    rows = _rows()
    rows[2][key] = value
    (folder / SMALL).write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        llama_bench.load_runs(folder, runs_file=SMALL)
    assert str(caught.value) == message


def test_a_missing_runs_file_is_named(tmp_path):
    folder = _copy_folder(tmp_path)
    (folder / SMALL).unlink()
    with pytest.raises(SpecError, match=r"benchmarks-small\.json: file not found in llama-bench/"):
        llama_bench.load_runs(folder, runs_file=SMALL)


def test_a_prompt_run_reaches_a_plausible_share_of_its_compute_figure():
    """tok/s x operations a prompt token does / the compute figure (chapter 7's software spread
    on one chip, fit_stack_example_*): a slip of 10x in tok/s or in the figure lands outside;
    a decode run has no such share."""
    runs = llama_bench.load_runs(runs_file=SMALL)
    shares = [run.compute_share for run in runs if run.compute_share]
    assert len(shares) >= 10
    assert all(0.01 < share < 1.5 for share in shares), shares
    assert all(run.compute_share is None for run in runs if run.phase == "decode")


def test_the_compute_share_counts_the_operations_a_prompt_step_does():
    """Llama 2 7B on the Radeon 8060S under ROCm, 322.63 t/s at pp512: 2 x 6.74e9 operations a
    token, less the embedding lookup (32,000 x 4,096 weights) and the output head for all but
    the prompt's last token, at 59.4 TFLOP/s: 7.0 %."""
    (run,) = [r for r in llama_bench.load_runs() if r.tok_s == 322.63 and "8060S" in r.machine.name]
    table = 32000 * 4096
    ops = 2 * (6.74e9 - table - table * 511 / 512)
    assert run.compute_share == pytest.approx(322.63 * ops / 59.4e12, rel=1e-3)
    assert round(run.compute_share, 3) == 0.070


def test_the_board_example_reads_an_eighth_of_its_bandwidth():
    """Chapter 7's memory path (fit_board_example_*): TinyLlama 1.1B Chat on the Jetson Nano's
    four cores, 4.98 t/s at tg128; a token reads the 636.18 MiB file less its 32,000 x 2,048
    embedding table, at the file's average bytes per weight, of 25.6 GB/s: 12.2 %."""
    (run,) = [r for r in llama_bench.load_runs(runs_file=SMALL)
              if "Jetson Nano" in r.machine.name and r.phase == "decode"]
    size = 636.18 * 2**20
    read = size - 32000 * 2048 * size / 1.10e9
    assert run.bandwidth_share == pytest.approx(4.98 * read / 25.6e9, rel=1e-3)
    assert round(run.bandwidth_share, 3) == 0.122
