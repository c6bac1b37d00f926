"""Reviewed golden files (tests/golden/): one way to read them, one variable to rewrite them.

    TOKENWALK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q <the test>
    git diff tests/golden/

A missing golden file fails (it is never written silently): a fresh checkout that lacks one
has lost a reviewed snapshot, not gained a new one."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.paths import GOLDEN

UPDATE_VARIABLE = "TOKENWALK_UPDATE_GOLDEN"


def reviewed(name: str, got, **dump_options):
    """The reviewed value of tests/golden/`name` (JSON); with TOKENWALK_UPDATE_GOLDEN=1 it is
    first rewritten from `got`. A missing file fails with the command that writes it."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_VARIABLE) == "1":
        path.write_text(json.dumps(got, **dump_options) + "\n", encoding="utf-8")
    if not path.is_file():
        pytest.fail(f"tests/golden/{name} is missing: write it with {UPDATE_VARIABLE}=1 and review it")
    return json.loads(path.read_text(encoding="utf-8"))
