"""Numbers chapters 6 and 7 print (article/numbers: laptop.py spec_*, laptop_free_*; engine.py):
each checked against its formula on stand-ins or against its inputs, and against the sentence it
serves where the sentence states an arithmetic fact."""

from __future__ import annotations

import pytest

from article.toys import model_round_cost
from tests.support.content import default_numbers, reader_words, render_chapters
from tokenwalk.physics.speculative import round_cost


def _text(chapter: str) -> str:
    return reader_words(render_chapters(default_numbers())[chapter])


# --- Chapter 6, "Three ways to wait less", tab "Speculative decoding" -------------------------

def test_speculative_round_inputs_come_from_the_round_cost():
    """spec_{moe,dense}_{draft,verify,bytes_per_token}_gb = model_round_cost(...) fields / 1e9."""
    from tokenwalk.specs.model import load_model

    n = default_numbers()
    for key, preset in (("moe", "qwen3.6-35b-a3b"), ("dense", "qwen3.8-27b")):
        cost = model_round_cost(load_model(preset))
        assert n[f"spec_{key}_draft_gb"] == cost.draft_bytes / 1e9
        assert n[f"spec_{key}_verify_gb"] == cost.verify_bytes / 1e9
        assert n[f"spec_{key}_bytes_per_token_gb"] == cost.bytes_per_token / 1e9
    # the bytes per token are (draft + check) / tokens per round, and the speed factor is their ratio
    assert n["spec_moe_bytes_per_token_gb"] == pytest.approx(
        (n["spec_moe_draft_gb"] + n["spec_moe_verify_gb"]) / n["spec_tokens_per_round"])
    assert n["spec_moe_speedup"] == pytest.approx(n["qwen_bytes_per_token_gb"] / n["spec_moe_bytes_per_token_gb"])
    assert n["spec_moe_verify_gb"] / n["qwen_bytes_per_token_gb"] == pytest.approx(n["spec_moe_verify_over_step"])


def test_round_cost_formula_on_stand_ins():
    """On stand-ins: 4 draft steps of 0.5 GB, a 10 GB dense check, 2.7731 tokens per round."""
    cost = round_cost(0.7, 4, step_bytes=10e9, draft_step_bytes=0.5e9)
    assert cost.draft_bytes == 2e9 and cost.verify_bytes == 10e9
    assert cost.bytes_per_token == pytest.approx(12e9 / 2.7731)


def test_the_moe_loses_a_few_percent_and_the_sentence_says_a_loss():
    """A factor under 1 is a loss, not break-even; the inputs are shown."""
    n = default_numbers()
    assert n["spec_moe_loss_share"] == 1 - n["spec_moe_speedup"]
    assert 0 < n["spec_moe_loss_share"] < 0.2
    assert 2.0 < n["spec_moe_verify_over_step"] < 2.5  # the check reads about 2.1 plain steps
    text = _text("06-laptop.md")
    assert "roughly breaks even" not in text
    assert f"about {round(100 * n['spec_moe_loss_share'])} % slower" in text  # (split() folds the NBSP)
    assert f"with the draft's {n['spec_moe_draft_gb']:.1f} GB" in text
    assert f"The check reads {n['spec_moe_verify_gb']:.1f} GB" in text


def test_moe_check_wakes_almost_every_possible_expert():
    """spec_moe_check_experts: expected distinct experts of gamma + 1 tokens, at most (gamma + 1) x 8."""
    from tokenwalk.physics.moe import expected_distinct_experts

    n = default_numbers()
    assert n["spec_moe_check_experts"] == expected_distinct_experts(n["spec_gamma"] + 1, n["qwen_experts"],
                                                                    n["qwen_experts_used"])
    assert n["qwen_experts_used"] < n["spec_moe_check_experts"] <= n["spec_check_max_experts"]


# --- Chapter 6, "Three ways to wait less", tab "Retrieval" ----------------------------------

def test_retrieval_delay_uses_the_speed_it_prints():
    """The delay is tokens / the prefill speed the sentence names (93, not 90)."""
    n = default_numbers()
    text = _text("06-laptop.md")
    assert f"At the measured {n['prefill_tok_s_moe']} tok/s" in text
    assert f"about {round(n['rag_added_tokens'] / n['prefill_tok_s_moe'])} seconds" in text


def test_three_ways_section_says_which_wait_each_shortens():
    """Prefix caching and retrieval shorten the time to first token, not decoding."""
    text = _text("06-laptop.md")
    assert "Tricks for faster decoding" not in text and "tricks for faster decoding" not in text.lower()
    assert "Prefix caching and retrieval shorten the wait for the first token" in text


# --- Chapter 7, after the envelope ----------------------------------------------------------

def test_dense_fit_is_what_the_applications_leave_free():
    """Dense weights that fit are the memory left beside the 32 GB in use,
    and their ceiling is bandwidth / that size."""
    n = default_numbers()
    assert n["laptop_free_before_load_gb"] == n["laptop_memory_gb"] - n["system_apps_gb"]
    assert n["laptop_free_dense_ceiling_tok_s"] == n["laptop_bandwidth_gbs"] / n["laptop_free_before_load_gb"]
    text = _text("07-numbers.md")
    assert f"{n['dense_fit_gb']:.0f} GB of dense weights" not in text
    assert (f"{n['laptop_bandwidth_gbs']} ÷ {round(n['laptop_free_before_load_gb'])} = "
            f"{n['laptop_free_dense_ceiling_tok_s']:.1f} tokens a second") in text


def test_the_trace_says_whose_tokenizer_counted_the_prompt():
    """The trace's token count is SmolLM2's, and the caption says so."""
    n = default_numbers()
    text = _text("07-numbers.md")
    step = text[text.index("(3) the tokenizer"):text.index("(4) each ID")]
    assert f"{n['request_prompt_tokens']:,}" in step
    assert f"{n['token_count_tokenizer']}'s tokenizer" in step


# --- Chapter 7, "TokenWalk", the aside on `tokenwalk measure` --------------------------------


def test_engine_compute_units_read_from_the_device_name():
    """The aside on `tokenwalk measure` says how many cores the build machine gave PoCL."""
    import re

    n = default_numbers()
    if not n.get("engine"):
        pytest.skip("no engine.json: the build machine was not measured")
    units = re.search(r"(\d+) compute units?", n["engine_device"])
    assert n["engine_compute_units"] == (int(units.group(1)) if units else None)

