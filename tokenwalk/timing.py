"""Expected step times (timing model v1): the roofline divided by an efficiency per phase.

The roofline (`tokenwalk.roofline`) is a bound at spec-sheet maxima; real runs reach a
share of it. Version 1 says how large a share with one factor per phase (decode,
prefill, load), read from `data/timing_v1.json`:

- on a machine with a measurement, the factor is calibrated on it: efficiency =
  roofline time of the measured run / measured time (the laptop's 11.7 tok/s decode
  against a roofline of about 70 tok/s gives about 0.17);
- on any other machine, a default with its source (decode 0.74, the median of published
  llama-bench runs; prefill 0.7).

Decode and prefill now use the fitted timing model (`tokenwalk.timing_model`: per-backend
bandwidth and compute efficiencies and a per-layer cost, fitted on published llama-bench
runs, the laptop calibrated on its own measurements); load keeps the v1 factor.

Units: seconds; tokens.
"""

from __future__ import annotations

from .data_refs import read_data_json, resolve
from .errors import TokenwalkError
from .roofline import decode_step, memory_time_s, prefill_step
from . import timing_model

PHASES = ("decode", "prefill", "load")


def timing_data() -> dict:
    """The parsed `data/timing_v1.json` (defaults, CPU stages, calibrations)."""
    return read_data_json("timing_v1.json")


def decode_step_s(model, machine, context_tokens: int, users: int = 1, kv_type: str = "f16") -> float:
    """Expected seconds of one decode step: `users` users, each `context_tokens` deep.

    The fitted model (`tokenwalk.timing_model.decode_step_s`): the roofline step's bytes at
    the fitted share of the bandwidth (or its compute, if larger) plus a cost per layer.
    """
    return timing_model.decode_step_s(model, machine, context_tokens, users, kv_type)


def prefill_chunk_s(model, machine, chunk_tokens: int, context_before: int, kv_type: str = "f16") -> float:
    """Expected seconds of one prefill step of `chunk_tokens` after `context_before` cached tokens.

    The fitted model (`tokenwalk.timing_model.prefill_chunk_s`): the operations (with the
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
    """Seconds to cut `tokens` tokens from text (an estimate, see timing_v1.json)."""
    return tokens / float(timing_data()["cpu_stages"]["tokenize_tokens_per_s"]["value"])


def template_s() -> float:
    """Seconds to fill the chat template (negligible, see timing_v1.json)."""
    return float(timing_data()["cpu_stages"]["template_s"]["value"])


def disk_bandwidth_gbs(machine) -> float:
    """The disk's read bandwidth (GB/s): `machine.disk_gbs` if the spec has one, else the
    disk rung of the memory ladder (an NVMe SSD)."""
    value = getattr(machine, "disk_gbs", None)
    if value:
        return float(value)
    from .machine_spec import memory_ladder

    for rung in memory_ladder():
        if _field(rung, "role") == "disk" and _field(rung, "bandwidth_gbs"):
            return float(_field(rung, "bandwidth_gbs"))
    raise TokenwalkError("tokenwalk/data/machines/_memory_ladder.json: no rung with role 'disk' and a bandwidth")


def efficiency(machine, phase: str) -> float:
    """Share of the roofline a phase reaches on `machine` (0 < e <= 1 in practice).

    Calibrated on the machine's measurement in timing_v1.json when there is one (matched
    by machine name), else the phase's default.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    if phase != "load":  # fitted model: its share of the spec bandwidth (decode) or FP16 peak (prefill)
        coeffs = timing_model.coefficients(machine)
        return coeffs.bandwidth_efficiency if phase == "decode" else coeffs.compute_efficiency
    name = getattr(machine, "name", None)
    calibration = timing_data().get("calibrations", {}).get(name, {}).get(phase)
    if calibration is None:
        return float(timing_data()["defaults"][phase]["value"])
    key = (name, phase, machine.bandwidth_gbs, machine.fp16_tflops, getattr(machine, "disk_gbs", None))
    if key not in _CALIBRATED:
        # Keyed on the machine's numbers too, so an edited spec recalibrates.
        _CALIBRATED[key] = _calibrate(machine, calibration, phase)
    return _CALIBRATED[key]


def efficiencies(machine) -> dict:
    """{phase: efficiency} for `machine`, with where each comes from ("calibrated" or "default")."""
    name = getattr(machine, "name", None)
    calibrations = timing_data().get("calibrations", {}).get(name, {})
    fitted = timing_model.coefficients(machine).row
    return {phase: {"value": efficiency(machine, phase),
                    "from": f"fitted: {fitted}" if phase != "load" else
                    "calibrated" if phase in calibrations else "default"} for phase in PHASES}


_CALIBRATED: dict = {}


def _calibrate(machine, entry: dict, phase: str) -> float:
    """Roofline time of the measured run / its measured time."""
    from .model_spec import load_model

    model = load_model(entry["model"])
    where = f"timing_v1.json calibrations.{machine.name}.{phase}"
    if phase == "decode":
        roofline_s = decode_step(model, machine, int(resolve(entry.get("context_tokens", 0), where))).step_s
        measured_s = 1.0 / float(resolve(entry["measured_tok_s"], where))
    elif phase == "prefill":
        prompt = int(resolve(entry["prompt_tokens"], where))
        chunk = int(resolve(entry.get("chunk_tokens"), where) or prompt)
        roofline_s, done = 0.0, 0
        while done < prompt:
            n = min(chunk, prompt - done)
            roofline_s += prefill_step(model, machine, n, done).step_s
            done += n
        measured_s = prompt / float(resolve(entry["measured_tok_s"], where))
    else:
        roofline_s = memory_time_s(model.size_bytes, disk_bandwidth_gbs(machine))
        measured_s = float(resolve(entry["measured_s"], where))
    return roofline_s / measured_s


def _field(obj, key):
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)
