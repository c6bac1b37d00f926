"""The published runs on CPUs (backend "CPU"): every machine has the cores its compute figure is
made of, each core design its operations per cycle with a source, and the figures the runs
get are the reviewed ones of tests/golden/cpu_compute.json (the timing model's prefill of a
CPU and the compute-bound decode of a small one read them; README, "How far to trust a
prediction"). A CPU whose prompt products ran elsewhere than its vector units, and a
two-socket server, are left out of the check with their reasons."""

import json

from tests.support.golden import reviewed
from tokenwalk.timing import llama_bench

DATA = llama_bench.DATA_DIR


def _json(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _cpu_runs():
    return [run for run in llama_bench.every_published_run() if run.backend == "CPU"]


def test_every_cpu_machine_lists_its_cores_with_a_source():
    machines = {entry["name"]: entry for entry in _json("machines.json")}
    designs = _json(llama_bench.CPU_CORES_FILE)["cores"]
    names = {run.machine.name for run in _cpu_runs()}
    assert len(names) >= 8
    for name in names:
        entry = machines[name]
        assert entry.get("cpu_cores") and entry.get("cpu_cores_source"), name
        assert {group["core"] for group in entry["cpu_cores"]} <= set(designs), name
    for core, design in designs.items():
        assert design["fp32_flops_per_cycle"] in (8, 16, 32, 64), core
        assert design["source"] and design["basis"], core
        # a design whose width no opened page states says so
        if design["source"].startswith("recalled"):
            assert design.get("recalled") == ["fp32_flops_per_cycle"], core


def test_every_cpu_run_has_the_reviewed_compute_figure():
    """Cores x clock x operations a cycle, over the cores the run's threads occupy: the
    Haswell laptop's two cores at 3.1 GHz give 0.198 TFLOP/s."""
    got = {f"{run.machine.name} | threads {run.raw.get('threads', 'all')}": round(run.machine.fp16_tflops, 4)
           for run in _cpu_runs()}
    assert got == reviewed("cpu_compute.json", got, indent=1, sort_keys=True)
    assert got["Intel Core i5-4278U (CPU, MacBook Pro 2014) | threads 2"] == 0.1984


def test_a_prompt_run_handed_to_blas_is_left_out_with_its_reason():
    """llama.cpp's BLAS backend takes a prompt step's products (every size 32 or more), so a
    CPU prompt run whose row prints a BLAS backend did not run on the vector units the figure
    counts: the M4's ran at 2 x params x tok/s = 1.16 TFLOP/s, twice its cores' FP32 peak.
    Every other CPU prompt run is checked, but for the two-socket servers."""
    checked = 0
    for run in _cpu_runs():
        if run.phase != "prefill":
            continue
        if "BLAS" in run.source:
            assert run.out_of_domain and "BLAS backend" in run.out_of_domain, run.label
            assert 2 * run.model.params * run.tok_s / 1e12 > 2 * run.machine.fp16_tflops, run.label
        elif run.out_of_domain:
            assert run.out_of_domain.startswith("two sockets"), run.label
        else:
            checked += 1
    assert checked >= 8
