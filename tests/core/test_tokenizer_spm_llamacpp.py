"""The SentencePiece-style tokenizer (tokenwalk.text.spm) against llama.cpp's ids, and the
tokenizer dispatch on tokenizer.ggml.model.

The reference ids were written by tests/fixtures/llamacpp/make_tokenizer_fixtures.py with
llama-cpp-python (the optional `peer` extra) from the Gemma 3 270M GGUF: the article's
request, Unicode (CJK, emoji, right-to-left, combining marks), code, numbers, runs of spaces,
tabs and newlines (Gemma has tokens for them), special tokens, byte fallback, the empty text,
with and without special-token parsing and BOS. The small vocabularies below need no file.
"""

import json
import pathlib
import time

import pytest

from tokenwalk.errors import TokenwalkError
from tokenwalk.text.merge import merge_symbols
from tokenwalk.text.special import SpecialTokens
from tokenwalk.text.spm import SentencePieceTokenizer, score_priorities
from tokenwalk.text.tokenizer import load_tokenizer, tokenizer_from_metadata

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "gemma-3-270m-q4_k_m.gguf"
FIXTURE = ROOT / "tests" / "fixtures" / "llamacpp" / "gemma3_tokenizer.json"
REFERENCE = json.loads(FIXTURE.read_text(encoding="utf-8"))
CASES = REFERENCE["cases"]

needs_model = pytest.mark.skipif(not MODEL.exists(), reason="Gemma 3 270M file not fetched (run make setup)")


def _case_id(i, c):
    return f"{i}-{'special' if c['parse_special'] else 'plain'}{'-bos' if c['add_special'] else ''}"


CASE_IDS = [_case_id(i, c) for i, c in enumerate(CASES)]


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(MODEL)


@needs_model
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_ids_identical_to_llamacpp(tok, case):
    assert tok.encode(case["text"], parse_special=case["parse_special"], add_special=case["add_special"]) == case["ids"]


@needs_model
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_decode_gives_llamacpps_text_back(tok, case):
    assert tok.decode(case["ids"]) == case.get("text_back", case["text"])


@needs_model
@pytest.mark.parametrize("case", [c for c in CASES if c["parse_special"] and not c["add_special"]])
def test_decode_round_trips(tok, case):
    # A literal ▁ is SentencePiece's space and comes back as a space; all else is lossless.
    assert tok.decode(tok.encode(case["text"])) == case["text"].replace("\u2581", " ")


def test_fixture_covers_the_issue_categories():
    texts = [c["text"] for c in CASES]
    joined = " ".join(texts)
    request = (ROOT / "content" / "request" / "question.txt").read_text(encoding="utf-8")
    assert request in texts  # the article's request
    for needle in ("北京", "😀", "مرحبا", "שלום", "def ", "1234567890", "    ", "\t\t", "\n\n\n",
                   "<start_of_turn>", "<end_of_turn>", "<bos>", "\x00"):
        assert needle in joined, needle
    assert "" in texts
    assert any(c["add_special"] for c in CASES) and any(not c["parse_special"] for c in CASES)


@needs_model
def test_gemma_header_flags_and_end_of_turn(tok):
    assert isinstance(tok, SentencePieceTokenizer) and tok.kind == "llama"
    assert (tok.bos_id, tok.eos_id, tok.add_bos, tok.add_space_prefix) == (2, 1, True, False)
    end = tok.token_id("<end_of_turn>")
    assert tok.is_end_of_turn(end) and tok.is_end_of_turn(tok.eos_id)
    assert not tok.is_end_of_turn(tok.encode(" Paris")[0])
    # Without special parsing a control token is plain text; a user-defined one (\n) is still cut.
    assert tok.encode("<end_of_turn>", parse_special=False) != [end]
    assert tok.encode("\n", parse_special=False) == [tok.token_id("\n")]


