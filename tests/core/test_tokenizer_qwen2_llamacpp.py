"""The Qwen2.5-Coder file's own tokenizer (byte-level BPE, pre-tokenizer qwen2) against
llama.cpp's ids, written by tests/fixtures/llamacpp/make_tokenizer_fixtures.py (qwen2) with
llama-cpp-python (the optional `peer` extra): the SmolLM2 fixture's texts (English, numbers
and units, accents, CJK, emoji, runs of whitespace, code, special tokens) and the article's
request, each with and without special tokens; and the end-of-generation tokens llama.cpp
reads from the same header.
"""

import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
FIXTURE = ROOT / "tests" / "fixtures" / "llamacpp" / "qwen2_tokenizer.json"
DATA = json.loads(FIXTURE.read_text())
CASES = DATA["cases"]

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="Qwen2.5-Coder file not fetched (run make setup)")


@pytest.fixture(scope="module")
def tok():
    from tokenwalk.text.tokenizer import load_tokenizer

    return load_tokenizer(MODEL)


def test_the_fixture_is_this_file():
    assert DATA["model"] == MODEL.name and len(CASES) == 2 * 28  # 24 texts and 4 request files


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['parse_special']}" for i, c in enumerate(CASES)])
def test_ids_identical_to_llamacpp(tok, case):
    assert tok.encode(case["text"], parse_special=case["parse_special"]) == case["ids"]


def test_end_of_turn_tokens_are_llamacpps(tok):
    eog = set(DATA["end_of_generation_ids"])
    assert tok.token_id("<|im_end|>") in eog and tok.token_id("<|endoftext|>") in eog
    assert all(tok.is_end_of_turn(i) for i in eog)
    assert not tok.is_end_of_turn(tok.encode(" Paris")[0])
