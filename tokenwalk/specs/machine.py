"""The machines of the article: memory bandwidth, fp16 FLOP/s, memory, compute units.

A MachineSpec comes from a preset (`tokenwalk/data/machines/<name>.json`, every value
with its source) or any JSON file in the same schema: required `name`, `bandwidth_gbs`,
`fp16_tflops`, `memory_gb`; optional `backend`, `compute_units`, `lanes_per_cu`,
`clock_ghz`, `l2_cache_bytes`, `shared_memory_per_cu_bytes`, `disk_gbs`, `title`,
`sources`, `device_class` ("integrated": a GPU or CPU sharing the system's memory;
"discrete": a card with its own VRAM; "datacentre": a server accelerator; the timing fit
has rows per backend and class), `unified_memory`, `architecture_year` (the year the
chip's family first shipped: the fit's bandwidth efficiency trends with it), `memory_type`
("HBM3", "GDDR7", "LPDDR5X": a card with HBM takes the fit's HBM row where it has one), `vendor`
(the chip's maker, one of VENDORS: with the backend it takes the fit's row for that maker,
"Vulkan/Intel", where it has one), and what was
measured on the machine itself: `system_and_apps_bytes` (the memory the system and apps
hold before a model loads) and `calibration` (the measurements
its timing is solved on, `tokenwalk.timing.calibration`). Those two travel with the file
that states them: a machine is calibrated by its own spec, never by a side table matched
on its name, so renaming a preset keeps them and a user's file named like a preset does
not pick them up. A numeric field may be a reference into a measurements file,
``{"from": "measurements/laptop.json", "key": "system_and_apps_bytes"}``.

One more machine, `this-machine` (MEASURED_MACHINE), is not a preset file: `this_machine()`
builds it from data/measurements/engine.json, what `tokenwalk measure` wrote on the machine
that built the page (measured bandwidth, achieved prefill rate, physical memory).

Units: bandwidth in GB/s (1e9 bytes per second), compute in TFLOP/s (1e12 operations per
second, dense fp16/bf16, the format the roofline of the article uses), memory in GB
(1e9 bytes); on-chip memories in bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from tokenwalk import data_refs
from tokenwalk.errors import SpecError, TokenwalkError
from tokenwalk.specs.recalled import check_recalled
from tokenwalk.specs.schema import MACHINE_DOMAINS, check_fields, preset_names, read_json_object, read_preset

REQUIRED_FIELDS = {"name": "str", "bandwidth_gbs": "number", "fp16_tflops": "number", "memory_gb": "number"}
OPTIONAL_FIELDS = {
    "title": "str", "backend": "str", "compute_units": "int", "lanes_per_cu": "int", "clock_ghz": "number",
    "l2_cache_bytes": "int", "shared_memory_per_cu_bytes": "int", "disk_gbs": "number",
    "system_and_apps_bytes": "number", "calibration": "dict", "sources": "dict",
    "device_class": "str", "unified_memory": "bool", "architecture_year": "int", "memory_type": "str",
    "vendor": "str", "recalled": "list",
}
# What `device_class` may say: the timing fit has rows per backend and class of device.
DEVICE_CLASSES = ("integrated", "discrete", "datacentre")
# The llama.cpp backends the timing fit has rows for (a preset may name another: its row is then "default").
BACKENDS = ("CUDA", "ROCm", "Vulkan", "Metal", "SYCL", "CPU")
# The kinds of memory the simulator's form offers for `memory_type` (a JSON file may name the
# generation, "HBM3", "GDDR6X"): only whether it is HBM can change the timing (timing.model.is_hbm),
# where the fit has HBM rows.
MEMORY_KINDS = ("HBM", "GDDR", "LPDDR", "DDR")
# Who made the chip, for `vendor`: the fit has rows per backend and maker where a backend runs
# on several makers' chips ("Vulkan/Intel"); the published runs take it from their machine's name
# (tokenwalk.timing.llama_bench.vendor_of).
VENDORS = ("AMD", "Apple", "Intel", "NVIDIA")
# What to write in a machine of one's own, field by field: the README's "Machine JSON" and the
# simulator's "Your own numbers" form give these same hints (tests/core/test_timing_unseen.py).
FIELD_HINTS = {
    "bandwidth_gbs": "the spec sheet's memory bandwidth, GB/s",
    "fp16_tflops": ("the dense FP16 matrix peak, without sparsity: NVIDIA's figure with FP16 accumulation, "
                    "AMD's own figure, Apple's GPU FP32 rate; for a CPU, the FP32 vector peak of the cores "
                    "llama.cpp's threads use: cores × GHz × operations a cycle (32 for two 256-bit FMA units, "
                    "16 for two 128-bit ones) / 1000"),
    "backend": "the llama.cpp backend it runs: chooses the fitted efficiencies",
    "vendor": ("who made the chip (AMD, Apple, Intel, NVIDIA): with the backend it picks the fit's row "
               "for that maker, where the fit has one"),
    "device_class": "integrated (shares the system's memory), discrete (a card with its own memory) or datacentre",
    "memory_type": ("the spec sheet's memory type (HBM3, GDDR6X, LPDDR5X): HBM picks the fit's HBM row "
                    "where it has one; the current fit has none, so it changes nothing today"),
    "architecture_year": ("the year its chip family first shipped (Ada: 2022, RDNA3: 2022, Apple M4: 2024); "
                          "not used for a CPU"),
}
LADDER_FILE = "_memory_ladder"
THIS_MACHINE_FILE = "_this-machine"
MEASURED_MACHINE = "this-machine"
MEASUREMENTS_FILE = "measurements/engine.json"


@dataclass
class MachineSpec:
    """A machine as the roofline sees it (see the module docstring for units)."""

    name: str
    bandwidth_gbs: float
    fp16_tflops: float
    memory_gb: float
    title: str | None = None
    backend: str | None = None
    compute_units: int | None = None
    lanes_per_cu: int | None = None
    clock_ghz: float | None = None
    l2_cache_bytes: int | None = None
    shared_memory_per_cu_bytes: int | None = None
    disk_gbs: float | None = None
    system_and_apps_bytes: float | None = None
    calibration: dict | None = None
    device_class: str | None = None  # "integrated" (shares system memory), "discrete" (own VRAM), "datacentre"
    unified_memory: bool | None = None
    architecture_year: int | None = None  # the year the chip's family first shipped (RDNA3: 2022)
    memory_type: str | None = None  # "HBM3", "GDDR7", "LPDDR5X": a card with HBM takes the fit's HBM row
    vendor: str | None = None  # the chip's maker (VENDORS): the fit's row for backend and maker, "Vulkan/Intel"
    sources: dict[str, str] = field(default_factory=dict)
    recalled: tuple[str, ...] = ()  # fields whose values were written from memory (tokenwalk.specs.recalled)
    spec_file: str = field(default="", compare=False)  # where `calibration` was read: errors name it

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "spec_file"}


@dataclass(frozen=True)
class MemoryRung:
    """One rung of the memory ladder: a memory, its bandwidth (GB/s, None if not given)
    and capacity (bytes, None for "terabytes"); `capacity_label` as the figure prints it;
    `count` copies of it (132 SMs)."""

    name: str
    role: str
    bandwidth_gbs: float | None
    capacity_bytes: int | None
    capacity_label: str
    source: str
    count: int = 1


def machine_from_dict(data: dict, label: str, store=None) -> MachineSpec:
    """A MachineSpec from a JSON object; SpecError names `label` and the field. A number
    given as a reference into a measurements file is resolved (`DataStore.resolve`, in the
    data `store`, the default one if None)."""
    store = data_refs.store_or_default(store)
    data = {k: store.resolve(v, f"{label}: {k}")
            if (REQUIRED_FIELDS.get(k) or OPTIONAL_FIELDS.get(k)) == "number" else v for k, v in data.items()}
    values = check_fields(data, label, REQUIRED_FIELDS, OPTIONAL_FIELDS, MACHINE_DOMAINS)
    for name in ("bandwidth_gbs", "fp16_tflops", "memory_gb"):
        if values[name] <= 0:
            raise SpecError(f"{label}: field '{name}' must be > 0, not {values[name]!r}")
    if values.get("device_class") is not None and values["device_class"] not in DEVICE_CLASSES:
        raise SpecError(f"{label}: field 'device_class' must be one of {', '.join(DEVICE_CLASSES)}, "
                        f"not {values['device_class']!r}")
    if values.get("vendor") is not None and values["vendor"] not in VENDORS:
        raise SpecError(f"{label}: field 'vendor' must be one of {', '.join(VENDORS)}, not {values['vendor']!r}")
    values["recalled"] = check_recalled(data, label)
    return MachineSpec(**values, spec_file=label)


def list_machine_presets(store=None) -> list[str]:
    """Names of the machine presets (tokenwalk/data/machines/*.json, or the `store`'s folder's)."""
    return preset_names("machines", store)


def load_machine(name_or_path, store=None) -> MachineSpec:
    """A MachineSpec from a preset name (of the data `store`, the default one if None) or a
    JSON file; SpecError otherwise."""
    text = os.fspath(name_or_path)
    if text.lower().endswith(".json"):
        return machine_from_dict(read_json_object(text), text, store)
    if text == MEASURED_MACHINE:
        return this_machine(store)
    presets = list_machine_presets(store)
    if text in presets:
        data, label = read_preset("machines", text, store)
        return machine_from_dict(data, label, store)
    if os.sep in text or "/" in text or os.path.exists(text):
        raise SpecError(f"{text}: a machine is a preset name or a .json file")
    raise SpecError(f"{text}: not a machine preset ({', '.join(presets + [MEASURED_MACHINE])}), nor a .json file")


# ----------------------------------------------------------------- the measured machine

def engine_measurements(store=None) -> dict | None:
    """data/measurements/engine.json parsed (read through the data store, so a test can
    substitute it), or None when this build machine has not been measured (no file)."""
    try:
        return data_refs.store_or_default(store).read_json(MEASUREMENTS_FILE)
    except TokenwalkError:
        return None


def other_engine_measurements(store=None) -> list[tuple[str, dict]]:
    """The measurements of the other models the engine ran on this build machine
    (data/measurements/engine-<model>.json, written by `tokenwalk measure --model <model>`), as
    (file, parsed) pairs in file-name order; engine.json (the SmolLM2 run the simulator's
    measured preset stands on) is not among them."""
    store = data_refs.store_or_default(store)
    folder = store.root / MEASUREMENTS_FILE.rpartition("/")[0]
    names = sorted(p.name for p in folder.glob("engine-*.json")) if folder.is_dir() else []
    return [(f"measurements/{name}", store.read_json(f"measurements/{name}")) for name in names]


def has_measured_machine(store=None) -> bool:
    """Whether `this-machine` exists: engine.json is there."""
    return engine_measurements(store) is not None


def measured_model(file_name: str, store=None):
    """The model preset of the GGUF file `file_name` (its sources cite the file by name);
    SpecError when no preset describes it."""
    from tokenwalk.specs.model import list_model_presets, load_model

    for name in list_model_presets(store):
        model = load_model(name, store)
        if any(str(src).startswith(file_name + ":") for src in model.sources.values()):
            return model
    raise SpecError(f"tokenwalk/data/{MEASUREMENTS_FILE}: model: no model preset describes {file_name!r}")


def this_machine(store=None) -> MachineSpec:
    """The machine that built the page, as `tokenwalk measure` measured it (engine.json).

    bandwidth_gbs: the read bandwidth its OpenCL kernel measured. fp16_tflops: the useful rate
    the measured prefill reached (2 x active parameters of the measured model per prompt token,
    plus the attention over the prompt, which at the request's length is nearly as much, over
    the prefill's time), a lower bound of the peak: the engine's kernels, not the silicon, set it. memory_gb: the
    physical memory the measuring process saw. backend "CPU" when the OpenCL device is PoCL
    (the CPU itself). Its speeds are timed on its own measurements (the calibration in
    data/machines/_this-machine.json), not on a row of the published fit: so it names no
    `vendor`, `device_class` or `memory_type`, which only choose a row of the fit.
    """
    from tokenwalk.physics.roofline import chunk_attention_flops, flops_per_token

    data = engine_measurements(store)
    label = f"tokenwalk/data/{MEASUREMENTS_FILE}"
    if data is None:
        raise SpecError(f"{label}: not found; this machine has not been measured (run `tokenwalk measure`)")
    try:
        values = {k: v["value"] for k, v in data["values"].items()}
        bandwidth, prefill = values["measured_bandwidth_gbs"], values["prefill_tok_s"]
        memory_bytes, device = values["memory_bytes"], str(values["device"])
        prompt_tokens = values["prompt_tokens"]
        when, model_file = data["when"], data["model"]
    except (KeyError, TypeError) as error:
        raise SpecError(f"{label}: missing field {error} (run `tokenwalk measure` again)") from None
    model = measured_model(model_file, store)
    prefill_flops = (prompt_tokens * flops_per_token(model)
                     + chunk_attention_flops(model, prompt_tokens))
    achieved_tflops = prefill_flops / (prompt_tokens / prefill) / 1e12
    cpu = "portable computing language" in (device + " " + str(data.get("where", ""))).lower()
    calibration_file, calibration_label = read_preset("machines", THIS_MACHINE_FILE, store)
    measured = f"tokenwalk measure on this machine, {when}"
    machine = machine_from_dict({
        "name": MEASURED_MACHINE,
        "title": "the build machine (measured)",
        "backend": "CPU" if cpu else "OpenCL",
        "bandwidth_gbs": bandwidth,
        "fp16_tflops": achieved_tflops,
        "memory_gb": memory_bytes / 1e9,
        "calibration": calibration_file.get("calibration"),
        "sources": {
            "name": f"the machine that built the page: {device}",
            "backend": ("its OpenCL device is PoCL, which runs on the CPU; timed on its own "
                        f"measurements ({calibration_label})" if cpu
                        else f"an OpenCL device; timed on its own measurements ({calibration_label})"),
            "bandwidth_gbs": f"{measured}: an OpenCL kernel reading a buffer larger than any cache",
            "fp16_tflops": (f"{measured}: {prompt_tokens:,} prompt tokens of {model_file} prefilled at {prefill} "
                            f"tok/s, each costing 2 x {model.active_params:,} active parameters, plus the attention "
                            "over the prompt (tokenwalk.physics.roofline.chunk_attention_flops); a lower bound of the peak, set by "
                            "tokenwalk's own kernels"),
            "memory_gb": f"{measured}: physical memory (page size x physical pages)",
            "calibration": calibration_label,
        },
    }, label, store)
    # errors in the calibration name the file it comes from
    return replace(machine, spec_file=calibration_label)


def memory_ladder(store=None) -> list[MemoryRung]:
    """The rungs of an H100 server's memory ladder, from the disk down to SM shared memory.

    A rung that names a `machine` takes its numbers from that preset, so the H100's
    bandwidth, memory, L2 and shared memory are written once (in h100-sxm.json).
    """
    data, label = read_preset("machines", LADDER_FILE, store)
    rungs = data.get("rungs")
    if not isinstance(rungs, list):
        raise SpecError(f"{label}: missing field 'rungs' (a list)")
    out = []
    for i, rung in enumerate(rungs):
        where = f"{label}: rungs[{i}]"
        if not isinstance(rung, dict):
            raise SpecError(f"{where}: expected an object")
        if "machine" in rung:
            out.append(_rung_from_machine(rung, where, store))
            continue
        values = check_fields(rung, where, {"name": "str", "role": "str", "capacity_label": "str", "source": "str"},
                              {"bandwidth_gbs": "number", "capacity_bytes": "int", "count": "int"})
        out.append(MemoryRung(name=values["name"], role=values["role"],
                              bandwidth_gbs=values.get("bandwidth_gbs"),
                              capacity_bytes=values.get("capacity_bytes"),
                              capacity_label=values["capacity_label"], source=values["source"],
                              count=values.get("count", 1)))
    return out


def _rung_from_machine(rung: dict, where: str, store=None) -> MemoryRung:
    """A vram, l2 or sm rung whose numbers are the named machine preset's."""
    values = check_fields(rung, where, {"name": "str", "role": "str", "source": "str", "machine": "str"}, {})
    machine = load_machine(values["machine"], store)
    role = values["role"]
    if role == "vram":
        capacity = int(machine.memory_gb * 1e9)
        bandwidth, label, count = machine.bandwidth_gbs, f"{machine.memory_gb:g} GB", 1
    elif role == "l2" and machine.l2_cache_bytes:
        capacity, bandwidth, count = int(machine.l2_cache_bytes), None, 1
        label = f"{machine.l2_cache_bytes / 2**20:g} MB"
    elif role == "sm" and machine.shared_memory_per_cu_bytes and machine.compute_units:
        capacity, bandwidth, count = int(machine.shared_memory_per_cu_bytes), None, int(machine.compute_units)
        label = f"{machine.shared_memory_per_cu_bytes / 1024:g} KB x {count} SMs"
    else:
        raise SpecError(f"{where}: role {role!r} cannot be read from machine {values['machine']!r}")
    return MemoryRung(name=values["name"], role=role, bandwidth_gbs=bandwidth, capacity_bytes=capacity,
                      capacity_label=label, source=values["source"], count=count)
