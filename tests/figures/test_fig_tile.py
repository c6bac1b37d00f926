"""Figure 12, tile: one 128 x 128 tile (32 KB) meets 1 token (32K operations) or 128 tokens (4M)."""

import pytest

from figures import tile
from tests.support.schematics_svg import check_alt_and_phone, check_labels, rects, rendered_once
from tokenwalk.physics.roofline import tile_ops

fig = rendered_once(tile)


def test_fig12_32k_vs_4m_operations(fig):
    n, _, root = fig
    assert n["tile_rows"] == 128 and n["prefill_tokens"] == 128
    assert n["tile_kb"] == 32
    assert n["ops_decode"] == tile_ops(1) == 32_768
    assert n["ops_prefill"] == tile_ops(128) == 4_194_304
    check_labels(root, ("32K operations", "4M operations", "32,768", "4,194,304", "128 × 128", "32 KB", "228 KB"))


def test_fig12_operation_bars_to_scale(fig):
    """The two bars are the operations at one scale (within 1 %): 128 times longer in prefill."""
    n, _, root = fig
    px_per_op = float(root.get("data-px-per-mop")) / 1e6
    bars = rects(root, part="ops-bar")
    assert [int(b.get("data-ops")) for b in bars] == [n["ops_decode"], n["ops_prefill"]]
    for bar in bars:
        assert float(bar.get("width")) == pytest.approx(int(bar.get("data-ops")) * px_per_op, rel=0.01)
    assert float(bars[1].get("width")) / float(bars[0].get("width")) == pytest.approx(128, rel=0.01)


def test_fig12_same_tile_in_both_rows(fig):
    _, _, root = fig
    tiles = rects(root, part="tile")
    assert len(tiles) == 2 and tiles[0].get("width") == tiles[1].get("width")


def test_fig12_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(tile, n, root, ("dense 7B in fp16", "H100", "decode", "prefill", "32,768", "4,194,304"))
