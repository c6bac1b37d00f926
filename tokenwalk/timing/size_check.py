"""Does a machine's calibration carry from one model size to another? The build machine's check.

`tokenwalk measure` runs the article's request through tokenwalk's engine for up to three
models on the machine that builds the page (measurements/engine.json for SmolLM2-135M,
engine-<model>.json for the others). Each model in turn is left out: the machine is calibrated
on the other two exactly as the laptop is (`tokenwalk.timing.calibration`: two decode speeds
give the bandwidth efficiency and the cost per launch, the first model's prefill the compute
efficiency, against the higher of the two models' achieved prefill rates as the machine's
compute figure), and the left-out model's decode and prefill speeds are predicted at its own
prompt and compared with what was measured. That is what a reader does with their own machine:
measure a model or two, then ask about one they have not run.

Only measurements of one device count together (each file records its OpenCL device): a
check across machines would test the machines, not the model. Units: tok/s; errors are
|predicted / measured - 1|.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tokenwalk import data_refs
from tokenwalk.errors import SpecError
from tokenwalk.physics import roofline

# What the check aims at (issue of record: a calibration on two sizes predicts the third)
TARGETS = {"decode_ape": 0.15, "prefill_ape": 0.25}


@dataclass(frozen=True)
class SizeCheckRow:
    """One left-out model: its preset, the two it was predicted from, measured and predicted
    speeds (tok/s), their errors, and the calibration's note ("" when it met its measurements)."""

    left_out: str
    calibrated_on: tuple
    decode_measured: float
    decode_predicted: float
    prefill_measured: float
    prefill_predicted: float
    note: str

    @property
    def decode_ape(self) -> float:
        return abs(self.decode_predicted / self.decode_measured - 1.0)

    @property
    def prefill_ape(self) -> float:
        return abs(self.prefill_predicted / self.prefill_measured - 1.0)


def measured_models(store: data_refs.DataStore | None = None) -> list[tuple[str, str, dict]]:
    """(measurement file, model preset, parsed file) of every engine measurement on this
    build machine, engine.json first; SpecError when they were taken on different devices."""
    from tokenwalk.specs.machine import MEASUREMENTS_FILE, engine_measurements, measured_model, other_engine_measurements

    store = data_refs.store_or_default(store)
    main = engine_measurements(store)
    files = ([(MEASUREMENTS_FILE, main)] if main is not None else []) + other_engine_measurements(store)
    out, devices = [], {}
    for file, data in files:
        try:
            device, model_file = str(data["values"]["device"]["value"]), data["model"]
        except (KeyError, TypeError):
            raise SpecError(f"tokenwalk/data/{file}: values.device or model: missing (run `tokenwalk measure` again)") from None
        devices.setdefault(device, []).append(file)
        out.append((file, measured_model(model_file, store).name, data))
    if len(devices) > 1:
        raise SpecError("the engine's measurements were taken on different devices ("
                        + "; ".join(f"{', '.join(f)}: {d}" for d, f in devices.items())
                        + "): measure every model on one machine (`tokenwalk measure --model ...`)")
    return out


def _achieved_tflops(model, data: dict) -> float:
    """TFLOP/s the measured prefill reached: the prompt's weight and attention operations over
    its time (as `specs.machine.this_machine` counts them)."""
    values = {k: v["value"] for k, v in data["values"].items()}
    prompt = int(values["prompt_tokens"])
    flops = prompt * roofline.flops_per_token(model) + roofline.attention_flops(model, roofline.prefill_query_key_pairs(prompt))
    return flops / (prompt / float(values["prefill_tok_s"])) / 1e12


def leave_one_model_out(store: data_refs.DataStore | None = None) -> list[SizeCheckRow]:
    """Each measured model predicted from a calibration on the other two (needs three)."""
    from tokenwalk.specs.machine import this_machine
    from tokenwalk.specs.model import load_model
    from tokenwalk.timing import model as timing_model

    store = data_refs.store_or_default(store)
    measured = measured_models(store)
    if len(measured) < 3:
        raise SpecError(f"the size check needs the engine's measurements of three models on this machine, "
                        f"has {len(measured)} (run `tokenwalk measure --model ...`)")
    machine = this_machine(store)
    rows = []
    for i, (_file, preset, data) in enumerate(measured):
        others = [m for j, m in enumerate(measured) if j != i][:2]
        calibration = {
            "decode": [{"from": f, "key": "decode_tok_s", "model": p} for f, p, _ in others],
            "decode_context_tokens": {"from": others[0][0], "key": "prompt_tokens"},
            "prefill": {"from": others[0][0], "key": "prefill_tok_s", "model": others[0][1]},
            "prefill_prompt_tokens": {"from": others[0][0], "key": "prompt_tokens"},
            "prefill_chunk_tokens": {"from": others[0][0], "key": "prefill_chunk_tokens"},
        }
        # the machine's compute figure is a rate the engine reached (this-machine's is SmolLM2's
        # prefill): here the higher of the two calibration models', so neither needs more than all of it
        peak = max(_achieved_tflops(load_model(p, store), d) for _, p, d in others)
        calibrated = replace(machine, name=f"{machine.name} without {preset}", calibration=calibration,
                             fp16_tflops=peak)
        model = load_model(preset, store)
        values = {k: v["value"] for k, v in data["values"].items()}
        prompt, chunk = int(values["prompt_tokens"]), int(values["prefill_chunk_tokens"])
        timed = timing_model.machine_timing(model, calibrated, store=store)
        decode_tok_s = 1.0 / timed.decode_step_s(prompt)
        prefill_s = sum(timed.prefill_chunk_s(n, before) for before, n in roofline.prompt_chunks(prompt, chunk))
        rows.append(SizeCheckRow(left_out=preset, calibrated_on=tuple(p for _, p, _ in others),
                                 decode_measured=float(values["decode_tok_s"]), decode_predicted=decode_tok_s,
                                 prefill_measured=float(values["prefill_tok_s"]), prefill_predicted=prompt / prefill_s,
                                 note=timed.coefficients.note))
    return rows
