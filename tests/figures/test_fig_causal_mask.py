"""Figure 6 (causal-mask) renders: 8 × 8 grid, rows frozen above, new row live, masked cells empty."""

from tests.support.toy_figs import SVG_TAG, check_contract, render, texts


def test_fig6_causal_mask_renders_the_triangle(tmp_path):
    """Figure 6: 36 weights in the lower triangle, 28 empty masked cells, row 8 live."""
    mod, inputs, html = render("causal_mask", tmp_path)
    root = check_contract(mod, inputs, html)
    rows = [g for g in root.iter(f"{SVG_TAG}g") if g.get("data-row")]
    assert len(rows) == 8
    assert [g.get("class") for g in rows] == ["mask-row frozen"] * 7 + ["mask-row live"]
    cells = [t for t in root.iter(f"{SVG_TAG}text") if t.get("data-weight")]
    assert len(cells) == 36
    empty = [r for g in rows for r in g.iter(f"{SVG_TAG}rect") if r.get("class") == "stroke-grid"]
    assert len(empty) == 28
    live = [t.text for t in rows[7].iter(f"{SVG_TAG}text") if t.get("data-weight")]
    assert live == ["4", "3", "24", "7", "4", "16", "36", "6"]
    row7 = [t.text for t in rows[6].iter(f"{SVG_TAG}text") if t.get("data-weight")]
    assert row7 == ["4", "3", "74", "4", "3", "6", "5"]  # the row of figure 3
    text = " ".join(texts(root))
    assert "frozen" in text and "this step" in text and "−∞" in text
    assert "8 dose" in text and "1 Amiodarone" in text
