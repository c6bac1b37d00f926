"""Expected times of the walk's stages: the interface `tokenwalk.walk` uses.

- Decode and prefill steps: the fitted timing model (`tokenwalk.timing.model`, fitted on
  published llama-bench runs, per-backend bandwidth and compute efficiencies and a cost per
  layer; the laptop's three numbers solved from its own measurements each time it is
  timed, `tokenwalk.timing.calibration`).
- Loading from disk: the file's bytes over the disk's bandwidth divided by a load
  efficiency (`data/timing_load.json`): calibrated on a machine's measured cold load where
  there is one (the laptop's 55 s), else the default (1.0, the disk's spec as a bound).
- Template and tokenizer: CPU stages, negligible estimates with their sources.

A walk resolves its machine once for its model (`timed_machine`, a `TimedMachine`: the fit's
row or the calibration's solve, the peaks, the disk and the load efficiency) and times every
stage from it; the functions taking a model and a machine build the same numbers afresh.

Units: seconds; tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from tokenwalk import format as fmt
from tokenwalk.data_refs import DataStore, store_or_default
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.roofline import memory_time_s
from tokenwalk.timing import model as timing_model
from tokenwalk.timing.model import MachineTiming

PHASES = ("decode", "prefill", "load")


def timing_data(store: DataStore | None = None) -> dict:
    """The parsed `data/timing_load.json` (load default and calibrations, CPU stages) of the
    data `store` (the default one if None)."""
    return store_or_default(store).read_json("timing_load.json")


def decode_step_s(model, machine, context_tokens: int, users: int = 1, kv_type: str = "f16") -> float:
    """Expected seconds of one decode step: `users` users, each `context_tokens` deep.

    The fitted model (`tokenwalk.timing.model.decode_step_s`): the roofline step's bytes at
    the fitted share of the bandwidth (or its compute, if larger) plus a cost per kernel launch.
    """
    return timing_model.decode_step_s(model, machine, context_tokens, users, kv_type)


def decode_step_bound(model, machine, context_tokens: int, users: int = 1, kv_type: str = "f16") -> str:
    """"memory" or "compute": which side sets a decode step's expected time."""
    return timing_model.decode_step_bound(model, machine, context_tokens, users, kv_type)


def prefill_chunk_s(model, machine, chunk_tokens: int, context_before: int, kv_type: str = "f16") -> float:
    """Expected seconds of one prefill step of `chunk_tokens` after `context_before` cached tokens.

    The fitted model (`tokenwalk.timing.model.prefill_chunk_s`): the operations (with the
    attention term) at the fitted share of the FP16 peak, never below one read of the
    weights, plus a cost per kernel launch.
    """
    return timing_model.prefill_chunk_s(model, machine, chunk_tokens, context_before, kv_type)


def load_s(model, machine, store: DataStore | None = None) -> float:
    """Expected seconds to load the weights from disk into memory (a cold start).

    The file's bytes over the disk's bandwidth, divided by the load efficiency (the
    laptop: calibrated on Ollama's measured 55 s cold load).
    """
    return memory_time_s(model.size_bytes, disk_bandwidth_gbs(machine, store)) / efficiency(machine, "load", store)


def tokenize_s(tokens: int, store: DataStore | None = None) -> float:
    """Seconds to cut `tokens` tokens from text (an estimate, see timing_load.json)."""
    return tokens / float(timing_data(store)["cpu_stages"]["tokenize_tokens_per_s"]["value"])


def template_s(store: DataStore | None = None) -> float:
    """Seconds to fill the chat template (negligible, see timing_load.json)."""
    return float(timing_data(store)["cpu_stages"]["template_s"]["value"])


def disk_bandwidth_gbs(machine, store: DataStore | None = None) -> float:
    """The disk's read bandwidth (GB/s): `machine.disk_gbs` if the spec has one, else the
    disk rung of the memory ladder (an NVMe SSD) of the data `store`."""
    value = machine.disk_gbs
    if value:
        return float(value)
    store = store_or_default(store)
    return store.remember(("disk rung GB/s",), lambda: _ladder_disk_gbs(store))


def _ladder_disk_gbs(store: DataStore) -> float:
    from tokenwalk.specs.machine import memory_ladder

    for rung in memory_ladder(store):
        if _field(rung, "role") == "disk" and _field(rung, "bandwidth_gbs"):
            return float(_field(rung, "bandwidth_gbs"))
    raise TokenwalkError("tokenwalk/data/machines/_memory_ladder.json: no rung with role 'disk' and a bandwidth")


