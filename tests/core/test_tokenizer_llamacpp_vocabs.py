"""Every vocabulary of llama.cpp's tokenizer tests: llama.cpp's ids, or a one-line refusal.

`make setup` extracts from the pinned llama-cpp-python source package (sha256 in the Makefile)
llama.cpp's vocabulary-only files `ggml-vocab-*.gguf`, the `.inp`/`.out` vectors beside them
(inputs separated by a line `__ggml_vocab_test__`, one line of expected ids each; llama.cpp's
tests/test-tokenizer-0.cpp tokenizes them without BOS and without parsing special tokens),
and the two sources the pre-tokenizers are read from (src/llama-vocab.cpp, src/unicode-data.cpp).
Each file below is listed with what it must do: pass every vector, load (no vectors: checked
on texts whose split follows from llama.cpp's expressions), or be refused in one line.
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys
import time

import pytest

from tokenwalk.errors import TokenwalkError
from tokenwalk.text.pretokenize import PRE_TOKENIZERS, REFUSED_TYPES, REGEXES, pre_tokenize, pre_tokenizer
from tokenwalk.text.tokenizer import REFUSED_MODELS, SUPPORTED_MODELS, load_tokenizer, tokenizer_from_metadata

ROOT = pathlib.Path(__file__).resolve().parents[2]
VOCABS = ROOT / ".cache" / "llama-vocab"

# file stem -> what it must do: "vectors", "loads", or ("refused", tokenizer.ggml.model)
EXPECTED = {
    "aquila": "loads", "baichuan": "loads", "gpt-neox": "loads",
    "command-r": "vectors", "deepseek-coder": "vectors", "deepseek-llm": "vectors", "falcon": "vectors",
    "gemma-4": "vectors", "gpt-2": "vectors", "llama-bpe": "vectors", "llama-spm": "vectors", "mpt": "vectors",
    "phi-3": "vectors", "qwen2": "vectors", "qwen35": "vectors", "refact": "vectors", "starcoder": "vectors",
    "bert-bge": ("refused", "bert"), "nomic-bert-moe": ("refused", "t5"),
}


def _vocab(stem: str) -> pathlib.Path:
    path = VOCABS / f"ggml-vocab-{stem}.gguf"
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run `make setup` (it extracts llama.cpp's tokenizer test set)")
    return path


def read_vectors(path: pathlib.Path) -> list[tuple[str, list[int]]]:
    """(text, ids) pairs as tests/test-tokenizer-0.cpp reads them."""
    raw = path.with_name(path.name + ".inp").read_bytes().decode("utf-8")
    texts = []
    pos = 0
    sep = "\n__ggml_vocab_test__\n"
    while pos < len(raw):
        nxt = raw.find(sep, pos)
        if nxt < 0:
            texts.append(raw[pos:])
            break
        texts.append(raw[pos:nxt])
        pos = nxt + len(sep)
    lines = path.with_name(path.name + ".out").read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert len(texts) == len(lines), f"{path.name}: {len(texts)} inputs, {len(lines)} outputs"
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines, strict=True)]


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_every_vocabulary_gives_llamacpps_ids_or_is_refused(stem):
    path = _vocab(stem)
    expected = EXPECTED[stem]
    if isinstance(expected, tuple):
        with pytest.raises(TokenwalkError) as refused:
            load_tokenizer(path)
        line = str(refused.value)
        assert "\n" not in line and str(path) in line
        assert f"tokenizer.ggml.model {expected[1]!r} is not supported" in line
        assert REFUSED_MODELS[expected[1]] in line
        return
    tok = load_tokenizer(path)
    if expected == "loads":
        assert not path.with_name(path.name + ".inp").exists()
        text = "Hello world, 3.14159 1234567 a + b\n\tend"
        assert tok.decode(tok.encode(text, parse_special=False)).lstrip() == text
        return
    pairs = read_vectors(path)
    assert len(pairs) >= 46
    wrong = [(text, ids, got) for text, ids in pairs
             if (got := tok.encode(text, parse_special=False, add_special=False)) != ids]
    assert not wrong, f"{stem}: {len(wrong)} of {len(pairs)} vectors differ, first {wrong[0]!r}"


def test_the_list_names_every_file_of_the_test_set():
    _vocab("gpt-2")
    stems = {p.name[len("ggml-vocab-"):-len(".gguf")] for p in VOCABS.glob("ggml-vocab-*.gguf")}
    assert stems == set(EXPECTED)
    with_vectors = {s for s in stems if (VOCABS / f"ggml-vocab-{s}.gguf.inp").exists()}
    assert with_vectors == {s for s, e in EXPECTED.items() if e == "vectors" or isinstance(e, tuple)} - {"nomic-bert-moe"}
    # no BPE or SentencePiece vocabulary is refused: only WordPiece and Unigram ones
    assert {e[1] for e in EXPECTED.values() if isinstance(e, tuple)} <= {"bert", "t5"}


@pytest.mark.parametrize("stem", ["gpt-neox", "aquila"])
def test_a_file_without_pre_gets_llamacpps_default(stem):
    """No tokenizer.ggml.pre: llama.cpp warns and uses its 'default' expressions (punctuation
    runs, GPT-2's pattern, digit runs, then three digits at a time from the left)."""
    tok = load_tokenizer(_vocab(stem))
    assert tok.pre is None and tok.pre_tokenizer.kind == "default"
    # the pieces llama.cpp gives for these texts, where tokenwalk's old GPT-2 split
    # gave '3' '.' '14' '159' ' 12' '345' '67' and ' a' ' +' ' b'
    assert [tok.piece(i) for i in tok.encode("3.14159 1234567")] == ["3", ".", "141", "59", " ", "123", "456", "7"]
    assert [tok.piece(i) for i in tok.encode(" a + b")] == [" a", " ", "+", " b"]
    assert pre_tokenize("3.14159 1234567", None) == ["3", ".", "141", "59", " ", "123", "456", "7"]
    assert pre_tokenize("a + b", None) == ["a", " ", "+", " b"]


def test_the_expressions_are_llamacpps():
    """Every expression of REGEXES appears, as written, in llama.cpp's llm_tokenizer_bpe, and
    every tokenizer.ggml.pre value of its loader is in PRE_TOKENIZERS (none missing, none added)."""
    source = (VOCABS / "llama-vocab.cpp")
    if not source.exists():
        pytest.fail(f"{source.relative_to(ROOT)} is missing: run `make setup`")
    text = source.read_text(encoding="utf-8")
    ctor = text[text.index("struct llm_tokenizer_bpe : llm_tokenizer {"):text.index("struct llm_tokenizer_bpe_session")]
    literals = set()
    for line in ctor.splitlines():
        line = line.strip()
        if line.startswith('"'):
            literals.add(ast.literal_eval(re.match(r'("(?:[^"\\]|\\.)*")', line).group(1)))
    for kind, regexes in REGEXES.items():
        for regex in regexes:
            assert regex in literals, (kind, regex[:60])
    loader = text[text.index("if (tokenizer_pre.empty())"):text.index("unknown pre-tokenizer type")]
    assert set(re.findall(r'tokenizer_pre == "([^"]+)"', loader)) == set(PRE_TOKENIZERS)


def test_the_character_classes_are_llamacpps():
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "llamacpp"))
    try:
        import make_unicode_classes
    finally:
        sys.path.pop(0)
    source = VOCABS / "unicode-data.cpp"
    if not source.exists():
        pytest.fail(f"{source.relative_to(ROOT)} is missing: run `make setup`")
    written = (ROOT / "tokenwalk" / "text" / "llama_unicode.py").read_text(encoding="utf-8")
    assert written == make_unicode_classes.module_text(source.read_text(encoding="utf-8"))


