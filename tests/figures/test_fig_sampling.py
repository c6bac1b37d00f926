"""Figure 5 (sampling) renders with its numbers, bars to scale."""

from tests.support.toy_figs import SVG_TAG, check_contract, render, texts


def test_fig5_sampling_renders_with_its_numbers(tmp_path):
    """Figure 5: dose 6.1 … banana −1.5; T=1 65/20/10 %; T=0.5 90 %; T=2 42 %, banana 0.03 % -> 0.9 %; top-p 0.9 keeps 95 %."""
    mod, inputs, html = render("sampling", tmp_path)
    root = check_contract(mod, inputs, html)
    text = " ".join(texts(root))
    for needle in ("dose", "banana", "6.1", "−1.5", "T = 0.5", "T = 1", "T = 2", "top-p 0.9",
                   "65 %", "20 %", "10 %", "90 %", "42 %", "0.03 %", "0.9 %", "95 %"):
        assert needle in text.replace("\u00a0", " "), needle  # tokenwalk.format.probability: a no-break space, as the prose
    assert text.count("cut") == 4  # four candidates outside the nucleus


def test_fig5_bars_are_to_scale(tmp_path):
    """Figure 5: every bar is TRACK_W × its probability (within 1 %)."""
    mod, inputs, html = render("sampling", tmp_path)
    root = check_contract(mod, inputs, html)
    bars = [r for r in root.iter(f"{SVG_TAG}rect") if r.get("data-p")]
    assert len(bars) == 3 * 7 + 3
    for bar in bars:
        expected = mod.TRACK_W * float(bar.get("data-p"))
        assert abs(float(bar.get("width")) - expected) <= max(0.01 * expected, 0.01)
