"""Reading tokenwalk's data files: one JSON reader, one data folder that a caller can replace.

Every JSON file tokenwalk reads goes through `read_json` (a path) or `read_data_json` (a
path relative to the data folder, cached): presets, the timing fit, llama-bench runs,
measurements and calibrations. A problem is one line in one style, ``file: cause`` (the
spec readers add the field: ``file: field 'x': cause``).

The data folder is tokenwalk/data/ unless a caller substitutes another with
`use_data_root(path)` (a test's copy, a user's own presets); it holds the same layout. A
caller with data of its own passes `root=` (the article layer reads article/data/ so).

A value in a data file may point to another data file instead of repeating a number: a
measurement lives in one place (for example measurements/laptop.json) and a file that
needs it writes ``{"from": "measurements/laptop.json", "key": "decode_tok_s_moe"}``;
`resolve` reads ``values[key]["value"]`` from that file.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from tokenwalk.errors import TokenwalkError, check_regular_file

DEFAULT_ROOT = Path(__file__).resolve().parent / "data"
_root: Path = DEFAULT_ROOT


def data_root() -> Path:
    """The data folder files are read from (tokenwalk/data/ unless substituted)."""
    return _root


@contextmanager
def use_data_root(path):
    """Read data files from `path` instead of tokenwalk/data/ inside the `with` block."""
    global _root
    previous, _root = _root, Path(path)
    _cached.cache_clear()
    try:
        yield _root
    finally:
        _root = previous
        _cached.cache_clear()


def data_label(relative_path: str) -> str:
    """How errors name a data file: tokenwalk/data/<path>, or the substituted folder's path."""
    return f"tokenwalk/data/{relative_path}" if _root == DEFAULT_ROOT else os.fspath(_root / relative_path)


def read_json(path, label: str | None = None, *, missing: str = "file not found", error=TokenwalkError):
    """The JSON value in the file at `path`, parsed. A missing file, an unreadable one or bad
    JSON raises `error` (a TokenwalkError class) as one line naming `label` (default: the
    path): ``label: <missing>``, ``label: cannot open: ...``, ``label: line L column C: not
    valid JSON (...)``."""
    label = label or os.fspath(path)
    check_regular_file(path, error)  # a FIFO would block open() for ever
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise error(f"{label}: {missing}") from None
    except OSError as exc:
        raise error(f"{label}: cannot open: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise error(f"{label}: not a UTF-8 text file (JSON was expected)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{label}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise error(f"{label}: JSON nested too deeply") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise error(f"{label}: not usable JSON ({exc})") from None


def read_json_file(path, *, missing: str = "file not found", error=TokenwalkError):
    """`read_json` with the file's name as its label (kept for callers outside the core)."""
    return read_json(path, getattr(path, "name", None) or os.fspath(path), missing=missing, error=error)


def read_data_json(relative_path: str, root=None):
    """A JSON file under the data folder (`data_root()`), or under the folder `root` where a
    caller passes its own (the article layer reads article/data/ this way; tokenwalk itself
    never does), parsed and cached. Do not change the value returned: it is shared by every
    caller."""
    parts = [p for p in relative_path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise TokenwalkError(f"{_label(relative_path, root)}: not a path inside the data folder")
    return _cached(os.fspath(_root if root is None else root), "/".join(parts), root is None)


def _label(relative_path: str, root=None) -> str:
    if root is None:
        return data_label(relative_path)
    path = Path(root, relative_path)
    try:
        return os.fspath(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return os.fspath(path)


@lru_cache(maxsize=64)
def _cached(root: str, relative_path: str, own: bool):
    label = _label(relative_path, None if own else root)
    return read_json(Path(root, *relative_path.split("/")), label, missing="no such data file")


def forget_cached() -> None:
    """Forget the cached data files (after writing one, e.g. `tokenwalk fit`)."""
    _cached.cache_clear()


def data_file_names(folder: str) -> list[str]:
    """Names of the files in the data folder's `folder` (sorted; [] when there is none)."""
    base = _root / folder
    return sorted(entry.name for entry in base.iterdir() if entry.is_file()) if base.is_dir() else []


def resolve(value, where: str = "data", root=None):
    """A plain value as is; a ``{"from": file, "key": name}`` reference as the value it
    names (``file`` relative to the data folder, or to ``root``)."""
    if isinstance(value, dict) and "from" in value:
        file, key = value["from"], value.get("key")
        try:
            return read_data_json(file, root)["values"][key]["value"]
        except (KeyError, TypeError):
            raise TokenwalkError(f"{_label(file, root)}: values.{key}.value: missing (referenced from {where})") from None
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value
