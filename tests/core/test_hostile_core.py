"""Hostile input in the pure core: the BPE scales (same ids as the quadratic loop it replaces),
text that is not Unicode and text too long for the page are one line, the header
reader's cost is bounded by items, layer patterns are counted, and random mutations of
the real SmolLM2 header end in a result or one TokenwalkError line (a fuzz test with a
fixed seed)."""

from __future__ import annotations

import json
import random
import time

import pytest

from tests.support.gguf_files import SMOLLM2, needs_smollm2
from tokenwalk.errors import TokenwalkError, printable
from tokenwalk.gguf.header import read_gguf_header, read_gguf_header_bytes
from tokenwalk.text import check_text
from tokenwalk.text.bpe import bytes_to_unicode
from tokenwalk.text.merge import merge_symbols
from tokenwalk.text.tokenizer import Tokenizer, load_tokenizer


def naive_merge(word: str, ranks: dict, sep: str = " ") -> list[str]:
    """The loop the heap replaced: rescan every pair, merge the lowest rank, leftmost first
    (`ranks` keyed "left right", as the file's merges are written)."""
    symbols = list(word)
    while len(symbols) > 1:
        best, best_rank = None, None
        for i in range(len(symbols) - 1):
            r = ranks.get(symbols[i] + sep + symbols[i + 1])
            if r is not None and (best_rank is None or r < best_rank):
                best, best_rank = i, r
        if best is None:
            break
        symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
    return symbols


def test_heap_merge_equals_the_naive_loop_on_random_rank_tables():
    rng = random.Random(15)
    for _ in range(300):
        alphabet = "abcd"[: rng.randint(1, 4)]
        pieces = set(alphabet)
        ranks = {}
        # ranks over pairs of existing pieces, in a random (not necessarily trained) order
        for _ in range(rng.randint(0, 25)):
            left, right = rng.choice(sorted(pieces)), rng.choice(sorted(pieces))
            if (left, right) not in ranks:
                ranks[(left, right)] = len(ranks)
                pieces.add(left + right)
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        keyed = {f"{left} {right}": r for (left, right), r in ranks.items()}
        assert merge_symbols(word, keyed, " ") == naive_merge(word, keyed), (word, ranks)


def test_score_merge_equals_the_naive_loop_with_tied_scores():
    """The SentencePiece side of the one merge loop: priorities are minus the scores of the
    tokens a pair makes (keys joined without a separator), many of them equal, so the
    leftmost pair of the best score must win as in the naive loop."""
    rng = random.Random(16)
    for _ in range(300):
        alphabet = "abcd"[: rng.randint(1, 4)]
        pieces = sorted(set(alphabet))
        priorities = {}
        for _ in range(rng.randint(0, 25)):
            made = rng.choice(pieces) + rng.choice(pieces)
            if made not in priorities:
                priorities[made] = -float(rng.randint(0, 3))  # four scores: ties everywhere
                pieces.append(made)
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert merge_symbols(word, priorities) == naive_merge(word, priorities, ""), (word, priorities)


@pytest.fixture(scope="module")
def smollm2():
    if not SMOLLM2.exists():
        pytest.skip("SmolLM2 file not fetched (run make setup)")
    return load_tokenizer(SMOLLM2)


def test_smollm2_heap_merge_equals_the_naive_loop(smollm2):
    rng = random.Random(7)
    enc = bytes_to_unicode()
    for _ in range(200):
        text = "".join(rng.choice("etaoin shrdluçé€😀0123-_'") for _ in range(rng.randint(1, 60)))
        word = "".join(enc[b] for b in text.encode("utf-8"))
        assert merge_symbols(word, smollm2._ranks, smollm2._sep) == naive_merge(word, smollm2._ranks, smollm2._sep), text


def test_smollm2_20000_letters_in_well_under_a_second(smollm2):
    rng = random.Random(3)
    for text in ("a" * 20_000, "".join(rng.choice("abcdefghij") for _ in range(20_000))):
        smollm2._cache.clear()
        start = time.perf_counter()
        ids = smollm2.encode(text)
        assert time.perf_counter() - start < 1.0
        assert smollm2.decode(ids) == text


@pytest.mark.parametrize("text, says", [("caf\udce9", "byte 0xE9"), ("a\ud83d b", "lone surrogate U+D83D"),
                                        ("\udfff", "character 1")])
def test_text_that_is_not_unicode_is_one_line(text, says):
    with pytest.raises(TokenwalkError) as info:
        check_text(text)
    assert says in str(info.value) and "\n" not in str(info.value)
    from tokenwalk.text.bpe import train_bpe

    with pytest.raises(TokenwalkError):
        train_bpe("the patient", 3).encode(text)
    tok = Tokenizer(tokens=["a"], merges=[], token_types=[1])
    with pytest.raises(TokenwalkError):
        tok.encode(text)


