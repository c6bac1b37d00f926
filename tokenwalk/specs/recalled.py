"""Values written from memory, and the notes a walk prints when it uses one.

A data entry (a machine or model preset, a machine or run of the llama-bench data) lists in
`recalled` the names of its own fields whose values no opened page confirmed: they were
written from a vendor's specifications as remembered. Every other value cites a source that
was opened. A walk that reads a recalled value says so, one note per field
("bandwidth 576 GB/s: recalled, no source opened"), so a reader knows which input to check.

Standard library only: the simulator runs this in the browser.
"""

from __future__ import annotations

from tokenwalk import format as fmt
from tokenwalk.errors import SpecError

RECALLED = "recalled"

# The machine fields a walk reads: the roofline's peaks, the memory check, the load, and what
# picks the fit's row. The others (compute units, caches, clock) draw figures, not the walk.
WALK_MACHINE_FIELDS = ("bandwidth_gbs", "fp16_tflops", "memory_gb", "disk_gbs", "system_and_apps_bytes",
                       "backend", "vendor", "device_class", "memory_type", "architecture_year", "unified_memory")

# How a note names a field and prints its value.
_LABELS = {
    "bandwidth_gbs": ("bandwidth", fmt.bandwidth),
    "fp16_tflops": ("FP16 peak", lambda v: f"{fmt.significant(v)}{fmt.NBSP}TFLOP/s"),
    "memory_gb": ("memory", lambda v: f"{fmt.significant(v)}{fmt.NBSP}GB"),
    "disk_gbs": ("disk", fmt.bandwidth),
    "memory_type": ("memory type", str),
    "architecture_year": ("architecture year", str),
}


def check_recalled(data: dict, label: str) -> tuple[str, ...]:
    """The field names `data`'s `recalled` lists (empty when it has none). SpecError naming
    `label` when it is not a list of names, or names a field `data` does not have."""
    names = data.get(RECALLED)
    if names is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise SpecError(f"{label}: field '{RECALLED}' must be a list of field names, not {names!r}")
    for name in names:
        if name == RECALLED or name not in data:
            raise SpecError(f"{label}: field '{RECALLED}' names {name!r}, which is not a field of this entry")
    return tuple(names)


def recalled_note(name: str, value) -> str:
    """One note: the field as a reader knows it, its value, and that it was recalled."""
    label, shown = _LABELS.get(name, (name.replace("_", " "), str))
    text = label if value is None else f"{label} {shown(value)}"
    return f"{text}: recalled, no source opened"


def walk_notes(model_recalled: dict, machine_recalled: dict) -> tuple[str, ...]:
    """The notes of a walk: every recalled field of the model (each feeds its byte and
    operation counts) and the recalled machine fields the walk reads (WALK_MACHINE_FIELDS).
    Each argument maps a recalled field's name to its value (None where the spec keeps no
    value of its own, as a tensor table it has counted)."""
    notes = [f"model: {recalled_note(name, value)}" for name, value in model_recalled.items()]
    notes += [f"machine: {recalled_note(name, value)}" for name, value in machine_recalled.items()
              if name in WALK_MACHINE_FIELDS]
    return tuple(notes)
