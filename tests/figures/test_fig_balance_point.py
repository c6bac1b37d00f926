"""Figure 16, balance-point: 4.2 ms flat, 0.014 ms per token, crossing at 295, 74 in 4 bits."""

import pytest

from figures import balance_point
from tests.support.hardware_svg import NS, check_common, rendered_once, texts

rendered = rendered_once(balance_point)


def test_fig16_inputs_from_tokenwalk(rendered):
    n, _ = rendered
    assert round(n["memory_ms"], 1) == 4.2
    assert round(n["compute_ms_per_token"], 3) == 0.014
    assert int(n["balance_tokens"]) == 295
    assert round(n["balance_tokens_4bit"]) == 74
    assert n["tokens_max"] == 600


def test_fig16_svg_is_themed_and_labelled(rendered):
    n, svg = rendered
    root = check_common(svg, balance_point.ID)
    words = " ".join(texts(root))
    for label in ("≈ 295 tokens", "4.2 ms", "0.014 ms per token", "≈ 74", "tokens in the step"):
        assert label in words
    assert "var(--fig-bus" in svg and "var(--fig-compute" in svg
    assert "4.2 ms" in balance_point.alt(n) and "295" in balance_point.alt(n)


def test_fig16_the_thick_line_turns_at_the_balance_point(rendered):
    """Read the step line back: its corner sits at 295 tokens on the 0-600 axis (within 1 %)."""
    n, svg = rendered
    root = check_common(svg, balance_point.ID)
    (x0, y0), (xc, yc), (x1, y1) = _points(root, "line-step")
    assert yc == pytest.approx(y0)  # flat to the corner
    tokens_at_corner = (xc - x0) / (x1 - x0) * n["tokens_max"]
    assert tokens_at_corner == pytest.approx(n["balance_tokens"], rel=0.01)
    # heights to scale: the compute line starts at 0 ms, so 4.2 ms / 8.5 ms at 600 tokens
    (_, y_zero), _ = _points(root, "line-compute")
    memory_over_end = (y_zero - y0) / (y_zero - y1)
    assert memory_over_end == pytest.approx(n["memory_ms"] / (n["compute_ms_per_token"] * n["tokens_max"]), rel=0.01)
    assert float(root.get("data-balance-tokens")) == pytest.approx(n["balance_tokens"])


def _points(root, gid):
    group = root.find(f".//svg:g[@id='balance-point-{gid}']", NS)
    numbers = [float(v) for v in group.find("svg:path", NS).get("d").replace("M", " ").replace("L", " ").split()]
    return list(zip(numbers[::2], numbers[1::2], strict=False))
