"""tokenwalk.format.seconds_after: the simulator's decode stage prints a range of step times
(first step -> last step) with both ends alike, so 86.9 ms -> 87.0 ms does not read as a drop in
precision (one value per quantity: the first end is the quantity's own string)."""

import pytest

from tokenwalk import format as fmt


@pytest.mark.parametrize("first, last, want", [
    (0.0869, 0.08702, "87.0 ms"),   # seconds() alone would print 87 ms
    (0.0869, 0.1234, "123.4 ms"),
    (4.21, 12.3, "12.30 s"),
    (0.0869, 1.5, "1.5 s"),         # another unit: printed on its own
    (150.0, 151.2, "151 s"),        # a first end with thousands grouping or no decimals: its own format
])
def test_the_last_end_is_printed_like_the_first(first, last, want):
    assert fmt.seconds_after(first, last) == want


def test_the_simulators_decode_range_keeps_the_decimals():
    from tokenwalk_app.view import _stage_detail

    stage = {"name": "decode", "tokens_per_step": 1, "steps": 300, "first_step_s": 0.0869, "last_step_s": 0.08702,
             "first_step_bytes": 2.0e9}
    assert "86.9 ms</span> → 87.0 ms a step" in _stage_detail(stage)
