"""Toy inputs of the drawings (hand-written scores, logits, a block of weights).

They live as JSON files in ``tokenwalk/data/toy/`` so that no drawing code carries a
literal number; each file says that it is a toy and where its numbers come from.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenwalk.errors import TokenwalkError

TOY_DIR = Path(__file__).parent / "data" / "toy"


def load_toy(name: str) -> dict:
    """The toy data file ``data/toy/<name>.json`` as a dict."""
    path = TOY_DIR / f"{name}.json"
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise TokenwalkError(f"{path.name}: no such toy data file in tokenwalk/data/toy") from None
    except json.JSONDecodeError as e:
        raise TokenwalkError(f"{path.name}: line {e.lineno}: not valid JSON ({e.msg})") from None