@needs_model
def test_end_of_generation_ids_are_llamacpps(tok):
    # <eos>, <end_of_turn>, and </s>: a user-defined HTML tag in the file that llama.cpp
    # recognises by its text, makes a control token and stops at
    assert tok.eot_ids == tuple(REFERENCE["end_of_generation_ids"])
    strike = tok.token_id("</s>")
    assert strike in tok.eot_ids and tok.token_types[strike] == 3


@needs_model
def test_long_inputs_are_near_linear(tok):
    history = (ROOT / "content" / "request" / "patient-history.md").read_text(encoding="utf-8")
    for text in ("a" * 20_000, history * 4, " " * 20_000, "<" * 20_000):
        tok._cache.clear()
        start = time.perf_counter()
        ids = tok.encode(text)
        assert time.perf_counter() - start < 2.0, len(text)
        assert tok.decode(ids) == text


# -- small vocabularies, no file needed ----------------------------------------------------

def _toy(add_space_prefix=True, extra=()):
    """A vocabulary with scores that make the merge order visible, byte tokens, a control
    and a user-defined token."""
    tokens = ["<unk>", "<s>", "</s>", "<0x0A>", "<0xC3>", "<0xA9>", "<0xE2>", "<0x82>", "<0xAC>",
              "\u2581", "a", "b", "c", "ab", "bc", "abc", "\u2581a", "\u2581ab", "<ctl>", "<ud>", *extra]
    scores = [0.0] * len(tokens)
    for text, score in {"ab": -5.0, "bc": -1.0, "abc": -2.0, "\u2581a": -3.0, "\u2581ab": -4.0}.items():
        scores[tokens.index(text)] = score
    types = [2, 3, 3, 6, 6, 6, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 4] + [1] * len(extra)
    return tokenizer_from_metadata({
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.scores": scores,
        "tokenizer.ggml.token_type": types, "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.add_space_prefix": add_space_prefix}, source="toy")


def test_merges_follow_the_score_not_the_position():
    tok = _toy(add_space_prefix=False)
    # "bc" (-1) is merged before "ab" (-5), then (a, bc) makes "abc" (-2)
    assert [tok.tokens[i] for i in tok.encode("abc")] == ["abc"]
    priorities = score_priorities(tok.tokens, tok.scores)
    assert merge_symbols("abab", priorities) == ["ab", "ab"]
    assert merge_symbols("cab", priorities) == ["c", "ab"]
    assert merge_symbols("abbc", priorities) == ["ab", "bc"]


def test_space_prefix_bos_and_byte_fallback():
    tok = _toy()
    pieces = lambda text, **kw: [tok.tokens[i] for i in tok.encode(text, **kw)]  # noqa: E731
    assert pieces("ab") == ["\u2581ab"]  # the space prefix joins the first word
    assert pieces("ab", add_special=True) == ["<s>", "\u2581ab"]
    assert pieces("") == [] and pieces("", add_special=True) == ["<s>"]
    # é and € are not tokens: their UTF-8 bytes are
    assert pieces("é€") == ["\u2581", "<0xC3>", "<0xA9>", "<0xE2>", "<0x82>", "<0xAC>"]
    assert tok.decode(tok.encode("é€ ab")) == "é€ ab"
    # after a special token the space prefix comes again
    assert pieces("<ctl>ab") == ["<ctl>", "\u2581ab"]
    # a user-defined token is cut even when special tokens are not parsed
    assert pieces("<ud>ab", parse_special=False) == ["<ud>", "\u2581ab"]


def test_a_character_without_token_or_byte_is_one_line():
    tok = _toy(add_space_prefix=False)
    with pytest.raises(TokenwalkError, match="no <0x64> token"):
        tok.encode("d")


