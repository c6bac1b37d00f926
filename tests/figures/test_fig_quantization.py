"""Figure 10 (quantization, static rendering at 4 bits)."""

import html
import json
import re

from tests.support.toy_figs import SVG_TAG, check_contract, check_nested_wide_scrolls, check_says_it_needs_javascript, render, texts


def test_fig10_quantization_renders_with_its_numbers(tmp_path):
    """Figure 10: integers −8 … 7 + fp16 scale = 4.5 bits; ≈ 3 % at 4 bits, ≈ 12 % at 2 bits; Q8_0 8.5."""
    mod, inputs, out = render("quantization", tmp_path)
    root = check_contract(mod, inputs, out)
    text = " ".join(texts(root))
    for needle in ("−8", "4.5", "3 %", "12 %", "Q8_0 8.5", "Q4_K 4.5", "Q6_K 6.5625", "fp16"):
        assert needle in text, needle
    q = inputs["blocks"]["4"]
    # all 32 weights, levels, read-back values and errors are in the table
    table = [t.text for g in root.iter(f"{SVG_TAG}g") if g.get("class") == "quant-table"
             for t in g.iter(f"{SVG_TAG}text")]
    for w, lv in zip(q["weights"], q["levels"], strict=False):
        assert mod.fmt_w(w) in table and str(lv).replace("-", "−") in table
    assert len(table) == 2 * 5 + 32 * 5


def test_fig10_levels_are_to_scale(tmp_path):
    """Figure 10: the chart's level lines are evenly spaced, one per integer −8 … 7, and each
    read-back mark sits on its level's line."""
    mod, inputs, out = render("quantization", tmp_path)
    root = check_contract(mod, inputs, out)
    chart = next(g for g in root.iter(f"{SVG_TAG}g") if g.get("class") == "quant-chart")
    ys = sorted(float(line.get("y1")) for line in chart.findall(f"{SVG_TAG}line"))
    assert len(ys) == 16
    gaps = {round(b - a, 6) for a, b in zip(ys, ys[1:], strict=False)}
    assert gaps == {mod.STEP_H}
    q = inputs["blocks"]["4"]
    marks = [g.findall(f"{SVG_TAG}line")[1] for g in chart.iter(f"{SVG_TAG}g") if g.get("data-index")]
    for mark, lv in zip(marks, q["levels"], strict=False):
        assert abs(float(mark.get("y1")) - (mod.CHART_TOP + (q["level_max"] - lv) * mod.STEP_H)) < 0.01


def test_fig10_container_carries_the_numbers(tmp_path):
    mod, inputs, out = render("quantization", tmp_path)
    attrs = {k: html.unescape(v) for k, v in re.findall(r'(data-[a-z0-9-]+)="([^"]*)"', re.match(r"<div ([^>]*)>", out).group(1))}
    assert attrs["data-bits"] == "4" and attrs["data-bits-per-weight"] == "4.5"
    assert len(json.loads(attrs["data-weights"])) == 32
    shares = json.loads(attrs["data-mean-error-shares"])
    assert round(100 * shares["4"]) == 3 and round(100 * shares["2"]) == 12
    assert json.loads(attrs["data-formats"])["Q8_0"] == 8.5


def test_fig10_static_rendering_says_the_live_version_needs_javascript(tmp_path):
    mod, _, out = render("quantization", tmp_path)
    note = check_says_it_needs_javascript(out)
    assert f"the block at {mod.STATIC_BITS} bits" in note
    assert out.index("</svg>") < out.index(note)


def test_fig10_static_rendering_scrolls_on_a_phone(tmp_path):
    _, _, out = render("quantization", tmp_path)
    check_nested_wide_scrolls(out)


def test_fig10_static_and_live_drawings_are_one_view(tmp_path):
    """The page's live figure calls tokenwalk_app.entry.quantize_view, which draws with
    the same function as the build: at the static bit width the chart, the table and the
    summary lines are the same markup."""
    import xml.etree.ElementTree as ET

    from tokenwalk_app.entry import quantize_view

    mod, inputs, out = render("quantization", tmp_path)
    static = check_contract(mod, inputs, out)
    live = ET.fromstring(quantize_view(inputs["weights"], mod.STATIC_BITS, inputs["bit_widths"])["svg"])

    def drawn(root):
        return [ET.tostring(el) for el in root if el.tag.split("}")[1] not in ("title", "desc", "style")]

    assert drawn(static) == drawn(live)
    assert live.get("style") == static.get("style") == "min-width:540px"


def test_fig10_live_view_formats_its_numbers_in_python():
    """The page inserts strings: the summary's shares come from tokenwalk.format (no-break space)."""
    from tokenwalk_app.entry import quantize_view

    v = quantize_view([0.01, -0.02, 0.0412, 0.003] * 8, 2, [8, 4, 3, 2])
    assert v["bits_per_weight"] == "2.5"
    assert "mean error " in v["summary_html"] and "\u00a0%" in v["summary_html"]
    assert "8 bits" in v["svg"] and "2 bits" in v["svg"]
