"""Values in data files that point to another data file instead of repeating a number.

A measurement lives in one place (for example data/measurements/laptop.json); a file that
needs it writes ``{"from": "measurements/laptop.json", "key": "decode_tok_s_moe"}`` and
`resolve` reads ``values[key]["value"]`` from that file. Paths are relative to
tokenwalk/data/.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from tokenwalk.errors import TokenwalkError


def read_json_file(path, *, missing: str = "file not found", error=TokenwalkError):
    """A JSON file at `path`, parsed; a missing file or bad JSON raises `error` with one
    line naming the file (and the line of the JSON error). `missing` says what to do."""
    name = getattr(path, "name", str(path))
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise error(f"{name}: {missing}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{name}: not valid JSON at line {exc.lineno}: {exc.msg}") from None


@lru_cache(maxsize=16)
def read_data_json(relative_path: str) -> dict:
    """A JSON file under tokenwalk/data/, parsed (cached)."""
    parts = [p for p in relative_path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise TokenwalkError(f"tokenwalk/data/{relative_path}: not a path inside the data folder")
    path = resources.files("tokenwalk").joinpath("data", *parts)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TokenwalkError(f"tokenwalk/data/{relative_path}: cannot read ({error})") from None


def resolve(value, where: str = "data"):
    """A plain value as is; a ``{"from": file, "key": name}`` reference as the value it names."""
    if isinstance(value, dict) and "from" in value:
        file, key = value["from"], value.get("key")
        try:
            return read_data_json(file)["values"][key]["value"]
        except (KeyError, TypeError):
            raise TokenwalkError(f"tokenwalk/data/{file}: values.{key}.value: missing (referenced from {where})") from None
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value
