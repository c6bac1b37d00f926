"""A golden snapshot of the namespace `n` (tests/golden/numbers.json): every name and its
value, floats rounded to SIG significant digits. A change in a data file, a preset or a
formula shows up here as a diff to review.

Rewrite it on purpose, then read the diff:

    TOKENWALK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_article_golden.py
    git diff tests/golden/numbers.json
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from tests._content_helpers import default_numbers

GOLDEN = Path(__file__).resolve().parent / "golden" / "numbers.json"
SIG = 6  # significant digits kept of a float
# Names whose value depends on the machine that built the page (`tokenwalk measure`),
# or is long text the chapters test elsewhere: kept out of the snapshot.
SKIP_PREFIXES = ("engine",)
SKIP = {"chat_template_full_text", "chat_template_text", "qwen_gguf_metadata", "qwen_gguf_tensors"}


def _rounded(value):
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0:
            return value
        return float(f"{value:.{SIG}g}")
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def snapshot(n: dict) -> dict:
    return {k: _rounded(v) for k, v in sorted(n.items())
            if k not in SKIP and not k.startswith(SKIP_PREFIXES)}


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