def test_classes_newer_than_this_pythons_unicode_follow_llamacpp():
    from tokenwalk.text.pretokenize import char_class

    # U+0CF3 KANNADA SIGN COMBINING ANUSVARA ABOVE RIGHT (Unicode 15): a mark to llama.cpp,
    # unassigned to Python 3.11's unicodedata (Unicode 14)
    assert char_class("\u0cf3") == "M"
    assert char_class("\u00a0") == "W" and char_class("é") == "L" and char_class("٣") == "N"


def test_refused_pre_tokenizers_are_one_line():
    for pre, kind in (("kimi-k2", "kimi-k2"), ("afmoe", "afmoe"), ("tiny_aya", "tiny-aya")):
        with pytest.raises(TokenwalkError, match=f"tokenizer.ggml.pre '{pre}' is not supported: ") as e:
            pre_tokenizer(pre, "x.gguf")
        assert "\n" not in str(e.value) and REFUSED_TYPES[kind] in str(e.value)
    with pytest.raises(TokenwalkError, match=r"x.gguf: tokenizer.ggml.pre 'gpt-5' is not a pre-tokenizer llama.cpp knows"):
        tokenizer_from_metadata({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-5",
                                 "tokenizer.ggml.tokens": ["a"], "tokenizer.ggml.merges": []}, source="x.gguf")


def test_supported_models_are_the_ones_built():
    assert set(SUPPORTED_MODELS) == {"gpt2", "llama", "gemma4"}
    assert not set(SUPPORTED_MODELS) & set(REFUSED_MODELS)


