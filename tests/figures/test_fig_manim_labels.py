"""Figures 4 residual-layer, 7 decode-head and 8 kv-cache stay readable on a phone: no label
of a Manim still is set below `_manim.MIN_LABEL_PX`, which is about 11 px once the still is
shown in a 390 px phone's 358 px column."""

from __future__ import annotations

import importlib

import pytest

from figures import _manim

PHONE_COLUMN_PX = 358  # a 390 px phone's article column
MODULES = ["residual_layer", "decode_head", "kv_cache"]


@pytest.mark.parametrize("name", MODULES)
def test_smallest_label_is_about_11_px_on_a_phone(name):
    m = importlib.import_module(f"figures.{name}")
    shown_px = _manim.MIN_LABEL_PX * PHONE_COLUMN_PX / m.CANVAS.width_px
    assert shown_px >= 11.0, f"{m.ID}: smallest label shows at {shown_px:.1f} px on a phone"


def test_text_below_the_minimum_is_refused():
    with pytest.raises(ValueError, match="below MIN_LABEL_PX"):
        _manim.text("tiny", _manim.MIN_LABEL_PX - 1, "#000000")
