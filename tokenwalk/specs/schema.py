"""Reading the JSON spec files (models, machines): one object, typed fields, a source for each.

Shared by `model_spec` and `machine_spec`. Every problem is a SpecError of one line that
names the file and the field.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any

from tokenwalk.errors import SpecError

# Field kinds: "int" (a whole number; 4096 or 4096.0), "number", "str", "dict".
_KINDS = {"int": "a whole number", "number": "a number", "str": "a string", "dict": "an object",
          "list": "a list"}


def read_json_object(path, label: str | None = None) -> dict:
    """The JSON object in the file at `path`; SpecError if missing, unreadable or not an object."""
    label = label or os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as error:
        raise SpecError(f"{label}: cannot open: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{label}: not a UTF-8 text file (a JSON spec was expected)") from None
    return parse_json_object(text, label)


def parse_json_object(text: str, label: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SpecError(f"{label}: line {error.lineno} column {error.colno}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise SpecError(f"{label}: JSON nested too deeply to be a spec") from None
    except ValueError as error:  # an integer of more than 4,300 digits
        raise SpecError(f"{label}: not a usable JSON spec ({error})") from None
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
    expected = {"str": str, "dict": dict, "list": list}[kind]
    if not isinstance(value, expected):
        raise bad
    return value


def preset_names(folder: str) -> list[str]:
    """Names of the JSON presets in tokenwalk/data/<folder>/ (file names without .json)."""
    base = resources.files("tokenwalk") / "data" / folder
    names = []
    for entry in base.iterdir():
        if entry.name.endswith(".json") and not entry.name.startswith("_"):
            names.append(entry.name[:-5])
    return sorted(names)


def read_preset(folder: str, name: str) -> tuple[dict, str]:
    """(object, label) of the preset tokenwalk/data/<folder>/<name>.json."""
    entry = resources.files("tokenwalk") / "data" / folder / f"{name}.json"
    label = f"tokenwalk/data/{folder}/{name}.json"
    try:
        text = entry.read_text(encoding="utf-8")
    except (OSError, FileNotFoundError) as error:
        raise SpecError(f"{label}: cannot open: {error}") from None
    return parse_json_object(text, label), label
