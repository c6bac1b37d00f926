"""The namespace `n` the chapters are written against (article.numbers)."""

from __future__ import annotations

import re
import shutil
import time

from tests.support.content import CONTENT, chapter_files, default_numbers


def test_every_name_the_chapters_use_exists():
    used = {m for p in chapter_files() for m in re.findall(r"\bn\.(\w+)", p.read_text(encoding="utf-8"))}
    missing = sorted(used - set(default_numbers()))
    assert not missing, f"the chapters use names that article_numbers() does not give: {missing}"


def test_the_request_history_is_about_six_thousand_tokens():
    """A synthetic history of about 6,000 tokens, counted by a real tokenizer."""
    n = default_numbers()
    assert 5000 <= n["request_history_tokens"] <= 7500
    assert n["request_prompt_tokens"] > n["request_history_tokens"] + n["request_question_tokens"]
    assert n["token_count_tokenizer"] and n["token_count_vocab"] > 1000


def test_token_counts_and_times_follow_the_request_files(tmp_path):
    """Chapter 1's token counts and time to first token come from tokenizing content/request/."""
    from article.numbers import article_numbers

    folder = tmp_path / "request"
    shutil.copytree(CONTENT / "request", folder)
    history = folder / "patient-history.md"
    history.write_text(history.read_text(encoding="utf-8") + "\n\n" + "Clinic note: INR stable, no change. " * 200,
                       encoding="utf-8")
    base, longer = default_numbers(), article_numbers(request_dir=folder)
    assert longer["request_history_tokens"] > base["request_history_tokens"] + 1000
    assert longer["request_prompt_tokens"] - base["request_prompt_tokens"] == (
        longer["request_history_tokens"] - base["request_history_tokens"])
    assert longer["request_ttft_s"] > base["request_ttft_s"]
    assert longer["request_kv_prompt_mb"] > base["request_kv_prompt_mb"]


def test_the_request_is_counted_with_llamacpps_qwen35_vocabulary():
    """The request's count is made with the nearest Qwen vocabulary the project
    reads (llama.cpp's qwen35 test file), not SmolLM2's; qwen2's test file, the same entries under
    the older rule, counts this text the same; SmolLM2's smaller vocabulary counts more."""
    import json

    from article.numbers.request import _chat_text
    from article.scenario import read_request
    from tokenwalk.text.tokenizer import load_tokenizer

    n = default_numbers()
    spec = json.loads((CONTENT / "request" / "request.json").read_text(encoding="utf-8"))
    assert spec["count_vocab_file"].endswith("/ggml-vocab-qwen35.gguf")
    assert (n["token_count_file"], n["token_count_pre"], n["token_count_vocab"]) == ("ggml-vocab-qwen35.gguf", "qwen35", 151_936)
    assert n["qwen_vocab"] == 248_320 > n["token_count_vocab"]  # not Qwen3.6's own, and the article says so
    r = read_request()
    text, _ = _chat_text(r.system, r.history + "\n\n" + r.question)
    root = CONTENT.parent
    qwen2 = load_tokenizer(root / ".cache/llama-vocab/ggml-vocab-qwen2.gguf")
    assert qwen2.pre == "qwen2"
    assert len(qwen2.encode(text, parse_special=True)) == n["request_prompt_tokens"]
    smollm2 = load_tokenizer(root / spec["tokenizer_model_file"])
    assert len(smollm2.encode(text, parse_special=True)) > n["request_prompt_tokens"] + 100


def test_a_missing_count_vocabulary_is_one_line_naming_the_file_and_make_setup(tmp_path):
    import json

    import pytest

    from article.numbers import article_numbers
    from tokenwalk.errors import TokenwalkError

    folder = tmp_path / "request"
    shutil.copytree(CONTENT / "request", folder)
    spec = json.loads((folder / "request.json").read_text(encoding="utf-8"))
    spec["count_vocab_file"] = ".cache/llama-vocab/ggml-vocab-absent.gguf"
    (folder / "request.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(TokenwalkError) as error:
        article_numbers(request_dir=folder)
    assert str(error.value) == ("content/request/request.json: count_vocab_file .cache/llama-vocab/ggml-vocab-absent.gguf:"
                                " no such file (run `make setup` to fetch it)")


def test_the_engine_runs_keep_their_own_models_counts():
    """Only the article's count for Qwen3.6 moved: the build machine's runs print the prompt
    length their own tokenizers measured (tokenwalk/data/measurements/engine*.json)."""
    import json

    n = default_numbers()
    assert n["engine"] is not None, "tokenwalk/data/measurements/engine.json is committed"
    measured = json.loads((CONTENT.parent / "tokenwalk/data/measurements/engine.json").read_text(encoding="utf-8"))
    assert n["engine_prompt_tokens"] == measured["values"]["prompt_tokens"]["value"] != n["request_prompt_tokens"]


def test_the_chat_template_figure_shows_the_real_request():
    """Figure 2 is the request flattened by ChatML, from the request files (shortened history)."""
    n = default_numbers()
    text = n["chat_template_text"]
    system = (CONTENT / "request" / "system-prompt.txt").read_text(encoding="utf-8").strip()
    question = (CONTENT / "request" / "question.txt").read_text(encoding="utf-8").strip()
    assert text.startswith("<|im_start|>system\n" + system)
    assert question in text and text.endswith("<|im_start|>assistant\n")
    assert len(text) < len(n["chat_template_full_text"])


def test_article_numbers_is_fast():
    """The build calls article_numbers() on every run."""
    from article.numbers import article_numbers

    start = time.perf_counter()
    article_numbers()
    assert time.perf_counter() - start < 10
