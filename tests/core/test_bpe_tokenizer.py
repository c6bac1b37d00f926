"""The byte-level BPE of figure 1 (tokenizer; section 'Tokens and embeddings')."""

import random
from pathlib import Path

import pytest

from article.toys import load_toy
from tokenwalk.text.bpe import (
    BPE,
    bytes_to_unicode,
    count_text,
    pre_tokenize,
    train_bpe,
    unicode_to_bytes,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def settings():
    return load_toy("tokenizer")


@pytest.fixture(scope="module")
def paragraph(settings):
    return (ROOT / settings["paragraph_file"]).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def bpe(settings, paragraph):
    return train_bpe(paragraph, settings["n_merges"])


def test_bytes_to_unicode_is_gpt2s_table():
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[ord("A")] == "A"
    assert all(unicode_to_bytes()[c] == b for b, c in table.items())


def test_pre_tokenize_gives_the_leading_space_to_the_next_word():
    assert pre_tokenize("The patient  presents, 38.2 °C") == [
        "The", " patient", " ", " presents", ",", " 38", ".", "2", " °", "C"]


@pytest.mark.parametrize("text", ["", "a", "  two  spaces  ", "tab\tand\nnewline\n\n", "snake_case_name"])
def test_pre_tokenize_is_lossless(text):
    assert "".join(pre_tokenize(text)) == text


def test_fig1_vocabulary_is_base_symbols_plus_120_merges(bpe, settings):
    """Figure 1: the vocabulary is the characters of the paragraph plus 120 merges
    (the draft: 41 + 120 = 161; our paragraph gives its own count)."""
    assert len(bpe.merges) == settings["n_merges"] == 120
    assert bpe.vocab_size == len(bpe.base) + 120
    assert len(set(bpe.merges)) == 120


def test_fig1_sentence_counts_63_characters_63_bytes_12_words(bpe, settings):
    """Figure 1: 'The patient presents with fever and a dry cough for three days.' is
    63 characters, 63 UTF-8 bytes and 12 words; tokens come from the trained merges."""
    counts = count_text(settings["sentence"], bpe)
    assert counts["characters"] == 63
    assert counts["utf8_bytes"] == 63
    assert counts["words"] == 12
    assert counts["tokens"] == len(bpe.encode(settings["sentence"]))
    assert 12 <= counts["tokens"] < 63  # fewer pieces than characters, at least one per word
    assert counts["vocabulary"] == bpe.vocab_size


def test_fig1_pieces_of_the_sentence_reassemble_it(bpe, settings):
    """Figure 1: the figure shows the pieces; joined, they are the sentence."""
    pieces = bpe.pieces_text(settings["sentence"])
    assert "".join(pieces) == settings["sentence"]
    assert " patient" in pieces  # a word of the paragraph becomes one piece, space in front


def test_first_merge_is_the_most_frequent_pair(paragraph):
    bpe = train_bpe(paragraph, 1)
    chunks = pre_tokenize(paragraph)
    table = bytes_to_unicode()
    counts = {}
    for c in chunks:
        s = [table[b] for b in c.encode()]
        for p in zip(s, s[1:], strict=False):
            counts[p] = counts.get(p, 0) + 1
    top = max(counts.values())
    assert counts[bpe.merges[0]] == top
    assert bpe.merges[0] == min(p for p, n in counts.items() if n == top)  # tie-break: sorts first


def test_training_is_deterministic(paragraph):
    assert train_bpe(paragraph, 60).merges == train_bpe(paragraph, 60).merges


def test_training_stops_when_no_pair_is_left():
    bpe = train_bpe("ab ab", 50)
    assert bpe.merges == [("a", "b"), ("Ġ", "ab")]
    assert bpe.encode_pieces("ab ab") == ["ab", "Ġab"]


def test_merges_apply_in_the_order_learned():
    bpe = BPE(base=["a", "b", "c"], merges=[("b", "c"), ("a", "b")])
    assert bpe.encode_pieces("abc") == ["a", "bc"]
    bpe2 = BPE(base=["a", "b", "c"], merges=[("a", "b"), ("b", "c")])
    assert bpe2.encode_pieces("abc") == ["ab", "c"]


UNICODE_SAMPLES = [
    "Warfarin 5 mg — INR 2.6 ± 0.3 °C",
    "naïve café, jalapeño, Ærøskøbing, İstanbul",
    "抗凝血药 华法林 and 日本語のテキスト",
    "emoji 💊🩺👩🏽‍⚕️ and flags 🇫🇷",
    "combining: e\u0301 a\u0308 zero\u200bwidth",
    "tabs\tnewlines\n\n  indents and trailing   ",
    "",
]


@pytest.mark.parametrize("text", UNICODE_SAMPLES)
def test_encoder_round_trips_any_unicode(bpe, text):
    """Byte-level BPE is lossless: decode(encode(text)) == text, even for bytes never seen."""
    ids = bpe.encode(text)
    assert bpe.decode(ids) == text
    assert all(0 <= i < bpe.vocab_size + 256 for i in ids)


def test_encoder_round_trips_random_code_points(bpe):
    rng = random.Random(5)
    for _ in range(200):
        text = "".join(chr(rng.choice([rng.randrange(32, 0x2FF), rng.randrange(0x4E00, 0x9FFF),
                                       rng.randrange(0x1F300, 0x1FAFF), 0x20]))
                       for _ in range(rng.randrange(1, 30)))
        assert bpe.decode(bpe.encode(text)) == text


def test_unseen_bytes_get_ids_after_the_vocabulary(bpe):
    ids = bpe.encode("€")  # three bytes not in the paragraph
    assert len(ids) == 3 and all(i >= bpe.vocab_size for i in ids)


def test_decode_rejects_an_id_out_of_range(bpe):
    with pytest.raises(ValueError, match="token id"):
        bpe.decode([bpe.vocab_size + 256])


def test_count_text_counts_utf8_bytes_and_words(bpe):
    c = count_text("café 💊", bpe)
    assert (c["characters"], c["utf8_bytes"], c["words"]) == (6, 10, 2)


def test_fig1_toy_tokenizer_gives_the_figures_numbers(paragraph, bpe, settings):
    """Figure 1: toy_tokenizer() (what the figure and the article use) agrees with a direct training."""
    from article.toys import toy_tokenizer

    t = toy_tokenizer(paragraph)
    assert t["counts"] == count_text(settings["sentence"], bpe)
    assert t["n_merges"] == 120 and t["base_symbols"] == len(bpe.base)
    assert t["pieces"] == bpe.pieces_text(settings["sentence"])
