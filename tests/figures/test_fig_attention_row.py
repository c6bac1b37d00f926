"""Figure 3 (attention-row) renders with its numbers, bars to scale."""

from tests.support.toy_figs import SVG_TAG, check_contract, render, texts


def test_fig3_attention_row_renders_with_its_numbers(tmp_path):
    """Figure 3: q·k 0.6, 0.1, 3.4, 0.6, 0.2, 0.9, 0.8, −∞ -> 4, 3, 74, 4, 3, 6, 5, 0 %; output 1 × 256."""
    mod, inputs, html = render("attention_row", tmp_path)
    root = check_contract(mod, inputs, html)
    text = " ".join(texts(root))
    for score in ("0.6", "0.1", "3.4", "0.2", "0.9", "0.8", "−∞"):
        assert score in text
    for pct in ("4 %", "3 %", "74 %", "6 %", "5 %"):  # tokenwalk.format.pct, the prose's no-break space
        assert pct in text.replace("\u00a0", " ")
    assert "masked" in text and "weight 0" in text
    assert "1 × 256" in text
    assert "3 warfarin" in text and "7 its" in text


def test_fig3_scores_are_labelled_as_decode_head_labels_them(tmp_path):
    """The same toy scores are the softmax's input in figure 3 and in the decode-head image:
    both call them the scaled product q·k/√d, never the bare q·k."""
    from figures import decode_head

    mod, inputs, html = render("attention_row", tmp_path)
    text = texts(check_contract(mod, inputs, html))
    assert "q·k/√d" in text and "q·k" not in [t.strip() for t in text]
    assert "q·k/√128" in decode_head.alt({"embedding_length": 12288, "head_dim": 128, "tokens": ["a", "b"],
                                           "weights": [0.4, 0.6]})


def test_fig3_bars_are_to_scale(tmp_path):
    """Figure 3: each weight bar's width is proportional to its weight (within 1 %)."""
    mod, inputs, html = render("attention_row", tmp_path)
    root = check_contract(mod, inputs, html)
    bars = [r for r in root.iter(f"{SVG_TAG}rect") if r.get("data-weight")]
    assert len(bars) == 7
    unit = float(bars[2].get("width")) / float(bars[2].get("data-weight"))
    for bar, w in zip(bars, inputs["weights"], strict=False):
        assert abs(float(bar.get("width")) - unit * w) <= 0.01 * unit * max(w, 0.01)
    assert abs(unit - mod.BAR_W) < 0.01 * mod.BAR_W
