"""One route from data to page: a number that the prose and a figure both print comes out
as the same string, even when a data file changes (at 3,345 GB/s the paragraph
said 296 tokens while figure 16 said 295)."""

from __future__ import annotations

import re

import pytest

from tests.support.content import render_chapters
from tests.support.data_substitute import substitute_data_file


@pytest.fixture
def h100_at_3345(monkeypatch):
    """The H100 preset read with a bandwidth of 3,345 GB/s (as an edit of h100-sxm.json)."""
    substitute_data_file(monkeypatch, "machines/h100-sxm.json", lambda data: dict(data, bandwidth_gbs=3345))


def test_the_balance_point_prints_the_same_in_the_paragraph_and_in_figure_16(h100_at_3345):
    from article.context import build_context
    from figures import balance_point

    ctx = build_context()
    assert ctx.scenario.h100_example.machine.bandwidth_gbs == 3345
    fig = balance_point.inputs(ctx)
    chapter = render_chapters(ctx.n)["05-prefill-decode.md"]
    prose = set(re.findall(r"cross where the first divided by the second gives about (\d[\d,]*) tokens", chapter))
    assert prose, "the paragraph that names the crossing is gone"
    assert prose == {fig["balance_label"]}, (prose, fig["balance_label"])
    assert fig["balance_label"] in balance_point.alt(fig)


def test_figures_take_the_namespace_numbers_not_their_own():
    """Figures that print a number of the namespace receive that very number."""
    from figures import balance_point, tile
    from tests.support.context import default_context

    ctx = default_context()
    assert balance_point.inputs(ctx)["balance_tokens"] == ctx.n["balance_tokens_fp16"]
    assert tile.inputs(ctx)["tile_kb"] == ctx.n["tile_kb"]


def test_no_figure_module_names_a_preset():
    from pathlib import Path

    from tokenwalk.specs.machine import list_machine_presets
    from tokenwalk.specs.model import list_model_presets

    names = set(list_model_presets()) | set(list_machine_presets())
    for path in sorted((Path(__file__).resolve().parents[2] / "figures").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        named = sorted(n for n in names if f'"{n}"' in text or f"'{n}'" in text)
        assert not named, f"{path.name} chooses a preset ({', '.join(named)}): take it from ctx.scenario"


# ---- one case per time-lane or bytes figure that takes its numbers from n:
# the string the prose prints (the chapter's own filter on the same name) must be in the
# chapter and, verbatim, in the figure's alt text at the place that states that quantity.

def _prose_and_alt(module):
    from tests.support.context import default_context

    ctx = default_context()
    chapter = render_chapters(ctx.n)["05-prefill-decode.md" if module.ID != "memory-ladder"
                                     else "04-model-in-memory.md"]
    fig = module.inputs(ctx)
    return ctx.n, chapter, module.alt(fig)


def _both(chapter: str, alt: str, prose: str, in_alt: str) -> None:
    assert prose in chapter, f"the prose no longer prints {prose!r}"
    assert in_alt.format(prose) in alt, (in_alt.format(prose), alt)


def test_figure_17_prints_the_prefill_step_and_the_layer_times_as_the_prose_does():
    from figures import accounting_execution
    from tokenwalk import format as fmt

    n, chapter, alt = _prose_and_alt(accounting_execution)
    _both(chapter, alt, fmt.count(n["d7_prefill_step_ms"]), "TFLOP/s = {} ms; the step lasts the larger")
    _both(chapter, alt, fmt.fixed(n["d7_layer_memory_ms"], 2), "larger of {} ms of bytes")
    _both(chapter, alt, fmt.fixed(n["d7_layer_compute_ms"], 1), "and {} ms of operations")


def test_figure_14_prints_the_decode_trip_and_the_prefill_arithmetic_as_the_prose_does():
    from figures import overlap
    from tokenwalk import format as fmt

    n, chapter, alt = _prose_and_alt(overlap)
    _both(chapter, alt, fmt.fixed(n["d7_step_memory_ms"], 1), "back to back in {} ms")
    _both(chapter, alt, fmt.count(n["d7_prefill_step_ms"]), "the SMs compute for {} ms")


def test_figure_20_prints_the_four_steps_as_the_prose_does():
    from figures import chunked_prefill
    from tokenwalk import format as fmt

    n, chapter, alt = _prose_and_alt(chunked_prefill)
    _both(chapter, alt, fmt.fixed(n["chunk_users_step_ms"], 1), "users decoding: {} ms")
    _both(chapter, alt, fmt.pct(n["chunk_users_sm_share"]), "SMs busy {}.")
    _both(chapter, alt, fmt.count(n["chunk_mixed_ms"]), "prompt tokens: {} ms")
    _both(chapter, alt, fmt.fixed(n["chunk_separate_ms"], 1), "= {} ms, two trips")


def test_figure_21_prints_the_decode_speeds_as_the_prose_does():
    from figures import kv_growth
    from tokenwalk import format as fmt

    n, chapter, alt = _prose_and_alt(kv_growth)
    speeds = [fmt.count(g["tok_s"]) for g in n["kv_growth"]]
    assert ", ".join(speeds) in chapter, "the prose no longer lists the speeds"  # one run in the prose
    for g, speed in zip(n["kv_growth"], speeds, strict=True):
        assert f"{fmt.comma(g['context'])} tokens: {speed} tok/s" in alt


def test_figure_11_prints_the_load_times_as_the_prose_does():
    from figures import memory_ladder
    from tokenwalk import format as fmt

    n, chapter, alt = _prose_and_alt(memory_ladder)
    _both(chapter, alt, f"{fmt.count(n['d7_nvme_s'])} s", ": {}, once, at load")
    _both(chapter, alt, f"{int(round(n['d7_pcie_ms'], -1))} ms", ": {}, once, at load")
