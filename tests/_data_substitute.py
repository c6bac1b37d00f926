"""Tests that change a data file without touching it: `tokenwalk.data_refs.read_data_json`
is patched so one file reads as a changed copy, and tokenwalk's cached reads are forgotten."""

from __future__ import annotations

import copy
import functools
import sys

from tokenwalk import data_refs
from tokenwalk.errors import TokenwalkError


def clear_tokenwalk_caches() -> None:
    """Forget cached data files so a substituted file is read (not the tokenizer, which no
    data file feeds and which is slow to rebuild)."""
    keep = {"_tokenizer", "_request_tokens"}
    for name, module in list(sys.modules.items()):
        if not name.startswith("tokenwalk"):
            continue
        for attr, value in list(vars(module).items()):
            if attr not in keep and isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()


def substitute_data_file(monkeypatch, relative_path: str, change) -> None:
    """Read data file `relative_path` (under tokenwalk/data/) as `change(deep copy)`;
    `change` returning None makes the file missing. Undo with monkeypatch.undo() and
    clear_tokenwalk_caches()."""
    original = data_refs.read_data_json

    def substituted(path: str) -> dict:
        data = original(path)
        if path == relative_path:
            data = change(copy.deepcopy(data))
            if data is None:
                raise TokenwalkError(f"tokenwalk/data/{relative_path}: cannot read (no such file)")
        return data

    monkeypatch.setattr(data_refs, "read_data_json", substituted)
    clear_tokenwalk_caches()
