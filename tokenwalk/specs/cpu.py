"""A CPU's compute figure: the FP32 vector peak of the cores a llama.cpp run keeps busy.

A GPU's spec sheet prints an FP16 figure; a CPU's prints cores and clocks. The timing model
needs one compute peak per machine for its compute-bound side (prefill, and the decode of a
machine with few cores), so a CPU gets the peak its vector units can reach:

    sum over the cores used of  max clock (GHz) x FP32 operations per cycle (an FMA is 2)

The cores a run uses are its llama.cpp threads (one per core; `threads` None means every
core, llama-bench's default of one thread per physical core), the fastest cores first, as a
scheduler places them on a chip with big and little cores. The operations per cycle are a
property of the core's design (two 256-bit FMA units: 2 x 8 x 2 = 32), kept per design with
its source in `data/llama-bench/cpu_cores.json`.

Why FP32 and not the 8-bit dot products llama.cpp's CPU kernels run for quantized weights:
every core design publishes its FP32 width, and the fitted compute efficiency carries the
ratio between the two (about the same, 2 to 4 dot-product operations per FP32 one, on the
cores of the data); see the data README.

Standard library only: the simulator runs this in the browser. Units: GHz, TFLOP/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.errors import SpecError


@dataclass(frozen=True)
class CoreGroup:
    """Cores of one design at one clock in a CPU: `count` cores of `core` ("Cortex-A78"),
    each at most `max_ghz` GHz and `fp32_flops_per_cycle` FP32 operations per cycle."""

    core: str
    count: int
    max_ghz: float
    fp32_flops_per_cycle: float

    @property
    def core_gflops(self) -> float:
        """One core's FP32 vector peak, GFLOP/s."""
        return self.max_ghz * self.fp32_flops_per_cycle


def core_groups(entries: list, designs: dict, label: str) -> list[CoreGroup]:
    """The core groups of a machine's `cpu_cores` list ([{"core", "count", "max_ghz"}]), each
    design's operations per cycle from `designs` ({core: {"fp32_flops_per_cycle": ...}}).
    SpecError naming `label` and the field for a missing design or a value that is not a
    positive number."""
    if not isinstance(entries, list) or not entries:
        raise SpecError(f"{label}: 'cpu_cores' must be a non-empty list of core groups")
    groups = []
    for i, entry in enumerate(entries):
        name = entry.get("core") if isinstance(entry, dict) else None
        if name not in designs:
            raise SpecError(f"{label}: cpu_cores[{i}] names core {name!r}, which cpu_cores.json does not list")
        values = {"count": entry.get("count"), "max_ghz": entry.get("max_ghz"),
                  "fp32_flops_per_cycle": designs[name].get("fp32_flops_per_cycle")}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise SpecError(f"{label}: cpu_cores[{i}] ({name}) '{key}' must be a positive number, got {value!r}")
        groups.append(CoreGroup(name, int(values["count"]), float(values["max_ghz"]),
                                float(values["fp32_flops_per_cycle"])))
    return groups


def vector_peak_tflops(groups: list[CoreGroup], threads: int | None = None) -> float:
    """FP32 vector peak (TFLOP/s) of the `threads` fastest cores of `groups` (all of them for
    None, or for more threads than cores: a second thread on a core adds no vector units).

    Two Haswell cores at 3.1 GHz, 32 operations a cycle: 2 x 3.1 x 32 = 198.4 GFLOP/s.
    """
    if threads is not None and threads < 1:
        raise SpecError(f"threads must be at least 1, got {threads!r}")
    left = sum(g.count for g in groups) if threads is None else threads
    total_gflops = 0.0
    for group in sorted(groups, key=lambda g: g.core_gflops, reverse=True):
        used = min(group.count, left)
        total_gflops += used * group.core_gflops
        left -= used
        if left <= 0:
            break
    return total_gflops / 1000.0
