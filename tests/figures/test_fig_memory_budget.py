"""Figure 22, memory-budget: the laptop's 64 GB for num_ctx 16,384 and 262,144, to scale."""

import pytest

from figures import memory_budget
from tests.support.hardware_svg import NS, check_common, rendered_once, texts

rendered = rendered_once(memory_budget)


def test_fig22_numbers(rendered):
    """32 GB + 21.7 GB + 336 MB -> about 9.8 GB free; + 5.4 GB -> about 4.8 GB; x4 = 21.5 GB.

    The exact sums give 9.9 and 4.9 GB; the article writes 9.8 and 4.8 (0.1 GB lower).
    """
    n, _ = rendered
    small, large = n["bars"]
    assert (small["num_ctx"], large["num_ctx"]) == (16_384, 262_144)
    assert round(small["system_bytes"] / 1e9) == 32
    assert round(small["weights_bytes"] / 1e9, 1) == 21.7
    assert round(small["kv_cache_bytes"] / 1e6) == 336
    assert round(large["kv_cache_bytes"] / 1e9, 1) == 5.4
    assert small["free_bytes"] / 1e9 == pytest.approx(9.8, abs=0.15)
    assert large["free_bytes"] / 1e9 == pytest.approx(4.8, abs=0.15)
    assert round(n["kv_all_layers_bytes"] / 1e9, 1) == 21.5
    assert round(n["total_bytes"] / 1e9) == 64


def test_fig22_bars_to_scale(rendered):
    """Each part's width is its bytes at one scale (within 1 %); each bar spans the whole 64 GB."""
    n, svg = rendered
    root = check_common(svg, memory_budget.ID)
    px_per_byte = float(root.get("data-px-per-gb")) / 1e9
    bars = root.findall(".//svg:g[@class='bar']", NS)
    assert len(bars) == 2
    for group, bar in zip(bars, n["bars"], strict=False):
        parts = {r.get("data-part"): r for r in group.findall("svg:rect", NS)}
        expected = {"system": bar["system_bytes"], "weights": bar["weights_bytes"],
                    "kv_cache": bar["kv_cache_bytes"], "free": bar["free_bytes"]}
        for name, n_bytes in expected.items():
            assert float(parts[name].get("width")) == pytest.approx(n_bytes * px_per_byte, rel=0.01), name
        total = sum(float(parts[name].get("width")) for name in expected)
        assert total == pytest.approx(n["total_bytes"] * px_per_byte, rel=0.01)
        assert int(group.get("data-num-ctx")) == bar["num_ctx"]


def test_fig22_labels(rendered):
    _, svg = rendered
    words = " ".join(texts(check_common(svg, memory_budget.ID)))
    for label in ("num_ctx = 16,384", "num_ctx = 262,144", "KV 336 MB", "KV 5.37 GB", "21.7 GB", "32 GB", "free 9.95 GB", "free 4.91 GB"):
        assert label in words
