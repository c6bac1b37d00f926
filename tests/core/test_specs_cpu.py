"""A CPU's compute figure (`tokenwalk.specs.cpu`): the FP32 vector peak of the cores a run's
threads occupy, the fastest first; and the published runs on CPUs get it from machines.json's
`cpu_cores` and cpu_cores.json's designs (`llama_bench.load_runs`). Stand-in cores here; the
data's own figures are checked against their sources in tests/core/test_llama_bench_cpu.py."""

import json
import shutil

import pytest

from tokenwalk.errors import SpecError
from tokenwalk.specs import cpu
from tokenwalk.timing import llama_bench

BIG = cpu.CoreGroup("big", 2, 3.0, 32)  # 96 GFLOP/s a core
LITTLE = cpu.CoreGroup("little", 4, 2.0, 8)  # 16 GFLOP/s a core


def test_the_peak_is_cores_times_clock_times_operations_per_cycle():
    assert cpu.vector_peak_tflops([cpu.CoreGroup("Haswell", 2, 3.1, 32)]) == pytest.approx(0.1984)


def test_threads_fill_the_fastest_cores_first():
    groups = [LITTLE, BIG]
    assert cpu.vector_peak_tflops(groups, 1) == pytest.approx(0.096)
    assert cpu.vector_peak_tflops(groups, 3) == pytest.approx(0.192 + 0.016)
    assert cpu.vector_peak_tflops(groups) == pytest.approx(0.192 + 0.064)


def test_more_threads_than_cores_add_nothing():
    """A second thread on a core shares its vector units."""
    assert cpu.vector_peak_tflops([BIG, LITTLE], 12) == cpu.vector_peak_tflops([BIG, LITTLE])


def test_no_thread_is_an_error():
    with pytest.raises(SpecError, match="threads must be at least 1"):
        cpu.vector_peak_tflops([BIG], 0)


def test_a_core_group_names_a_known_design_and_positive_numbers():
    designs = {"big": {"fp32_flops_per_cycle": 32}}
    assert cpu.core_groups([{"core": "big", "count": 2, "max_ghz": 3.0}], designs, "m") == [BIG]
    with pytest.raises(SpecError, match=r"^m: cpu_cores\[0\] names core 'tiny', which cpu_cores.json does not list$"):
        cpu.core_groups([{"core": "tiny", "count": 2, "max_ghz": 3.0}], designs, "m")
    with pytest.raises(SpecError, match=r"cpu_cores\[1\] \(big\) 'max_ghz' must be a positive number, got '3'"):
        cpu.core_groups([{"core": "big", "count": 1, "max_ghz": 3.0}, {"core": "big", "count": 1, "max_ghz": "3"}],
                        designs, "m")
    with pytest.raises(SpecError, match="'cpu_cores' must be a non-empty list"):
        cpu.core_groups([], designs, "m")


def _stand_in_folder(tmp_path, threads):
    """The data's folder with one CPU run on `threads` threads of a stand-in big/little chip."""
    folder = tmp_path / "llama-bench"
    shutil.copytree(llama_bench.DATA_DIR, folder)
    machines = json.loads((folder / "machines.json").read_text(encoding="utf-8"))
    machines.append({"name": "Stand-in SoC (CPU)", "bandwidth_gbs": 50.0, "fp16_tflops": None, "family": "Stand-in",
                     "device_class": "integrated", "memory_type": "LPDDR5",
                     "cpu_cores": [{"core": "little", "count": 4, "max_ghz": 2.0},
                                   {"core": "big", "count": 2, "max_ghz": 3.0}]})
    (folder / "machines.json").write_text(json.dumps(machines), encoding="utf-8")
    (folder / "cpu_cores.json").write_text(json.dumps({"cores": {"big": {"fp32_flops_per_cycle": 32},
                                                                 "little": {"fp32_flops_per_cycle": 8}}}),
                                           encoding="utf-8")
    run = dict(json.loads((folder / "benchmarks.json").read_text(encoding="utf-8"))[0],
               machine="Stand-in SoC (CPU)", backend="CPU", fp16_tflops=None, threads=threads)
    (folder / "benchmarks.json").write_text(json.dumps([run]), encoding="utf-8")
    return folder


@pytest.mark.parametrize("threads, tflops", [(2, 0.192), (4, 0.224), (None, 0.256)])
def test_a_cpu_run_gets_the_peak_of_its_threads(tmp_path, threads, tflops):
    (run,) = llama_bench.load_runs(_stand_in_folder(tmp_path, threads))
    assert run.machine.fp16_tflops == pytest.approx(tflops)


def test_a_run_with_a_bad_thread_count_fails_in_one_line(tmp_path):
    with pytest.raises(SpecError, match=r"^benchmarks.json: run 0 'threads' must be a positive whole number, got 0$"):
        llama_bench.load_runs(_stand_in_folder(tmp_path, 0))
