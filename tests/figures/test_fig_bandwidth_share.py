"""Figure 19 (bandwidth-share): published runs in grey, the laptop in blue, the median line."""

import re

from tests.support.toy_figs import NS, SVG_TAG, render, svg_root, texts


def test_fig19_numbers_median_and_laptop(tmp_path):
    """Figure 19: median of the published dense runs (67 % with this data, each run's bytes per token
    without its embedding table), laptop dense 32 % (16 GB a token), MoE 18 % (1.98 GB, its table's count)."""
    mod, inputs, html = render("bandwidth_share", tmp_path)
    assert mod.ID == "bandwidth-share" and mod.KIND == "P" and mod.RENDERER == "matplotlib"
    assert inputs["published_runs"] == len(inputs["published"]) == 218
    laptop = {p["label"]: p for p in inputs["laptop"]}
    assert round(laptop["dense"]["share"] * 100) == 32
    assert round(laptop["MoE"]["share"] * 100) == 18
    assert 0.66 < inputs["median_share"] < 0.70
    root = svg_root(html)
    assert root.find("svg:title", NS).text and root.find("svg:desc", NS).text
    assert abs(float(root.get("data-median-share")) - inputs["median_share"]) < 1e-5
    text = " ".join(texts(root))
    assert f"median {inputs['median_share'] * 100:.0f} %" in text
    assert "laptop, dense: 32 %" in text and "laptop, MoE: 18 %" in text
    assert "218" in mod.alt(inputs) and "128 GB/s" in mod.alt(inputs)


def test_fig19_draws_one_grey_point_per_published_run(tmp_path):
    _, inputs, html = render("bandwidth_share", tmp_path)
    root = svg_root(html)
    group = next(g for g in root.iter(f"{SVG_TAG}g") if g.get("id", "").endswith("points-published"))
    marks = [u for u in group.iter() if u.tag in (f"{SVG_TAG}use", f"{SVG_TAG}path") and u.get("x") is not None]
    assert len(marks) == inputs["published_runs"]
    assert re.search(r"var\(--fig-bus", html)  # the laptop in the page's blue


def test_fig19_prints_gigabytes_at_the_articles_precision(tmp_path):
    """Figure 19: the dense model's bytes per token as the article prints them (16 GB, whole), the
    MoE's as the article prints them (two decimals), never a padded 16.0."""
    _, inputs, html = render("bandwidth_share", tmp_path)
    text = " ".join(texts(svg_root(html)))
    laptop = {p["label"]: p for p in inputs["laptop"]}
    dense_gb, moe_gb = laptop["dense"]["bytes_per_token"] / 1e9, laptop["MoE"]["bytes_per_token"] / 1e9
    assert f"× {dense_gb:.0f} GB)" in text and f"{dense_gb:.1f} GB" not in text
    assert f"× {moe_gb:.2f} GB)" in text
