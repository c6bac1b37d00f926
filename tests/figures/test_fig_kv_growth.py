"""Figure 21, kv-growth: 0.5 MB per token; 0 ... 32,000 tokens -> 239, 219, 184, 150, 109 tok/s, bars to scale."""

import pytest

from figures import kv_growth
from tests.support.hardware_svg import NS, check_common, rendered_once, texts

rendered = rendered_once(kv_growth)


def test_fig21_numbers(rendered):
    n, _ = rendered
    assert [r["context_tokens"] for r in n["rows"]] == [0, 2500, 8000, 16_000, 32_000]
    assert [round(r["tok_s"]) for r in n["rows"]] == [239, 219, 184, 150, 109]
    assert round(n["kv_bytes_per_token"] / 2**20, 1) == 0.5
    assert round(n["weights_bytes"] / 1e9) == 14


def test_fig21_bars_to_scale(rendered):
    """Every bar's width is its bytes at one scale (within 1 %), and each row shows its speed."""
    n, svg = rendered
    root = check_common(svg, kv_growth.ID)
    px_per_byte = float(root.get("data-px-per-gb")) / 1e9
    rows = root.findall(".//svg:g[@class='row']", NS)
    assert len(rows) == len(n["rows"])
    for group, row in zip(rows, n["rows"], strict=False):
        rects = {r.get("data-part"): r for r in group.findall("svg:rect", NS)}
        assert float(rects["weights"].get("width")) == pytest.approx(n["weights_bytes"] * px_per_byte, rel=0.01)
        if row["kv_bytes"]:
            assert float(rects["kv"].get("width")) == pytest.approx(row["kv_bytes"] * px_per_byte, rel=0.01)
            # the cache starts where the weights end
            assert float(rects["kv"].get("x")) == pytest.approx(
                float(rects["weights"].get("x")) + float(rects["weights"].get("width")), abs=0.05)
        assert f"{row['tok_s']:.0f}" in texts(group)
    longest = rows[-1].findall("svg:rect", NS)
    assert float(longest[1].get("width")) > float(longest[0].get("width"))  # 16.8 GB of cache > 14 GB of weights


def test_fig21_labels(rendered):
    _, svg = rendered
    words = " ".join(texts(check_common(svg, kv_growth.ID)))
    for label in ("14 + 1.3 GB", "14 + 4.2 GB", "14 + 8.4 GB", "14 + 16.8 GB", "0.5 MB per token"):
        assert label in words
