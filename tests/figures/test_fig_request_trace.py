"""Figure 29, request-trace: about 6,550 tokens; 13 chunks of 512; about 70 s; 134 MB of KV cache;
248,320 logits; about 1.9 GB and 85 ms per step; about 300 steps, 26 s (Qwen3.6 on the laptop).
Each number the article also prints is drawn with the article's string (tests/article/test_article_one_value.py)."""

import pytest

from article.context import Context
from article.numbers import article_numbers
from figures import request_trace
from tests.support.context import default_context
from tests.support.schematics_svg import NS, check_alt_and_phone, check_labels, rects, render, rendered_once, words
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model
from tokenwalk.walk import Request, walk_request

fig = rendered_once(request_trace)


@pytest.fixture(scope="module")
def draft_sized(tmp_path_factory):
    """The trace at the draft's request size, 6,550 prompt tokens, through the same code: the
    figure reads the walk from the namespace, here one holding that request's walk."""
    walk = walk_request(load_model("qwen3.6-35b-a3b"), load_machine("laptop-860m"),
                        Request(prompt_tokens=6550, output_tokens=300, num_ctx=16_384))
    n = request_trace.inputs(Context({**default_context().n, "walk": walk.to_dict(), "ollama_port": 11434}))
    return render(request_trace, tmp_path_factory.mktemp("request-trace-6550"), n)


def test_fig29_numbers_at_the_drafts_size(draft_sized):
    n, _, root = draft_sized
    assert n["chunk_count"] == 13 and n["chunk_tokens"] == 512
    assert round(n["kv_bytes"] / 1e6) == 134
    assert n["vocab"] == 248_320 and n["width"] == 2048 and n["layers"] == 40 and n["kv_layers"] == 10
    assert n["ttft_s"] == pytest.approx(70, rel=0.08)
    assert n["step_bytes"] == pytest.approx(2.1e9, rel=0.05)  # 1.98 GB of weights + the cache
    assert n["step_s"] == pytest.approx(0.085, rel=0.06)
    assert n["decode_steps"] == 300 and n["decode_s"] == pytest.approx(26, rel=0.06)
    check_labels(root, ("6,550 tokens", "13 chunks of 512", "134 MB of KV cache", "248,320 logits",
                        "300 steps", "26.1 s", "localhost:11434", "2,048 numbers each", "all 40 layers",
                        "the 10 attention layers"))


def test_fig29_the_articles_request_matches_the_articles_numbers(fig):
    """The default rendering walks the request of content/request/, as the article's text does."""
    inputs, _, root = fig
    n = article_numbers()
    assert inputs["prompt_tokens"] == n["request_prompt_tokens"]
    assert inputs["chunk_count"] == n["request_prefill_chunks"]
    assert inputs["prefill_s"] == pytest.approx(n["request_prefill_s"])
    assert inputs["kv_bytes"] / 1e6 == pytest.approx(n["request_kv_prompt_mb"])
    assert inputs["step_bytes"] / 1e9 == pytest.approx(n["request_step_gb"])
    assert inputs["decode_s"] == pytest.approx(n["request_decode_s"])
    text = words(root)
    assert f"{round(n['request_kv_prompt_mb'])} MB of KV cache" in text
    assert f"{n['request_step_ms']:.3g} ms" in text
    assert f"{n['request_prompt_tokens']:,} tokens, by {n['token_count_tokenizer'].split('-')[0]}’s count" in text


def test_fig29_ten_steps_in_order(fig):
    _, _, root = fig
    assert [int(g.get("data-step")) for g in root.findall(".//svg:g[@class='trace-step']", NS)] == list(range(1, 11))


def test_fig29_time_strip_to_scale(fig):
    """Load, time to first token and writing: widths are seconds at one scale (within 1 %)."""
    n, _, root = fig
    px_per_s = float(root.get("data-px-per-s"))
    for part, seconds in (("load", n["load_s"]), ("first-token", n["ttft_s"]), ("decode", n["decode_s"])):
        (bar,) = rects(root, part=part)
        assert float(bar.get("width")) == pytest.approx(seconds * px_per_s, rel=0.01)
    assert round(n["load_s"]) == 55


def test_fig29_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(request_trace, n, root,
                        ("Qwen3.6 35B-A3B", "Radeon 860M", "num_ctx 16,384", "13 chunks of 512", "248,320 logits"))