def test_special_partition_order_is_llamacpps():
    # llama.cpp cuts the longest special token first, wherever it is, then the shorter ones
    # in what is left: "bcd" wins over "ab" in "abcd" although "ab" starts first.
    tokens = ["x", "ab", "bcd", "cd", "<u>"]
    special = SpecialTokens(tokens, [1, 3, 3, 3, 4])
    assert special.partition("abcd") == ["a", 2]
    assert special.partition("abcdab cd") == ["a", 2, 1, " ", 3]
    assert special.partition("abcd<u>", parse_special=False) == ["abcd", 4]
    assert special.partition("") == []


def test_llamacpp_marks_tokens_it_knows_by_their_text():
    from tokenwalk.text.special import llamacpp_token_types

    tokens = ["<unk>", "<|im_end|>", "</s>", "<|tool_response>", "<|channel|>", "<fim_pad>", "x"]
    types, eog = llamacpp_token_types(tokens, [2, 4, 4, 4, 3, 1, 1], {"eos": None})
    # end of turn and FIM pad become control tokens that end a generation; </s> is let go
    # where <|tool_response> is there (Gemma 4), and <|channel|> is always user-defined
    assert types == [2, 3, 1, 3, 4, 3, 1]
    assert eog == (1, 3, 5)


def test_unknown_tokenizer_model_is_one_line():
    with pytest.raises(TokenwalkError, match=r"tokenizer.ggml.model 'bert' is not supported \(supported: 'gpt2'"):
        tokenizer_from_metadata({"tokenizer.ggml.model": "bert"}, source="x.gguf")
    with pytest.raises(TokenwalkError, match="tokenizer.ggml.scores should be 2 numbers"):
        tokenizer_from_metadata({"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["a", "b"],
                                 "tokenizer.ggml.scores": [0.0]}, source="x.gguf")


def test_cli_tokenize_refuses_an_unknown_tokenizer_with_status_2(tmp_path, capsys):
    pytest.importorskip("gguf")
    from gguf import GGUFValueType as V

    from tests.support.gguf_files import write_gguf
    from tokenwalk.cli import main

    path = write_gguf(tmp_path / "bert.gguf", "bert",
                      [("tokenizer.ggml.model", "bert", V.STRING, None),
                       ("tokenizer.ggml.tokens", ["[PAD]", "a"], V.ARRAY, V.STRING)], [])
    assert main(["tokenize", "--model", str(path), "a"]) == 2
    err = capsys.readouterr().err.strip()
    assert "tokenizer.ggml.model 'bert' is not supported" in err and "\n" not in err


@needs_model
def test_cli_tokenize_gemma(capsys):
    from tokenwalk.cli import main

    assert main(["tokenize", "--model", str(MODEL), "Hello world", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ids"] == [2, 9259, 1902] and out["pieces"] == ["<bos>", "Hello", " world"]


@needs_model
def test_cli_tokenize_takes_a_preset_name(capsys, monkeypatch):
    from tokenwalk.cli import main

    monkeypatch.chdir(ROOT)  # the model cache is relative to the repository root
    assert main(["tokenize", "--model", "gemma3-270m", "Hello world", "--json", "--no-bos"]) == 0
    assert json.loads(capsys.readouterr().out)["ids"] == [9259, 1902]


def test_cli_tokenize_unknown_model_name_is_one_line(capsys, monkeypatch):
    from tokenwalk.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["tokenize", "--model", "qwen3.6-35b-a3b", "x"]) == 2  # a preset, but no file of ours
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not found" in err


def test_hostile_vocabulary_entries_decode_without_crashing():
    # a byte token not written <0xNN>, a token whose bytes were not UTF-8 in the file
    tok = tokenizer_from_metadata({
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>", "oops", "a\udcff", "a"],
        "tokenizer.ggml.token_type": [2, 3, 3, 6, 1, 1]}, source="toy")
    assert tok.token_bytes(3) == b"oops" and tok.token_bytes(4) == b"a\xff"
    assert tok.decode([4, 5]) == "a\ufffda"
    with pytest.raises(TokenwalkError, match="not in the vocabulary") as info:
        tok.encode("\x1b")
    assert "\x1b" not in str(info.value)
