"""The model's own tokenizer (tokenwalk.text.tokenizer) against llama.cpp's ids.

The reference ids were written by tests/fixtures/llamacpp/make_tokenizer_fixtures.py with
llama-cpp-python (the optional `peer` extra) from the SmolLM2-135M-Instruct GGUF: English,
numbers and units, accents, CJK, emoji, runs of whitespace, code, special tokens.
"""

import json
import pathlib

import pytest

from tokenwalk.text.tokenizer import load_tokenizer, pre_tokenize

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
FIXTURE = ROOT / "tests" / "fixtures" / "llamacpp" / "smollm2_tokenizer.json"
CASES = json.loads(FIXTURE.read_text())["cases"]

needs_model = pytest.mark.skipif(not MODEL.exists(), reason="SmolLM2 file not fetched (run make setup)")


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(MODEL)


@needs_model
@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['parse_special']}" for i, c in enumerate(CASES)])
def test_ids_identical_to_llamacpp(tok, case):
    assert tok.encode(case["text"], parse_special=case["parse_special"]) == case["ids"]


@needs_model
def test_fixture_covers_the_issue_categories():
    texts = " ".join(c["text"] for c in CASES)
    for needle in ("é", "北京", "😀", "    ", "def ", "12.5%", "<|im_start|>"):
        assert needle in texts


@needs_model
@pytest.mark.parametrize("case", [c for c in CASES if c["parse_special"]][:20])
def test_decode_round_trips(tok, case):
    assert tok.decode(tok.encode(case["text"])) == case["text"]


@needs_model
def test_special_tokens_and_end_of_turn(tok):
    ids = tok.encode("<|im_start|>user\nhi<|im_end|>")
    assert ids[0] == tok.token_id("<|im_start|>") and ids[-1] == tok.token_id("<|im_end|>")
    assert tok.is_end_of_turn(tok.token_id("<|im_end|>"))
    assert not tok.is_end_of_turn(tok.encode(" Paris")[0])
    # Without special parsing the marker is plain text, several tokens.
    assert len(tok.encode("<|im_end|>", parse_special=False)) > 1


def test_pre_tokenizer_splits_digits_and_keeps_the_space_before_words():
    assert pre_tokenize("It's 2024  now", "smollm") == ["It", "'s", " ", "2", "0", "2", "4", " ", " now"]
    # only an ASCII space joins the next word; a no-break space stays on its own
    assert pre_tokenize("a\u00a0\u00a0b", "smollm") == ["a", "\u00a0", "\u00a0", "b"]
    assert pre_tokenize("x!!  ", "smollm") == ["x", "!!", "  "]


def test_unsupported_pre_tokenizer_is_one_line_error():
    from tokenwalk.errors import TokenwalkError

    # Llama 3's pre-tokenizer is built now; a value llama.cpp does not know is refused
    assert pre_tokenize("x 123456", "llama-bpe") == ["x", " ", "123", "456"]
    with pytest.raises(TokenwalkError, match="tokenizer.ggml.pre 'llama-9' is not a pre-tokenizer llama.cpp knows"):
        pre_tokenize("x", "llama-9")
