"""Values in data files that point to another data file instead of repeating a number.

A measurement lives in one place (for example data/measurements/laptop.json); a file that
needs it writes ``{"from": "measurements/laptop.json", "key": "decode_tok_s_moe"}`` and
`resolve` reads ``values[key]["value"]`` from that file. Paths are relative to
tokenwalk/data/, or to ``root`` where a caller passes its own data folder (the article
layer reads article/data/ this way; tokenwalk itself never passes one).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

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


def _shown_root(root) -> str:
    return "tokenwalk/data" if root is None else str(root).rstrip("/")


@lru_cache(maxsize=32)
def read_data_json(relative_path: str, root=None) -> dict:
    """A JSON file under tokenwalk/data/ (or under the folder ``root``), parsed (cached)."""
    parts = [p for p in relative_path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise TokenwalkError(f"{_shown_root(root)}/{relative_path}: not a path inside the data folder")
    base = resources.files("tokenwalk").joinpath("data") if root is None else Path(root)
    path = base.joinpath(*parts)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TokenwalkError(f"{_shown_root(root)}/{relative_path}: cannot read ({error})") from None


def resolve(value, where: str = "data", root=None):
    """A plain value as is; a ``{"from": file, "key": name}`` reference as the value it
    names (``file`` relative to tokenwalk/data/, or to ``root``)."""
    if isinstance(value, dict) and "from" in value:
        file, key = value["from"], value.get("key")
        try:
            return read_data_json(file, root)["values"][key]["value"]
        except (KeyError, TypeError):
            raise TokenwalkError(f"{_shown_root(root)}/{file}: values.{key}.value: missing "
                                 f"(referenced from {where})") from None
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value
