"""The Manim figures (4 residual-layer, 7 decode-head, 8 kv-cache) draw GPT-3's sizes as
tokenwalk gives them, and nothing of their own. Fast: no rendering here."""

from __future__ import annotations

import importlib

import pytest

from tests.support.context import default_context, fresh_context
from tests.support.data_substitute import substitute_data_file
from tokenwalk.specs import model as model_spec

MODULES = ["residual_layer", "decode_head", "kv_cache"]
SIZE_FIELDS = ["layers", "embedding_length", "head_count", "head_dim", "feed_forward_length", "vocab_size"]


def _module(name):
    return importlib.import_module(f"figures.{name}")


@pytest.mark.parametrize("name", MODULES)
def test_contract(name):
    m = _module(name)
    assert m.KIND == "M" and m.RENDERER == "manim"
    assert m.ID == name.replace("_", "-")
    alt = m.alt(m.inputs(default_context()))
    assert "GPT-3" in alt and "not Qwen" in alt


def test_residual_layer_inputs_are_gpt3_preset():
    """Figure 4: 96 layers, d 12,288, 96 heads of 128, MLP 49,152, vocabulary 50,257."""
    spec = model_spec.load_model("gpt3-175b")
    got = _module("residual_layer").inputs(default_context())
    for field in SIZE_FIELDS:
        assert got[field] == getattr(spec, field), field


def test_kv_cache_softmaxes_per_step():
    """Figure 8: 96 layers x 96 heads = 9,216 softmaxes per step, from the preset."""
    spec = model_spec.load_model("gpt3-175b")
    got = _module("kv_cache").inputs(default_context())
    assert got["softmaxes_per_step"] == spec.layers * spec.head_count
    assert got["layers"] == spec.layers and got["head_count"] == spec.head_count


def test_decode_head_toy_weights_follow_attention_row():
    """Figure 7: toy numbers on a 7-token sentence; weights are tokenwalk's softmax of the
    attention-row figure's scores (warfarin takes the largest share) and sum to 1."""
    from tokenwalk.physics.attention import softmax

    got = _module("decode_head").inputs(default_context())
    assert got["toy"] is True
    assert len(got["tokens"]) == len(got["scores"]) == len(got["keys"]) == len(got["values"])
    assert got["weights"] == pytest.approx(softmax(got["scores"]))
    assert sum(got["weights"]) == pytest.approx(1.0)
    top = max(range(len(got["weights"])), key=got["weights"].__getitem__)
    assert got["tokens"][top] == "warfarin"
    # the output is the weighted sum of the drawn value entries
    for j, out in enumerate(got["output"]):
        assert out == pytest.approx(sum(w * v[j] for w, v in zip(got["weights"], got["values"], strict=False)))
    assert got["head_dim"] == model_spec.load_model("gpt3-175b").head_dim


@pytest.mark.parametrize("name", MODULES)
def test_changing_the_preset_changes_inputs(name, monkeypatch):
    """Another layer count and head size in the preset reach inputs() and the alt text."""
    before = _module(name).inputs(default_context())
    substitute_data_file(monkeypatch, "models/gpt3-175b.json", lambda data: dict(data, layers=48, head_dim=64))
    after = _module(name).inputs(fresh_context())
    assert after["head_dim"] == 64 != before["head_dim"]
    alt = _module(name).alt(after)
    if name != "decode_head":  # figure 7 draws one head of one layer: no layer count
        assert after["layers"] == 48
        assert "48" in alt
    if "softmaxes_per_step" in after:
        assert after["softmaxes_per_step"] == 48 * after["head_count"]
    if name == "decode_head":
        assert "√64" in alt


def test_quality_joins_inputs(monkeypatch):
    """The render quality is part of inputs(), hence of the build's cache key."""
    from figures import _manim

    monkeypatch.setenv(_manim.QUALITY_ENV, "low")
    assert _module("kv_cache").inputs(default_context())["quality"] == "low"
    monkeypatch.setenv(_manim.QUALITY_ENV, "bogus")
    with pytest.raises(ValueError, match="unknown Manim quality"):
        _manim.quality_name()