def test_a_150000_entry_vocabulary_loads_and_tokenizes_the_request_quickly():
    """Qwen2's 151,936-entry vocabulary: read from the file, built, and the article's request
    tokenized in under a second of CPU time (make bench prints the figure)."""
    from benchmarks.tokenizer_bench import request_text

    path = _vocab("qwen2")
    text = request_text()
    start = time.process_time()
    tok = load_tokenizer(path)
    ids = tok.encode(text)
    seconds = time.process_time() - start
    assert tok.vocab_size == 151_936 and len(ids) > 6_000
    assert seconds < 1.0, f"{seconds:.2f} s of CPU time"


def _help(capsys, command: str) -> str:
    from tokenwalk.cli import main

    with pytest.raises(SystemExit):
        main([command, "--help"])
    return capsys.readouterr().out


def test_tokenize_help_says_exactly_what_is_supported(capsys):
    from tokenwalk.text.pretokenize import supported_pre_names

    text = _help(capsys, "tokenize")
    supported = text[text.index("tokenizer.ggml.model, supported:"):text.index("refused in one line (exit")]
    assert [line.split()[0] for line in supported.splitlines()[1:] if line.strip()] == list(SUPPORTED_MODELS)
    listed = text[text.index("in llama.cpp:"):text.index("refused in one line:")]
    names = [n for n in re.split(r"[\s,]+", listed.replace("in llama.cpp:", "")) if n]
    assert names == supported_pre_names()
    refused = text[text.index("refused in one line:"):text.index("example:")]
    for kind in REFUSED_TYPES:
        assert REFUSED_TYPES[kind] in refused
    for model in REFUSED_MODELS:
        assert f"  {model} " in text
    # every value the help lists cuts a text (the old help named Qwen and Llama 3 and refused them)
    for name in names:
        assert "".join(pre_tokenize("Qwen 3.6, 35B-A3B: 'ok'  \n", name)) == "Qwen 3.6, 35B-A3B: 'ok'  \n"


def test_generate_help_names_the_engines_architectures(capsys):
    from tokenwalk.native.supported import ARCHITECTURE_NAMES, WEIGHT_TYPES

    text = _help(capsys, "generate")
    assert "general.architecture llama or gemma3 or qwen2;" in text and ARCHITECTURE_NAMES == ("llama", "gemma3", "qwen2")
    assert ", ".join(WEIGHT_TYPES) in text and "tokenizer.ggml.model gpt2, llama, gemma4" in text


def test_cli_tokenize_a_qwen_vocabulary_and_refuse_a_bert_one(capsys):
    import json

    from tokenwalk.cli import main

    assert main(["tokenize", "--model", str(_vocab("qwen2")), "Hello world 123", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pieces"] == ["Hello", " world", " ", "1", "2", "3"]
    assert main(["tokenize", "--model", str(_vocab("bert-bge")), "Hello"]) == 2
    err = capsys.readouterr().err.strip()
    assert "tokenizer.ggml.model 'bert' is not supported" in err and "WordPiece" in err and "\n" not in err


def test_the_pages_picked_vocabulary_gives_the_command_lines_ids(capsys):
    """The tokenizer figure's picked GGUF (tokenwalk_app.entry, as the worker calls it):
    the header read from growing slices of the file, then the ids `tokenwalk tokenize
    --no-special --no-bos` prints for the same text."""
    import json

    from tokenwalk.cli import main
    from tokenwalk_app import entry

    path = _vocab("qwen2")
    data = path.read_bytes()
    first = json.loads(entry.call_gguf(data[:1 << 20], len(data), "Qwen2.5-Coder.gguf", "load_gguf_tokenizer"))
    assert first["ok"]["need_bytes"] > 1 << 20
    info = json.loads(entry.call_gguf(data, len(data), "Qwen2.5-Coder.gguf", "load_gguf_tokenizer"))["ok"]
    assert info == {"name": "Qwen2.5-Coder.gguf", "model": "gpt2", "pre": "qwen2", "vocabulary": 151_936,
                    "vocabulary_text": "151,936"}
    text = "Patient: 72 y/o, eGFR 38 mL/min; metformin 1000 mg twice daily?\n\n  北京 😀 <|im_end|>"
    page = json.loads(entry.call("tokenize_gguf", json.dumps([text, None])))["ok"]
    assert main(["tokenize", "--model", str(path), text, "--json", "--no-special", "--no-bos"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert page["ids"] == cli["ids"] and page["tokens"] == len(cli["ids"]) > 20
    # the pieces are the text, but for a token that cuts a character, shown as its bytes (北)
    assert "".join(page["pieces"]) == text.replace("北", "\\xe5\\x8c\\x97")
    refused = json.loads(entry.call_gguf(_vocab("bert-bge").read_bytes(), 10**6, "bge.gguf", "load_gguf_tokenizer"))
    assert "tokenizer.ggml.model 'bert' is not supported" in refused["error"] and "\n" not in refused["error"]
    assert json.loads(entry.call_gguf(b"", 0, "x", "os.system")) == {"error": "unknown function 'os.system'"}
