"""One route from data to page: a number that the prose and a figure both print comes out
as the same string, even when a data file changes (issue 11: at 3,345 GB/s the paragraph
said 296 tokens while figure 16 said 295)."""

from __future__ import annotations

import re

import pytest

from tests._content_helpers import render_chapters
from tests._data_substitute import clear_tokenwalk_caches


@pytest.fixture
def h100_at_3345(monkeypatch):
    """The H100 preset read with a bandwidth of 3,345 GB/s (as an edit of h100-sxm.json)."""
    from tokenwalk.specs import machine as machine_spec
    from tokenwalk.specs import schema as spec_json

    real = spec_json.read_preset

    def patched(folder, name):
        data, label = real(folder, name)
        if folder == "machines" and name == "h100-sxm":
            data = dict(data, bandwidth_gbs=3345)
        return data, label

    monkeypatch.setattr(spec_json, "read_preset", patched)
    monkeypatch.setattr(machine_spec, "read_preset", patched)
    clear_tokenwalk_caches()
    yield
    monkeypatch.undo()
    clear_tokenwalk_caches()


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
    from tests._context import default_context

    ctx = default_context()
    assert balance_point.inputs(ctx)["balance_tokens"] == ctx.n["balance_tokens_fp16"]
    assert tile.inputs(ctx)["tile_kb"] == ctx.n["tile_kb"]


def test_no_figure_module_names_a_preset():
    from pathlib import Path

    from tokenwalk.specs.machine import list_machine_presets
    from tokenwalk.specs.model import list_model_presets

    names = set(list_model_presets()) | set(list_machine_presets())
    for path in sorted((Path(__file__).resolve().parent.parent / "figures").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        named = sorted(n for n in names if f'"{n}"' in text or f"'{n}'" in text)
        assert not named, f"{path.name} chooses a preset ({', '.join(named)}): take it from ctx.scenario"
