"""Reading the JSON spec files (models, machines): one object, typed fields, a source for each.

Shared by `model_spec` and `machine_spec`. Every problem is a SpecError of one line that
names the file and the field.
"""

from __future__ import annotations

import os
from typing import Any

from tokenwalk import data_refs
from tokenwalk.errors import SpecError, TokenwalkError

# Field kinds: "int" (a whole number; 4096 or 4096.0), "number", "str", "dict", "list", "bool".
_KINDS = {"int": "a whole number", "number": "a number", "str": "a string", "dict": "an object",
          "list": "a list", "bool": "true or false"}


def read_json_object(path, label: str | None = None) -> dict:
    """The JSON object in the file at `path` (`data_refs.read_json`); SpecError if missing,
    unreadable or not an object."""
    label = label or os.fspath(path)
    return _object(data_refs.read_json(path, label, missing="cannot open: no such file", error=SpecError), label)


def _object(data, label: str) -> dict:
    if not isinstance(data, dict):
        raise SpecError(f"{label}: expected a JSON object {{...}}, found {type(data).__name__}")
    return data


def check_fields(data: dict, label: str, required: dict[str, str], optional: dict[str, str]) -> dict[str, Any]:
    """The fields of `data` that the schema knows, each checked against its kind.

    A required field that is missing or null, or any field of the wrong kind, is a
    SpecError naming the file and the field. Unknown fields are ignored (comments,
    notes). Whole numbers given as 4096.0 become int.
    """
    out: dict[str, Any] = {}
    for name, kind in required.items():
        if data.get(name) is None:
            raise SpecError(f"{label}: missing field '{name}' ({_KINDS[kind]})")
    for name, kind in {**required, **optional}.items():
        if data.get(name) is None:
            continue
        out[name] = _check_kind(data[name], kind, label, name)
    return out


def _check_kind(value, kind: str, label: str, name: str):
    bad = SpecError(f"{label}: field '{name}' must be {_KINDS[kind]}, not {value!r}")
    if kind in ("int", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        if isinstance(value, int) and value.bit_length() > 1023:  # past any float (1.8e308)
            raise SpecError(f"{label}: field '{name}' must be a finite number >= 0, not an integer of "
                            f"{int(value.bit_length() * 0.30103) + 1} digits")
        if value != value or value in (float("inf"), float("-inf")) or value < 0:
            raise SpecError(f"{label}: field '{name}' must be a finite number >= 0, not {value!r}")
        if kind == "int":
            if float(value) != int(value):
                raise bad
            return int(value)
        return value
    expected = {"str": str, "dict": dict, "list": list, "bool": bool}[kind]
    if not isinstance(value, expected):
        raise bad
    return value


def preset_names(folder: str) -> list[str]:
    """Names of the JSON presets in the data folder's <folder>/ (file names without .json;
    a name starting with '_' is a helper file, not a preset)."""
    return [name[:-5] for name in data_refs.data_file_names(folder)
            if name.endswith(".json") and not name.startswith("_")]


def read_preset(folder: str, name: str) -> tuple[dict, str]:
    """(object, label) of the preset <folder>/<name>.json in the data folder, read through
    `data_refs.read_data_json` (cached: build a new object from it, never change it)."""
    relative = f"{folder}/{name}.json"
    label = data_refs.data_label(relative)
    try:
        data = data_refs.read_data_json(relative)
    except SpecError:
        raise
    except TokenwalkError as error:
        raise SpecError(str(error)) from None
    return _object(data, label), label
