"""Errors of a full read that were arithmetic: the operands the page prints give the
result it prints, one quantity prints one value, and no row derives a number from itself."""

from __future__ import annotations

import re

import pytest

from tests.support.content import render_chapters
from tests.support.data_substitute import substitute_data_file
from tokenwalk import format as fmt


def _block(text: str, start: str, end: str = "\n:::") -> str:
    i = text.index(start)
    return text[i:text.index(end, i)]


def test_dense27_printed_bits_times_parameters_give_the_printed_size(numbers):
    """'At 4.92 bits per weight, 27.3 billion parameters make 16.8 GB' (it printed 4.9, which
    makes 16.7): the printed operands, multiplied, round to the printed size."""
    aside = _block(render_chapters(numbers)["04-model-in-memory.md"], "**Parameters are not gigabytes.**")
    bits, params, size = re.search(r"At ([\d.]+) bits per weight,\s+([\d.]+) billion parameters make a file of "
                                   r"([\d.]+) GB", aside).groups()
    assert fmt.fixed(float(params) * float(bits) / 8, 1) == size == fmt.fixed(numbers["dense27_size_gb"], 1)
    # the slide's bytes per token are the same 16 GB the rest of the page prints, not the file's 16.8
    per_token = fmt.fixed(numbers["dense27_bytes_per_token_gb"], 0)
    assert f"reads about\n{per_token} GB per token" in aside


def test_dense27_prints_one_bytes_per_token_and_its_share_counts_it(numbers):
    chapters = render_chapters(numbers)
    text = "\n".join(chapters.values())
    per_token = round(numbers["dense27_bytes_per_token_gb"])
    assert per_token != round(numbers["dense27_size_gb"])
    assert f"{round(numbers['dense27_size_gb'])} GB" not in text  # the file rounded, once printed as per token
    for match in re.finditer(r"(?<![\d.])(\d+) GB (?:a token|per token|cross the bus for each)", text):
        assert int(match.group(1)) in (per_token, round(numbers["laptop_free_before_load_gb"])), match.group(0)
    assert numbers["laptop_share_dense"] == pytest.approx(
        numbers["decode_tok_s_dense"] * numbers["dense27_bytes_per_token_gb"] / numbers["laptop_bandwidth_gbs"])


def test_published_shares_count_what_a_token_reads():
    """An engineer's objection: a token reads one row of an untied embedding table, not all of
    it. Every run's share is tok/s x (file - embedding table) / bandwidth, the whole file only
    where the output head is that table."""
    from tokenwalk.timing.llama_bench import load_runs

    untied = 0
    for run in load_runs():
        if run.bandwidth_share is None:
            continue
        model = run.model
        table = 0 if model.tied_embeddings else model.vocab_size * model.embedding_length * model.bits_per_weight / 8
        assert run.bandwidth_share == pytest.approx(run.tok_s * (model.size_bytes - table)
                                                    / (run.machine.bandwidth_gbs * 1e9))
        untied += not model.tied_embeddings
    assert untied > 100


def test_envelope_prefill_row_does_not_divide_the_measurement_by_itself(numbers, monkeypatch):
    """The row divided 0.56e12 by 6e9 to get 93 tok/s, where 0.56e12 came from the measured 93.
    Now its ceiling comes from the spec sheet alone: a changed measurement moves the share,
    never the ceiling; and the printed operands give the printed ceiling."""
    from article.numbers import article_numbers

    row = next(line for line in render_chapters(numbers)["07-numbers.md"].splitlines()
               if line.startswith("| **Prefill**"))
    peak, flops, ceiling = re.search(r"\| ([\d.]+)e12 ÷ (\d+)e9 = ([\d,]+) tok/s", row).groups()
    assert fmt.comma(float(peak) * 1e12 / (float(flops) * 1e9)) == ceiling
    assert f"{numbers['prefill_tok_s_moe']:g}" in row and fmt.pct(numbers["laptop_prefill_peak_share"], 1) in row

    def slower(data):
        data["values"]["prefill_tok_s_moe"]["value"] = 60
        return data

    substitute_data_file(monkeypatch, "measurements/laptop.json", slower)
    changed = article_numbers()
    assert changed["env_prefill_ceiling_tok_s"] == numbers["env_prefill_ceiling_tok_s"]
    assert changed["laptop_prefill_peak_share"] == pytest.approx(60 / numbers["env_prefill_ceiling_tok_s"])


def test_closing_table_holds_the_two_numbers_of_the_first_paragraph(numbers):
    chapters = render_chapters(numbers)
    lede = chapters["01-why.md"].split("## The laptop")[0]
    closing = _block(chapters["07-numbers.md"], "::: figure closing-numbers")
    for name in ("q_request_ttft_s", "q_request_decode_tok_s"):
        assert numbers[name] in lede and numbers[name] in closing
    assert "six numbers" not in closing
