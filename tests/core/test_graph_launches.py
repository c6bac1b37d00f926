"""A decode step's kernel launches (tokenwalk.physics.launches): the sum on stand-ins, the
table against llama.cpp's own graphs (tests/fixtures/llamacpp/graph_launches.json, counted
by count_graph_launches.py with the peer), and bad tables refused in one line."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.support.data_substitute import ChangedStore
from tests.support.paths import FIXTURES
from tokenwalk.errors import SpecError
from tokenwalk.physics.launches import LAUNCHES_FILE, decode_launches
from tokenwalk.specs.model import load_model

COUNTED = json.loads((FIXTURES / "llamacpp" / "graph_launches.json").read_text(encoding="utf-8"))
TOY = {"input": 2, "attention_layer": 10, "recurrent_layer": 20, "per_extra_expert": 3, "last_layer_extra": 1,
       "output": 4}


def _toy_store(**entry) -> ChangedStore:
    def change(data):
        data["architectures"]["toy"] = entry or dict(TOY)
        return data

    return ChangedStore(LAUNCHES_FILE, change)


def _model(**fields):
    return SimpleNamespace(**{"architecture": "toy", "layers": 8, "full_attention_interval": None,
                              "expert_used_count": 0, **fields})


def test_a_dense_stack_is_input_layers_and_output():
    launches = decode_launches(_model(), _toy_store())
    assert launches.per_step == 2 + 8 * 10 + 1 + 4
    assert launches.attention_layers == 8 and launches.recurrent_layers == 0 and launches.counted_exactly


def test_a_hybrid_stack_counts_one_attention_layer_in_each_interval():
    """8 layers, one in 4 with attention: 2 attention and 6 recurrent layers."""
    launches = decode_launches(_model(full_attention_interval=4), _toy_store())
    assert (launches.attention_layers, launches.recurrent_layers) == (2, 6)
    assert launches.parts["recurrent layers"] == 6 * 20 and launches.per_step == 2 + 2 * 10 + 6 * 20 + 5


def test_each_expert_beyond_the_first_adds_its_sum_in_every_layer():
    one, three = (decode_launches(_model(expert_used_count=k), _toy_store()) for k in (1, 3))
    assert three.per_step - one.per_step == 8 * 3 * 2 and three.parts["extra experts"] == 48


def test_an_architecture_without_recurrent_layers_ignores_the_interval():
    """Gemma-style interleaving (a full-attention interval on a model whose table has no
    recurrent layer kind) keeps every layer an attention layer."""
    store = _toy_store(**{**TOY, "recurrent_layer": 0})
    assert decode_launches(_model(full_attention_interval=4), store).attention_layers == 8


def test_an_unlisted_architecture_is_counted_as_the_fallback_and_says_so():
    launches = decode_launches(_model(architecture="rwkv9"))
    assert launches.counted_as == "llama" and not launches.counted_exactly
    assert launches.per_step == decode_launches(_model(architecture="llama")).per_step


@pytest.mark.parametrize("name", sorted(COUNTED["files"]))
def test_the_model_files_launch_what_llama_cpp_counted(name):
    """SmolLM2 (llama), Gemma 3 (gemma3) and Qwen2.5-Coder (qwen2): the preset of each file
    gives the launches llama.cpp's graph held for one of its tokens."""
    counted = COUNTED["files"][name]
    assert decode_launches(load_model(counted["preset"])).per_step == counted["launches"]


@pytest.mark.parametrize("written", COUNTED["written"], ids=lambda w: f"{w['architecture']}-{w['layers']}-{w['expert_used_count']}")
def test_qwen35_files_launch_what_llama_cpp_counted(written):
    """The article's families (qwen35, qwen35moe) in files written for the count: layer kinds,
    interval and experts used vary, and the table's sum follows llama.cpp's count."""
    model = SimpleNamespace(**{k: written[k] for k in ("architecture", "layers", "full_attention_interval",
                                                        "expert_used_count")})
    assert decode_launches(model).per_step == written["launches"]


def test_a_negative_count_is_refused_naming_the_file_and_field():
    def change(data):
        data["architectures"]["llama"]["attention_layer"] = -1
        return data

    with pytest.raises(SpecError, match=r"^tokenwalk/data/graph_launches.json: architectures.llama.attention_layer: "
                                        r"-1 is not a count$"):
        decode_launches(_model(architecture="llama"), ChangedStore(LAUNCHES_FILE, change))


def test_a_fallback_that_is_not_listed_is_refused():
    def change(data):
        data["fallback"] = "gpt2"
        return data

    with pytest.raises(SpecError, match=r"graph_launches.json: field 'fallback': 'gpt2' is not one of its architectures"):
        decode_launches(_model(), ChangedStore(LAUNCHES_FILE, change))