def efficiency(machine, phase: str, store: DataStore | None = None) -> float:
    """Share of the roofline a phase reaches on `machine` (0 < e <= 1 in practice).

    Decode: the fitted share of the spec bandwidth; prefill: of the FP16 peak; load: the
    the calibration on the machine's measured cold load (its spec's calibration.load) or
    the default.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    if phase != "load":
        coeffs = timing_model.coefficients(machine, store=store)
        return coeffs.bandwidth_efficiency if phase == "decode" else coeffs.compute_efficiency
    return load_efficiency(machine, store)[0]


def load_efficiency(machine, store: DataStore | None = None) -> tuple[float, str]:
    """(load efficiency, "calibrated" or "default"): the calibration on the machine's measured
    cold load (its spec's calibration.load), kept by the data `store` under the machine's
    numbers, else the default of timing_load.json."""
    store = store_or_default(store)
    calibration = (machine.calibration or {}).get("load")
    if calibration is None:
        return float(timing_data(store)["defaults"]["load"]["value"]), "default"
    where = f"{machine.spec_file or machine.name}: calibration.load"
    # keyed on the machine's numbers too, so an edited spec recalibrates
    key = ("load calibration", where, repr(calibration), machine.bandwidth_gbs, machine.disk_gbs)
    return store.remember(key, lambda: _calibrate_load(machine, calibration, where, store)), "calibrated"


def efficiencies(machine, store: DataStore | None = None) -> dict:
    """{phase: efficiency} for `machine`, with where each comes from ("calibrated" or "default")."""
    return _efficiencies(timing_model.coefficients(machine, store=store), *load_efficiency(machine, store),
                         timing_model.compute_figure_name(machine))


def _efficiencies(coeffs: "timing_model.Coefficients", load: float, load_from: str, figure: str) -> dict:
    # a calibration that could not meet its measurements says so where the walk shows its source
    fitted = coeffs.row + (f" ({coeffs.note})" if coeffs.note else "")
    values = {"decode": coeffs.bandwidth_efficiency, "prefill": coeffs.compute_efficiency, "load": load}
    out = {phase: {"value": values[phase], "from": f"fitted: {fitted}" if phase != "load" else load_from}
           for phase in PHASES}
    out["prefill"]["of"] = figure  # what prefill's efficiency is a share of (`timing_model.compute_figure_name`)
    return out


@dataclass(frozen=True)
class TimedMachine(MachineTiming):
    """A machine made ready to time one model's walk, resolved once before its first stage
    (`timed_machine`): the step timing (peaks, fit row or calibration, efficiencies) and the
    load's disk bandwidth and efficiency. The walk's stages read these fields only."""

    disk_gbs: float
    load_efficiency: float
    load_from: str  # "calibrated" or "default"

    def load_s(self) -> float:
        """Seconds of a cold load (`load_s`)."""
        return memory_time_s(self.model.size_bytes, self.disk_gbs) / self.load_efficiency

    def efficiencies(self) -> dict:
        """{phase: {"value", "from"}} as `efficiencies` gives them (prefill's with "of", the figure
        it is a share of): the row before the model's factors."""
        return _efficiencies(self.row_coefficients, self.load_efficiency, self.load_from,
                             timing_model.compute_figure_name(self.machine))

    def load_rate(self) -> dict:
        """The rate a cold load is timed at and why: {"effective_gbs": the file's bytes over the
        load's seconds, "disk_gbs": the disk's spec read rate, "rate_from": "measured" (the
        machine's own cold load, its calibration.load) or "disk spec" (no measurement: a cold
        read of the whole file at the disk's rate, an upper bound on speed; a file still in the
        page cache from an earlier run loads faster, one the engine must also copy into GPU
        memory or repack loads slower), "why": that reason in a short sentence}."""
        effective = self.model.size_bytes / self.load_s() / 1e9
        if self.load_from == "calibrated":
            measured_on = (self.machine.calibration or {}).get("load", {}).get("model", "a model")
            why = (f"measured: the rate of this machine's cold load of {measured_on}, "
                   f"{self.load_efficiency * 100:.1f} % of its disk's {fmt.bandwidth(self.disk_gbs)}")
            return {"effective_gbs": effective, "disk_gbs": self.disk_gbs, "rate_from": "measured", "why": why}
        # a CPU run reads the weights where they land; a GPU's engine copies them on
        slower = "" if timing_model.is_cpu(self.machine) else "; copying it into GPU memory is slower"
        why = (f"not measured: a cold read at the disk's spec rate, {fmt.bandwidth(self.disk_gbs)} "
               f"(a file still in the page cache loads faster{slower})")
        return {"effective_gbs": effective, "disk_gbs": self.disk_gbs, "rate_from": "disk spec", "why": why}


def timed_machine(model, machine, fit: dict | None = None, store: DataStore | None = None) -> TimedMachine:
    """`model` on `machine` resolved for a walk: the fit's row or the calibration's solve, the
    peaks, the disk and the load efficiency, each once, from the data `store` (the default
    one if None)."""
    steps = timing_model.machine_timing(model, machine, fit, store)
    load, load_from = load_efficiency(machine, store)
    return TimedMachine(**{f.name: getattr(steps, f.name) for f in fields(steps)},
                        disk_gbs=disk_bandwidth_gbs(machine, store), load_efficiency=load, load_from=load_from)


def _calibrate_load(machine, entry: dict, where: str, store: DataStore) -> float:
    """Roofline time of the measured cold load (file bytes / disk bandwidth) / its measured time."""
    from tokenwalk.specs.model import load_model

    try:
        model = load_model(entry["model"], store)
    except KeyError:
        raise TokenwalkError(f"{where}: field 'model' is missing") from None
    roofline_s = memory_time_s(model.size_bytes, disk_bandwidth_gbs(machine, store))
    return roofline_s / float(store.resolve(entry["measured_s"], where))


def _field(obj, key):
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)
