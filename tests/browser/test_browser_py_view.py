"""tokenwalk_app.view, the simulator's result panel (the build's static rendering and
the page's live one): the timeline and the memory bar are to scale, text is escaped, the
three numbers are the walk's."""

from __future__ import annotations

import re

from tokenwalk_app import entry as browser
from tokenwalk_app.view import fmt_s, live_summary, walk_html

ARTICLE = {"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": 6634, "output_tokens": 300,
           "num_ctx": 16384}


def _widths(html: str, bar_title: str) -> list[float]:
    block = html[html.index(bar_title):]
    bar = block[block.index('class="tw-bar"'):block.index("</div>")]
    return [float(w) for w in re.findall(r"width:([0-9.]+)%", bar)]


def test_timeline_and_memory_bars_are_to_scale():
    walk = browser.simulate(ARTICLE)
    html = walk_html(walk)
    timeline = _widths(html, "Timeline to scale")
    assert abs(sum(timeline) - 100) < 1e-3
    load = walk["stages"][0]
    assert load["name"] == "load" and abs(timeline[0] - 100 * load["seconds"] / walk["total_s"]) < 1e-3
    memory = _widths(html, "Memory to scale")
    m = walk["memory"]
    assert abs(memory[1] - 100 * m["weights_bytes"] / m["total_bytes"]) < 1e-3
    assert abs(sum(memory) - 100) < 1e-3, "system + weights + KV + free = the machine's memory"


def test_three_numbers_are_the_walks():
    walk = browser.simulate(ARTICLE)
    html = walk_html(walk)
    for key, value in (("load", fmt_s(walk["load_s"])), ("ttft", fmt_s(walk["ttft_s"]))):
        cell = html[html.index(f'data-number="{key}"'):]
        assert f'<span class="tw-big"><span data-walk-key="{key}_s">{value}</span></span>' in cell[:300]
    assert f"{walk['decode_tok_s']:.3g} tok/s" in html


def test_a_cold_start_says_its_first_token_comes_after_the_load():
    """The default walk is a cold start whose time to first token excludes the load: the
    panel says so and gives the first token's time from the request, the load included (the
    article's time to first token is counted from a model in memory, the load comes first);
    a warm walk has no load to come after."""
    cold = browser.simulate(ARTICLE)
    assert not cold["warm"] and cold["load_s"] > 0
    assert abs(cold["ttft_s"] - sum(s["seconds"] for s in cold["stages"] if s["name"] != "load"
                                    and s["name"] != "decode")) < 1e-6
    cell = walk_html(cold)[walk_html(cold).index('data-number="ttft"'):]
    from_request = fmt_s(cold["load_s"] + cold["ttft_s"])
    assert f'class="tw-sub">after the load: {from_request} from the request; prefill' in cell[:400]
    assert f"cold start: the first token {from_request} after the request, the load included" in walk_html(cold)
    assert f"cold start, first token {from_request} after the request" in live_summary(cold)
    warm = walk_html(browser.simulate({**ARTICLE, "warm": True}))
    assert "after the load" not in warm and "cold start" not in warm


def test_names_are_escaped_and_an_overfull_machine_says_so():
    walk = browser.simulate({**ARTICLE, "machine": "custom", "bandwidth_gbs": 100, "fp16_tflops": 10,
                             "memory_gb": 16})
    walk["model"] = "<script>alert(1)</script>.gguf"
    html = walk_html(walk, browser.explain(walk))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "does not fit" in html
    assert abs(sum(_widths(html, "Memory to scale")) - 100) < 1e-3, "scaled to what is asked when it is more"


def test_seconds_read_well():
    assert [fmt_s(x) for x in (0, 0.0066, 0.085, 4.21, 74.78, 155.9)] == ["0 s", "6.6 ms", "85 ms", "4.21 s",
                                                                            "74.8 s", "156 s"]
