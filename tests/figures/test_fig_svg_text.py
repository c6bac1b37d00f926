"""figures/_svg.py: a label is set with the prose's quotes; code ("mono") is kept as written."""

from __future__ import annotations

from figures._svg import Svg


def test_labels_get_the_prose_quotes_and_code_keeps_its_own():
    svg = Svg(200, 60, title="t", desc="d")
    svg.text(0, 10, "the tile's trip", "note")
    svg.text(0, 30, "[2 entries: 'Ġ Ġ', 'ĠĠ ĠĠ']", "mono small")
    svg.text(0, 50, 'the "slow" one')
    out = svg.to_string()
    assert "the tile’s trip" in out and "the “slow” one" in out
    assert "[2 entries: 'Ġ Ġ', 'ĠĠ ĠĠ']" in out
