"""Tests that change a data file without touching it: `tokenwalk.data_refs.read_data_json`
is patched so one file reads as a changed copy, and the cached reads of tokenwalk and of
the article layer are forgotten. The file is named relative to tokenwalk/data/ or, with
`article=True`, to article/data/ (the article reads its own data through the same reader)."""

from __future__ import annotations

import copy
import functools
import sys
from pathlib import Path

from tokenwalk import data_refs
from tokenwalk.errors import TokenwalkError


def clear_tokenwalk_caches() -> None:
    """Forget cached data files so a substituted file is read (not the tokenizer, which no
    data file feeds and which is slow to rebuild)."""
    keep = {"_tokenizer", "_request_tokens"}
    for name, module in list(sys.modules.items()):
        if not name.startswith(("tokenwalk", "article")):
            continue
        for attr, value in list(vars(module).items()):
            if attr not in keep and isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()


def substitute_data_file(monkeypatch, relative_path: str, change, article: bool = False) -> None:
    """Read data file `relative_path` (under tokenwalk/data/) as `change(deep copy)`;
    `change` returning None makes the file missing. Undo with monkeypatch.undo() and
    clear_tokenwalk_caches()."""
    original = data_refs.read_data_json
    want_root = None
    if article:
        from article._data import DATA as want_root

    def substituted(path: str, root=None) -> dict:
        data = original(path, root)
        if path == relative_path and (root is None) == (want_root is None) and \
                (root is None or Path(root) == Path(want_root)):
            data = change(copy.deepcopy(data))
            if data is None:
                raise TokenwalkError(f"tokenwalk/data/{relative_path}: cannot read (no such file)")
        return data

    monkeypatch.setattr(data_refs, "read_data_json", substituted)
    clear_tokenwalk_caches()
