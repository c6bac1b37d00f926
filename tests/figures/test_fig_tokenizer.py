"""Figure 1 (tokenizer, static rendering): the sentence cut into pieces and five counters."""

import html
import re

from tests.support.toy_figs import SVG_TAG, check_contract, check_nested_wide_scrolls, check_says_it_needs_javascript, render, texts


def test_fig1_tokenizer_renders_pieces_and_counters(tmp_path):
    """Figure 1: 63 characters, 63 UTF-8 bytes, 12 words; tokens and vocabulary from our paragraph."""
    mod, inputs, out = render("tokenizer", tmp_path)
    root = check_contract(mod, inputs, out)
    counts = inputs["counts"]
    assert (counts["characters"], counts["utf8_bytes"], counts["words"]) == (63, 63, 12)
    assert counts["vocabulary"] == inputs["base_symbols"] + 120
    shown = {t.get("data-counter"): t.text for t in root.iter(f"{SVG_TAG}text") if t.get("data-counter")}
    assert shown == {"characters": "63", "utf8_bytes": "63", "words": "12",
                     "tokens": str(counts["tokens"]), "vocabulary": str(counts["vocabulary"])}
    pieces = [t.text for t in root.iter(f"{SVG_TAG}text") if t.get("data-index")]
    assert len(pieces) == counts["tokens"]
    assert "".join(pieces).replace("·", " ") == inputs["sentence"]
    assert "120 merges" in " ".join(texts(root))


def test_fig1_container_carries_the_counts_for_the_interactive_layer(tmp_path):
    mod, inputs, out = render("tokenizer", tmp_path)
    div = re.match(r"<div ([^>]*)>", out)
    assert div and 'data-figure="tokenizer"' in div.group(1)
    attrs = {k: html.unescape(v) for k, v in re.findall(r'(data-[a-z0-9-]+)="([^"]*)"', div.group(1))}
    assert attrs["data-characters"] == "63" and attrs["data-utf8-bytes"] == "63"
    assert attrs["data-words"] == "12"
    assert attrs["data-tokens"] == str(inputs["counts"]["tokens"])
    assert attrs["data-vocabulary"] == str(inputs["counts"]["vocabulary"])
    assert attrs["data-n-merges"] == "120"


def test_fig1_static_rendering_says_the_live_version_needs_javascript(tmp_path):
    _, _, out = render("tokenizer", tmp_path)
    note = check_says_it_needs_javascript(out)
    assert "type your own text" in note
    assert out.index("</svg>") < out.index(note)  # under the drawing, like the interactive layer's own note


def test_fig1_static_rendering_scrolls_on_a_phone(tmp_path):
    _, _, out = render("tokenizer", tmp_path)
    check_nested_wide_scrolls(out)


def test_the_tokenizer_writes_its_own_vocabulary_file(tmp_path):
    """Figure 1 ships the request's tokenizer model's vocabulary beside itself (the simulator
    no longer carries it), and its container points the interactive layer at it."""
    import json

    from figures import simulator, tokenizer
    from tests.support.context import default_context

    inputs = tokenizer.inputs(default_context())
    assert "vocab" not in simulator.inputs(default_context())
    if inputs["vocab"].get("missing"):
        assert 'data-vocab=""' in tokenizer.render(inputs, tmp_path)
        return
    html = tokenizer.render(inputs, tmp_path)
    name = tokenizer.vocab_file_name(inputs["vocab"]["name"])
    assert name == "smollm2-135m-instruct-vocab.json"
    assert f'data-vocab="figures/tokenizer/{name}"' in html
    data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
    assert len(data["tokenizer.ggml.tokens"]) == 49_152 and data["name"] == inputs["vocab"]["name"]
