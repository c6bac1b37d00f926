"""Expected times of the walk's stages: the interface `tokenwalk.walk` uses.

- Decode and prefill steps: the fitted timing model (`tokenwalk.timing.model`, fitted on
  published llama-bench runs, per-backend bandwidth and compute efficiencies and a cost per
  layer; the laptop's three numbers solved from its own measurements each time it is
  timed, `tokenwalk.timing.calibration`).
- Loading from disk: the file's bytes over the disk's bandwidth divided by a load
  efficiency (`data/timing_load.json`): calibrated on a machine's measured cold load where
  there is one (the laptop's 55 s), else the default (1.0, the disk's spec as a bound).
- Template and tokenizer: CPU stages, negligible estimates with their sources.

Units: seconds; tokens.
"""

from __future__ import annotations

from tokenwalk.data_refs import read_data_json, resolve
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.roofline import memory_time_s
from tokenwalk.timing import model as timing_model

PHASES = ("decode", "prefill", "load")


def timing_data() -> dict:
    """The parsed `data/timing_load.json` (load default and calibrations, CPU stages)."""
    return read_data_json("timing_load.json")


def decode_step_s(model, machine, context_tokens: int, users: int = 1, kv_type: str = "f16") -> float:
    """Expected seconds of one decode step: `users` users, each `context_tokens` deep.

    The fitted model (`tokenwalk.timing.model.decode_step_s`): the roofline step's bytes at
    the fitted share of the bandwidth (or its compute, if larger) plus a cost per layer.
    """
    return timing_model.decode_step_s(model, machine, context_tokens, users, kv_type)


def decode_step_bound(model, machine, context_tokens: int, users: int = 1, kv_type: str = "f16") -> str:
    """"memory" or "compute": which side sets a decode step's expected time."""
    return timing_model.decode_step_bound(model, machine, context_tokens, users, kv_type)


def prefill_chunk_s(model, machine, chunk_tokens: int, context_before: int, kv_type: str = "f16") -> float:
    """Expected seconds of one prefill step of `chunk_tokens` after `context_before` cached tokens.

    The fitted model (`tokenwalk.timing.model.prefill_chunk_s`): the operations (with the
    attention term) at the fitted share of the FP16 peak, never below one read of the
    weights, plus a cost per layer.
    """
    return timing_model.prefill_chunk_s(model, machine, chunk_tokens, context_before, kv_type)


def load_s(model, machine) -> float:
    """Expected seconds to load the weights from disk into memory (a cold start).

    The file's bytes over the disk's bandwidth, divided by the load efficiency (the
    laptop: calibrated on Ollama's measured 55 s cold load).
    """
    return memory_time_s(model.size_bytes, disk_bandwidth_gbs(machine)) / efficiency(machine, "load")


def tokenize_s(tokens: int) -> float:
    """Seconds to cut `tokens` tokens from text (an estimate, see timing_load.json)."""
    return tokens / float(timing_data()["cpu_stages"]["tokenize_tokens_per_s"]["value"])


def template_s() -> float:
    """Seconds to fill the chat template (negligible, see timing_load.json)."""
    return float(timing_data()["cpu_stages"]["template_s"]["value"])


def disk_bandwidth_gbs(machine) -> float:
    """The disk's read bandwidth (GB/s): `machine.disk_gbs` if the spec has one, else the
    disk rung of the memory ladder (an NVMe SSD)."""
    value = machine.disk_gbs
    if value:
        return float(value)
    from tokenwalk.specs.machine import memory_ladder

    for rung in memory_ladder():
        if _field(rung, "role") == "disk" and _field(rung, "bandwidth_gbs"):
            return float(_field(rung, "bandwidth_gbs"))
    raise TokenwalkError("tokenwalk/data/machines/_memory_ladder.json: no rung with role 'disk' and a bandwidth")


def efficiency(machine, phase: str) -> float:
    """Share of the roofline a phase reaches on `machine` (0 < e <= 1 in practice).

    Decode: the fitted share of the spec bandwidth; prefill: of the FP16 peak; load: the
    the calibration on the machine's measured cold load (its spec's calibration.load) or
    the default.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    if phase != "load":
        coeffs = timing_model.coefficients(machine)
        return coeffs.bandwidth_efficiency if phase == "decode" else coeffs.compute_efficiency
    calibration = (machine.calibration or {}).get("load")
    if calibration is None:
        return float(timing_data()["defaults"]["load"]["value"])
    where = f"{machine.spec_file or machine.name}: calibration.load"
    key = (where, repr(calibration), machine.bandwidth_gbs, machine.disk_gbs)
    if key not in _CALIBRATED:
        # Keyed on the machine's numbers too, so an edited spec recalibrates.
        _CALIBRATED[key] = _calibrate_load(machine, calibration, where)
    return _CALIBRATED[key]


def efficiencies(machine) -> dict:
    """{phase: efficiency} for `machine`, with where each comes from ("calibrated" or "default")."""
    calibrations = machine.calibration or {}
    coeffs = timing_model.coefficients(machine)
    # a calibration that could not meet its measurements says so where the walk shows its source
    fitted = coeffs.row + (f" ({coeffs.note})" if coeffs.note else "")
    return {phase: {"value": efficiency(machine, phase),
                    "from": f"fitted: {fitted}" if phase != "load" else
                    "calibrated" if phase in calibrations else "default"} for phase in PHASES}


_CALIBRATED: dict = {}


def _calibrate_load(machine, entry: dict, where: str) -> float:
    """Roofline time of the measured cold load (file bytes / disk bandwidth) / its measured time."""
    from tokenwalk.specs.model import load_model

    try:
        model = load_model(entry["model"])
    except KeyError:
        raise TokenwalkError(f"{where}: field 'model' is missing") from None
    roofline_s = memory_time_s(model.size_bytes, disk_bandwidth_gbs(machine))
    return roofline_s / float(resolve(entry["measured_s"], where))


def _field(obj, key):
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)
