"""The namespace `n` the chapters are written against (article.numbers)."""

from __future__ import annotations

import re
import shutil
import time

from tests._content_helpers import CONTENT, chapter_files, default_numbers


def test_every_name_the_chapters_use_exists():
    used = {m for p in chapter_files() for m in re.findall(r"\bn\.(\w+)", p.read_text(encoding="utf-8"))}
    missing = sorted(used - set(default_numbers()))
    assert not missing, f"the chapters use names that article_numbers() does not give: {missing}"


def test_the_request_history_is_about_six_thousand_tokens():
    """Issue 4: a synthetic history of about 6,000 tokens, counted by a real tokenizer."""
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
