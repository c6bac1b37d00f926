"""Tests that change a data file without touching it: a new data store
(`tokenwalk.data_refs.DataStore`) reads one file as a changed copy and becomes the default
store for the test, so tokenwalk and the article layer read, solve and derive everything
afresh from it, and the store the test replaced, with what it had read, comes back after.
The file is named relative to tokenwalk/data/ or, with `article=True`, to article/data/
(the article reads its own data through the same store)."""

from __future__ import annotations

import copy
from pathlib import Path

from tokenwalk import data_refs
from tokenwalk.errors import TokenwalkError


class ChangedStore(data_refs.DataStore):
    """The data folder with the file `relative_path` (under `root`, the store's own folder if
    None) read as `change(deep copy)`; `change` returning None makes the file missing."""

    def __init__(self, relative_path: str, change, root=None):
        super().__init__()
        self.changed_path, self.change, self.changed_root = relative_path, change, root

    def read_json(self, relative_path: str, root=None):
        data = super().read_json(relative_path, root)
        if relative_path == self.changed_path and (root is None) == (self.changed_root is None) and \
                (root is None or Path(root) == Path(self.changed_root)):
            data = self.change(copy.deepcopy(data))
            if data is None:
                raise TokenwalkError(f"tokenwalk/data/{relative_path}: cannot read (no such file)")
        return data


def substitute_data_file(monkeypatch, relative_path: str, change, article: bool = False) -> ChangedStore:
    """Make a store that reads data file `relative_path` (under tokenwalk/data/, or
    article/data/ with `article`) as `change(deep copy)` the default store until
    monkeypatch.undo(); `change` returning None makes the file missing."""
    root = None
    if article:
        from article._data import DATA as root

    store = ChangedStore(relative_path, change, root)
    monkeypatch.setattr(data_refs, "default_store", lambda: store)
    return store