def test_browser_tokenizers_answer_one_line():
    from tokenwalk_app import entry

    for text in ("fever \ud83d", "x" * (entry.MAX_TOKENIZE_CHARS + 1)):
        answer = json.loads(entry.call("tokenize_toy", json.dumps([text, "the patient has a fever", 5])))
        assert set(answer) == {"error"} and "\n" not in answer["error"], answer
        assert "Error" not in answer["error"], answer  # a message, not an exception's name
    ok = json.loads(entry.call("tokenize_toy", json.dumps(["a" * entry.MAX_TOKENIZE_CHARS, "aaaa", 5])))
    assert "ok" in ok


def test_printable_escapes_what_moves_a_terminal_and_keeps_text():
    assert printable("warfarin · 華法林 · ☕ é") == "warfarin · 華法林 · ☕ é"
    assert printable("a\x1b[2J\x07\r\x00\nb\t\x9b\u202e\udcff") == "a\\x1b[2J\\x07\\r\\x00\\nb\\t\\x9b\\u202e\\udcff"
    assert printable(7) == "7"


def _array_header(count: int, item: bytes, item_type: int) -> bytes:
    import struct

    key = b"bomb"
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    return head + struct.pack("<IIQ", 9, item_type, count) + item * count


def test_item_cap_counts_keys_tensors_and_items():
    data = _array_header(1000, b"\0" * 8, 8)  # 1,000 empty strings
    with pytest.raises(TokenwalkError) as info:
        read_gguf_header_bytes(data, file_size=len(data), max_header_items=500)
    assert "'bomb'" in str(info.value) and "byte 44" in str(info.value)
    nested = _array_header(1000, b"\0" * 12, 9)  # 1,000 empty uint8 arrays
    with pytest.raises(TokenwalkError):
        read_gguf_header_bytes(nested, file_size=len(nested), max_header_items=999)
    header = read_gguf_header_bytes(nested, file_size=len(nested), max_header_items=1001)
    assert header.metadata["bomb"] == [[]] * 1000


def test_layer_patterns_are_counted_not_looped():
    from tokenwalk.specs.model import full_attention_layers

    for layers in range(0, 50):
        for interval in range(1, 7):
            expected = sum(1 for i in range(layers) if (i + 1) % interval == 0)
            assert full_attention_layers(layers, interval) == expected
    start = time.perf_counter()
    assert full_attention_layers(2**40, 4) == 2**38
    assert time.perf_counter() - start < 1.0  # a loop over 2^40 layers would take hours


# ------------------------------------------------------------------ fuzz: the real header

def _mutate(data: bytearray, rng: random.Random) -> bytearray:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        # half the mutations land in the first 2 KB: the fixed header and the scalar keys
        at = rng.randrange(24, 2048) if rng.random() < 0.5 else rng.randrange(len(out) - 8)
        if kind < 0.35:
            out[at] = rng.randrange(256)
        elif kind < 0.6:
            value = rng.choice([0, 1, 2**31, 2**32 - 1, 2**40, 2**63, 2**64 - 1, rng.randrange(2**64)])
            out[at:at + 8] = value.to_bytes(8, "little")
        elif kind < 0.75:
            out[at:at + 4] = rng.choice([b"\x1b[2J", b"\x07\r\n\x00", b"\xff\xfe\xc3\x28", b"\x7f\x9b\x1b]"])
        elif kind < 0.85:
            # float32 NaN, +inf, -inf
            out[at:at + 4] = rng.choice([b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f", b"\x00\x00\x80\xff"])
        else:
            del out[at:at + rng.randint(1, 16)]
    return out


def _fuzz(n_cases: int, seed: int):
    from tokenwalk.specs.model import model_from_gguf

    size = SMOLLM2.stat().st_size
    with open(SMOLLM2, "rb") as f:
        data = bytearray(f.read(read_gguf_header(SMOLLM2).data_offset))
    rng = random.Random(seed)
    outcomes = {"ok": 0, "error": 0}
    for case in range(n_cases):
        mutated = bytes(_mutate(data, rng))
        start = time.perf_counter()
        try:
            header = read_gguf_header_bytes(mutated, file_size=size, name="smollm2.gguf")
            model = model_from_gguf(header)
            json.dumps(model.to_dict(), allow_nan=True)
            outcomes["ok"] += 1
        except TokenwalkError as error:
            message = str(error)
            assert message.isprintable(), f"case {case}: {message!r}"
            outcomes["error"] += 1
        assert time.perf_counter() - start < 2.0, f"case {case} took too long"
    return outcomes


@needs_smollm2
def test_fuzz_real_header_few_cases():
    outcomes = _fuzz(60, seed=15)
    assert outcomes["error"] > 0


@needs_smollm2
@pytest.mark.slow
def test_fuzz_real_header_many_cases():
    outcomes = _fuzz(600, seed=1500)
    assert outcomes["error"] > 0
