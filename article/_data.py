"""The article's own data files (article/data/: cited facts, toy inputs, the scenario
sizes), read with tokenwalk's JSON reader given this folder as its root, so one reader
serves tokenwalk's data and the article's, and a test substitutes either the same way
(tests/support/data_substitute.py)."""

from __future__ import annotations

from pathlib import Path

from tokenwalk import data_refs
from tokenwalk.errors import TokenwalkError

DATA = Path(__file__).resolve().parent / "data"
ROOT = DATA.parent.parent  # the repository: request.json names its tokenizer file from here


def read(relative_path: str) -> dict:
    """article/data/<relative_path>, parsed (cached by data_refs)."""
    return data_refs.read_data_json(relative_path, DATA)


def values(relative_path: str, section: str = "values", root=DATA) -> dict:
    """name -> value of a `values`-style table (each entry {"value": ..., "source": ...})."""
    data = data_refs.read_data_json(relative_path, root)
    try:
        return {k: v["value"] for k, v in data[section].items()}
    except (KeyError, TypeError):
        where = "tokenwalk/data" if root is None else "article/data"
        raise TokenwalkError(f"{where}/{relative_path}: {section}: each entry needs a 'value'") from None


def resolve(value, where: str):
    """A value of an article data file, a ``{"from": ..., "key": ...}`` reference to one of
    tokenwalk's data files (measurements, presets) resolved."""
    return data_refs.resolve(value, where)
