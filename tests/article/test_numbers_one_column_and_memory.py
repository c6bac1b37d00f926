"""Numbers chapters 03 and 04 print (article/numbers: toy.quant_levels_q4, laptop.published_share_q1/q3), and the facts
those chapters now state (section names in each docstring)."""

from __future__ import annotations

import statistics

from tests.support.content import default_numbers, reader_words, render_chapters
from tokenwalk.specs.model import load_model
from tokenwalk.timing.llama_bench import published_bandwidth_shares, published_median_bandwidth_share


def test_quant_levels_q4_is_two_to_the_bits():
    """Section "The GGUF file and quantization": a 4-bit integer has 2**4 = 16 values,
    the levels quant_level_min_4bit .. quant_level_max_4bit."""
    real = default_numbers()
    assert real["quant_levels_q4"] == 2 ** real["quant_bits_q4"] == 16
    assert real["quant_levels_q4"] == real["quant_level_max_4bit"] - real["quant_level_min_4bit"] + 1


def test_published_share_quartiles_from_the_data():
    """Section "Bandwidth and the memory ladder": spec sheets are peaks; the middle half of the
    published dense decode runs reaches about 57 % to 76 % of the printed bandwidth, around the
    median the decode section quotes (each run counted with the bytes a token reads: the file
    less its embedding table)."""
    n = default_numbers()
    shares = sorted(entry["share"] for entry in published_bandwidth_shares())
    q1, _, q3 = statistics.quantiles(shares, n=4)
    assert (n["published_share_q1"], n["published_share_q3"]) == (q1, q3)
    assert n["published_share_q1"] < published_median_bandwidth_share() < n["published_share_q3"]
    assert (round(100 * q1), round(100 * q3)) == (56, 76)
    inside = [s for s in shares if q1 <= s <= q3]
    assert abs(len(inside) - len(shares) / 2) <= 2


def test_model_in_memory_says_norms_stay_f32_too():
    """Section "The GGUF file and quantization" (a corrected error): the router is not the only
    F32 tensor; the normalisation weights are F32 too (figure 9 lists F32 among the formats)."""
    assert "F32" in load_model("qwen3.6-35b-a3b").tensor_types
    text = render_chapters(default_numbers())["04-model-in-memory.md"]
    assert "Only the router" not in text
    assert "the router, `blk.0.ffn_gate_inp`, and the\nnormalisation weights" in text


def test_model_in_memory_states_spec_peaks_with_the_quartiles():
    """Section "Bandwidth and the memory ladder": the dropped "real systems reach 60-80 % of
    spec peaks" comes back, computed: the quartiles of the published runs and the laptop's shares."""
    n = default_numbers()
    text = reader_words(render_chapters(n)["04-model-in-memory.md"])
    assert f"between {round(100 * n['published_share_q1'])} % and {round(100 * n['published_share_q3'])} %" in text
    assert f"{round(100 * n['laptop_share_moe'])} % with the MoE" in text
