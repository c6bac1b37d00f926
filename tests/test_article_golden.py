"""A golden snapshot of the namespace `n` (tests/golden/numbers.json): every name and its
value, floats rounded to SIG significant digits. A change in a data file, a preset or a
formula shows up here as a diff to review.

Rewrite it on purpose, then read the diff:

    TOKENWALK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_article_golden.py
    git diff tests/golden/numbers.json
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from publish.changes import snapshot
from tests._content_helpers import default_numbers

GOLDEN = Path(__file__).resolve().parent / "golden" / "numbers.json"
# the snapshot is the one the build compares with the last publication (publish/changes.py)


def test_the_namespace_matches_its_golden_snapshot():
    got = json.loads(json.dumps(snapshot(default_numbers()), sort_keys=True))
    if os.environ.get("TOKENWALK_UPDATE_GOLDEN") == "1" or not GOLDEN.is_file():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    added, removed = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    changed = sorted(k for k in set(got) & set(want) if got[k] != want[k])
    assert not (added or removed or changed), (
        f"n differs from {GOLDEN.name}: added {added}, removed {removed}, changed "
        + ", ".join(f"{k}: {want[k]!r} -> {got[k]!r}" for k in changed[:10])
        + " (if intended: TOKENWALK_UPDATE_GOLDEN=1 pytest tests/test_article_golden.py, then review the diff)")
