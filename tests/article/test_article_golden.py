"""A golden snapshot of the namespace `n` (tests/golden/numbers.json): every name and its
value, floats rounded to SIG significant digits. A change in a data file, a preset or a
formula shows up here as a diff to review.

Rewrite it on purpose, then read the diff:

    TOKENWALK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/article/test_article_golden.py
    git diff tests/golden/numbers.json
"""

from __future__ import annotations

import json

from publish.changes import snapshot
from tests.support.content import default_numbers
from tests.support.golden import reviewed

GOLDEN = "numbers.json"
# the snapshot is the one the build compares with the last publication (publish/changes.py)


def test_the_namespace_matches_its_golden_snapshot():
    got = json.loads(json.dumps(snapshot(default_numbers()), sort_keys=True))
    want = reviewed(GOLDEN, got, indent=1, sort_keys=True, ensure_ascii=False)
    added, removed = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    changed = sorted(k for k in set(got) & set(want) if got[k] != want[k])
    assert not (added or removed or changed), (
        f"n differs from {GOLDEN}: added {added}, removed {removed}, changed "
        + ", ".join(f"{k}: {want[k]!r} -> {got[k]!r}" for k in changed[:10])
        + " (if intended: TOKENWALK_UPDATE_GOLDEN=1 pytest tests/article/test_article_golden.py, then review the diff)")


def test_a_missing_golden_file_fails_rather_than_being_written(monkeypatch):
    import pytest

    monkeypatch.delenv("TOKENWALK_UPDATE_GOLDEN", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"tests/golden/absent\.json is missing: write it with "
                                                     r"TOKENWALK_UPDATE_GOLDEN=1"):
        reviewed("absent.json", {"a": 1})
    from tests.support.paths import GOLDEN as folder

    assert not (folder / "absent.json").exists()
