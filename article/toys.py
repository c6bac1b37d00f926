"""Toy inputs of the drawings (hand-written scores, logits, a block of weights).

They live as JSON files in ``tokenwalk/data/toy/`` so that no drawing code carries a
literal number; each file says that it is a toy and where its numbers come from.
"""

from __future__ import annotations

from pathlib import Path

from tokenwalk.data_refs import read_json_file

TOY_DIR = Path(__file__).resolve().parent.parent / "tokenwalk" / "data" / "toy"


def load_toy(name: str) -> dict:
    """The toy data file ``data/toy/<name>.json`` as a dict."""
    path = TOY_DIR / f"{name}.json"
    return read_json_file(path, missing="no such toy data file in tokenwalk/data/toy")
