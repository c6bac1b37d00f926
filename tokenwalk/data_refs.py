"""Reading tokenwalk's data files: one JSON reader, and a data store that holds a data folder
and what has been read from it.

Every JSON file tokenwalk reads goes through `read_json` (a path) or a `DataStore` (a path
relative to its data folder, read once): presets, the timing fit, llama-bench runs,
measurements and calibrations. A problem is one line in one style, ``file: cause`` (the
spec readers add the field: ``file: field 'x': cause``).

A `DataStore` is passed to what reads data files, as gguf-py's reader is passed to what reads
a GGUF: `load_machine(name, store)`, `walk_request(model, machine, request, store)`. It holds
the folder (tokenwalk/data/ unless given another with the same layout: a test's copy, a
user's own presets), the files it has parsed, and the values it has derived from them (a
calibrated machine's solved coefficients, the llama-bench runs), so a new store reads and
solves afresh and an old one never has to be cleared. A caller that passes none gets the
default store (`default_store()`, tokenwalk/data/): the command line, the article and the
browser read through it. `use_store(store)` makes another the default inside a `with` block.
A caller with data of its own passes `root=` (the article layer reads article/data/ so).

A value in a data file may point to another data file instead of repeating a number: a
measurement lives in one place (for example measurements/laptop.json) and a file that
needs it writes ``{"from": "measurements/laptop.json", "key": "decode_tok_s_moe"}``;
`resolve` reads ``values[key]["value"]`` from that file.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

from tokenwalk.errors import TokenwalkError, check_regular_file

DEFAULT_ROOT = Path(__file__).resolve().parent / "data"


class DataStore:
    """A data folder (`root`, tokenwalk/data/ by default) and what has been read from it.

    Files are parsed once per store; values derived from them are kept with `remember`. A
    value it returns is shared by every caller of the store: build a new object from it,
    never change it.
    """

    def __init__(self, root=None):
        self.root = Path(root) if root is not None else DEFAULT_ROOT
        self._files: dict = {}
        self._derived: dict = {}

    def __repr__(self) -> str:
        return f"DataStore({os.fspath(self.root)!r})"

    def label(self, relative_path: str, root=None) -> str:
        """How errors name a data file: tokenwalk/data/<path> in the default folder, the
        path elsewhere (relative to the working folder where it lies below it)."""
        if root is None:
            return f"tokenwalk/data/{relative_path}" if self.root == DEFAULT_ROOT else os.fspath(self.root / relative_path)
        path = Path(root, relative_path)
        try:
            return os.fspath(path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return os.fspath(path)

    def read_json(self, relative_path: str, root=None):
        """A JSON file under the store's folder, or under the folder `root` where a caller
        passes its own (the article layer reads article/data/ this way; tokenwalk itself never
        does), parsed once."""
        parts = [p for p in relative_path.split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            raise TokenwalkError(f"{self.label(relative_path, root)}: not a path inside the data folder")
        key = (None if root is None else os.fspath(root), "/".join(parts))
        if key not in self._files:
            base = self.root if root is None else Path(root)
            self._files[key] = read_json(Path(base, *parts), self.label(key[1], root), missing="no such data file")
        return self._files[key]

    def file_names(self, folder: str) -> list[str]:
        """Names of the files in the folder's `folder` (sorted; [] when there is none)."""
        base = self.root / folder
        return sorted(entry.name for entry in base.iterdir() if entry.is_file()) if base.is_dir() else []

    def resolve(self, value, where: str = "data", root=None):
        """A plain value as is; a ``{"from": file, "key": name}`` reference as the value it
        names (``file`` relative to the folder, or to ``root``)."""
        if isinstance(value, dict) and "from" in value:
            file, key = value["from"], value.get("key")
            try:
                return self.read_json(file, root)["values"][key]["value"]
            except (KeyError, TypeError):
                raise TokenwalkError(f"{self.label(file, root)}: values.{key}.value: missing (referenced from {where})") from None
        if isinstance(value, dict) and "value" in value:
            return value["value"]
        return value

    def remember(self, key, compute):
        """The value derived from this store's files under `key` (hashable, naming every input
        that is not a file of the store), computed by `compute()` the first time."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    def forget(self) -> None:
        """Forget the files read and the values derived (after writing one, e.g. `tokenwalk fit`)."""
        self._files.clear()
        self._derived.clear()


_default = DataStore()


def default_store() -> DataStore:
    """The store of the callers that pass none (tokenwalk/data/ unless `use_store` says otherwise)."""
    return _default


def store_or_default(store: DataStore | None) -> DataStore:
    """`store`, or the default store when a caller passes none."""
    return store if store is not None else default_store()


@contextmanager
def use_store(store: DataStore):
    """Make `store` the default store inside the `with` block."""
    global _default
    previous, _default = _default, store
    try:
        yield store
    finally:
        _default = previous


def use_data_root(path):
    """Read data files from `path` instead of tokenwalk/data/ inside the `with` block (a new
    default store on that folder)."""
    return use_store(DataStore(path))


def data_root() -> Path:
    """The default store's data folder (tokenwalk/data/ unless substituted)."""
    return default_store().root


def data_label(relative_path: str) -> str:
    """How errors name a data file of the default store (`DataStore.label`)."""
    return default_store().label(relative_path)


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
    """A JSON file of the default store (`DataStore.read_json`)."""
    return default_store().read_json(relative_path, root)


def forget_cached() -> None:
    """Forget what the default store has read and derived (after writing a data file)."""
    default_store().forget()


def data_file_names(folder: str) -> list[str]:
    """Names of the files in the default store's `folder` (`DataStore.file_names`)."""
    return default_store().file_names(folder)


def resolve(value, where: str = "data", root=None):
    """A value of the default store, references followed (`DataStore.resolve`)."""
    return default_store().resolve(value, where, root)
