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

from dataclasses import dataclass, field, replace

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
    # {model: share of its predicted decode step that is launches x cost per launch} for the
    # models calibrated on (filled where the check computes it)
    calibration_fixed_shares: dict = field(default_factory=dict, compare=False)

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
    flops = prompt * roofline.flops_per_token(model) + roofline.chunk_attention_flops(model, prompt)
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


LLAMA_BENCH_FILE = "measurements/llama-bench-build-machine.json"


def llama_bench_leave_one_model_out(store: data_refs.DataStore | None = None) -> list[SizeCheckRow]:
    """The same check on llama.cpp's own kernels: llama-bench's tg128 and pp512 of the three
    models on the build machine (LLAMA_BENCH_FILE, as llama-bench printed them), each model
    predicted from a calibration on the other two (`tokenwalk.timing.own_runs`, the solve a
    reader's pasted runs get). A miss here as well as on the engine is the law's (or llama.cpp's
    own), not the engine's kernels'."""
    from tokenwalk.specs.machine import this_machine
    from tokenwalk.specs.model import list_model_presets, load_model
    from tokenwalk.timing import model as timing_model
    from tokenwalk.timing import own_runs

    store = data_refs.store_or_default(store)
    label = store.label(LLAMA_BENCH_FILE)
    try:
        tests = store.read_json(LLAMA_BENCH_FILE)["runs"]
    except (KeyError, TypeError):
        raise SpecError(f"{label}: runs: missing (llama-bench's -o json output)") from None
    if not isinstance(tests, list):
        raise SpecError(f"{label}: runs: expected llama-bench's -o json output (a list of tests)")
    models = {name: load_model(name, store) for name in list_model_presets(store)}
    runs = own_runs.match_models(own_runs.runs_from_tests(tests, label)[0], models)
    names = list(dict.fromkeys(r.model for r in runs if r.model))
    if len(names) < 3:
        raise SpecError(f"{label}: the size check needs runs of three models here, has {len(names)}")
    machine = this_machine(store)
    rows = []
    for name in names:
        others = [r for r in runs if r.model and r.model != name]
        calibration = own_runs.calibrate(machine, others, models, store=store, label=label)
        timed = timing_model.machine_timing(models[name], calibration.machine, store=store)
        mine = {r.phase: r for r in runs if r.model == name and not r.depth_tokens}
        if set(mine) != {"decode", "prefill"}:
            raise SpecError(f"{label}: {name}: a pp and a tg test from an empty cache are needed")
        shares = {}
        for run in others:
            if run.phase == "decode" and run.model not in shares:
                step = timing_model.machine_timing(models[run.model], calibration.machine, store=store)
                shares[run.model] = step.fixed_step_s / step.decode_step_s(run.decode_context_tokens)
        rows.append(SizeCheckRow(
            left_out=name, calibrated_on=tuple(dict.fromkeys(r.model for r in others)), calibration_fixed_shares=shares,
            decode_measured=mine["decode"].tok_s, decode_predicted=own_runs.run_tok_s(mine["decode"], timed),
            prefill_measured=mine["prefill"].tok_s, prefill_predicted=own_runs.run_tok_s(mine["prefill"], timed),
            note=calibration.note))
    return rows
