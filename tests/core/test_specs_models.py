"""Model specs: from GGUF headers (real and written), from JSON, and the presets' numbers."""

from __future__ import annotations

import json

import pytest

from tests.support.gguf_files import HYBRID, SMOLLM2, needs_smollm2, write_hybrid_moe_file
from tokenwalk.errors import GGUFError, SpecError
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.specs.model import (
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    list_model_presets,
    load_model,
    model_from_gguf,
    model_to_preset,
    table_counts,
    table_tensors,
)
from tokenwalk.specs.schema import read_preset

PRESETS = ["qwen3.6-35b-a3b", "qwen3.8-27b", "llama3.1-70b", "dense-7b-fp16", "gpt3-175b", "smollm2-135m",
           "gemma3-270m", "qwen2.5-coder-0.5b"]


def test_the_agreed_presets_exist():
    assert sorted(PRESETS) == list_model_presets()


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_value_has_a_source(name):
    data, _ = read_preset("models", name)
    values = [k for k in data if k in REQUIRED_FIELDS or k in OPTIONAL_FIELDS]
    # `recalled` names fields, it is no value of its own
    missing = [k for k in values if k not in ("sources", "recalled") and not str(data["sources"].get(k, "")).strip()]
    assert missing == []


@needs_smollm2
def test_smollm2_from_the_real_file():
    """DESIGN.md: llama, 30 layers, width 576, 9 heads, 3 KV heads of 64, FFN 1,536,
    vocabulary 49,152, 134,515,008 parameters; no output.weight, so the Q8_0 token
    embedding is read in full at every token: about 96.6 MB per token."""
    m = load_model(SMOLLM2)
    assert (m.architecture, m.layers, m.embedding_length) == ("llama", 30, 576)
    assert (m.head_count, m.head_count_kv, m.head_dim) == (9, 3, 64)
    assert (m.feed_forward_length, m.vocab_size, m.context_length) == (1536, 49152, 8192)
    assert m.params == m.active_params == 134_515_008
    assert m.kv_layers == 30 and m.expert_count == 0
    header = read_gguf_header(SMOLLM2)
    assert m.bytes_read_per_token == header.tensor_data_bytes     # tied head: everything is read
    assert round(m.bytes_read_per_token / 1e6, 1) == 96.6
    assert m.tensor_types["Q8_0"]["tensors"] == 1 and m.tensor_types["Q4_1"]["bits_per_weight"] == 5.0


@needs_smollm2
def test_smollm2_preset_is_the_file_stored_as_json():
    """The preset carries what the file gives, so the core works without the file."""
    from_file = model_to_preset(model_from_gguf(read_gguf_header(SMOLLM2), name="smollm2-135m"))
    preset, _ = read_preset("models", "smollm2-135m")
    for key, value in from_file.items():
        if key in ("title", "sources"):
            continue
        assert preset[key] == json.loads(json.dumps(value)), key


def test_hybrid_moe_from_a_written_file(tmp_path):
    """qwen35moe layout: block_count 5 = 4 layers + 1 MTP; 1 layer in 4 keeps KV; 2 of 8 experts."""
    m = load_model(write_hybrid_moe_file(tmp_path / "hybrid.gguf"))
    assert m.architecture == "qwen35moe"
    assert (m.layers, m.mtp_layers, m.kv_layers, m.full_attention_interval) == (4, 1, 1, 4)
    assert (m.expert_count, m.expert_used_count, m.expert_ffn_length, m.shared_expert_count) == (8, 2, 64, 1)
    assert m.head_dim == HYBRID["key_length"] and m.vocab_size == HYBRID["vocab"]
    header = read_gguf_header(tmp_path / "hybrid.gguf")
    by_name = {t.name: t for t in header.tensors}
    assert m.params == sum(t.n_elements for t in header.tensors)
    experts = [t for t in header.tensors if "_exps" in t.name]
    one_expert = sum(t.n_elements for t in experts) // HYBRID["experts"]
    assert m.active_params == m.params - (HYBRID["experts"] - HYBRID["used"]) * one_expert
    # bytes per token: all but the MTP block, experts at 2/8, the embedding one row (output is separate)
    expected = 0.0
    for t in header.tensors:
        if t.name.startswith(f"blk.{HYBRID['layers']}."):
            continue
        if "_exps" in t.name:
            expected += t.n_bytes * HYBRID["used"] / HYBRID["experts"]
        elif t.name == "token_embd.weight":
            expected += t.n_bytes / HYBRID["vocab"]
        else:
            expected += t.n_bytes
    assert m.bytes_read_per_token == pytest.approx(expected)
    assert m.bytes_read_per_token < m.tensor_bytes / 2
    assert by_name["output.weight"].n_bytes < m.bytes_read_per_token


def test_qwen36_preset_numbers_of_the_article():
    """FIGURES.md #9, #27, #30: 35,505,251,456 parameters, 21.7 GB, 4.89 bits per weight,
    10 of 40 layers with a KV cache (35.5 x 4.89 / 8 = 21.7). Its tensor table (rebuilt from
    the config and llama.cpp's Q4_K_M rules) agrees with the file: 753 tensors, every one of
    the 35,505,251,456 weights, and tensors that fill the file but for a header under 0.1 %;
    the bytes a token reads are that table's count, not the file's share by parameters."""
    m = load_model("qwen3.6-35b-a3b")
    assert m.params == 35_505_251_456 and m.size_bytes == 21_718_480_960
    assert round(m.bits_per_weight, 2) == 4.89
    assert round(m.params / 1e9 * 4.89 / 8, 1) == round(m.size_bytes / 1e9, 1) == 21.7
    assert (m.layers, m.mtp_layers, m.kv_layers) == (40, 1, 10)
    table = table_tensors(read_preset("models", "qwen3.6-35b-a3b")[0]["tensor_table"], "qwen")
    assert len(table) == m.gguf["tensor_count"] == 753
    assert 0 < m.size_bytes - m.tensor_bytes < 0.001 * m.size_bytes
    counts = table_counts(table, m.layers, m.expert_count, m.expert_used_count)
    assert m.bytes_read_per_token == counts["bytes_read_per_token"]
    assert m.expert_bytes == counts["expert_bytes"] and counts["tied_embeddings"] is False
    assert m.bytes_read_per_token > m.size_bytes * m.active_params / m.params
    assert m.vocab_size == 248_320 and m.context_length == 262_144


def test_other_presets_numbers_of_the_article():
    """Qwen3.8 27B 16.8 GB reading ~16 GB per token; Llama 3.1 70B ~43 GB; dense 7B
    fp16 14 GB with 32 layers of 4,096 and no GQA; GPT-3 96 layers of 12,288, 96 heads of 128."""
    q = load_model("qwen3.8-27b")
    assert (q.size_bytes, q.bytes_read_per_token, q.params) == (16.8e9, 16e9, 27.3e9)
    llama = load_model("llama3.1-70b")
    assert round(llama.size_bytes / 1e9) == 43 and llama.params == 70.6e9
    seven = load_model("dense-7b-fp16")
    assert (seven.size_bytes, seven.layers, seven.embedding_length) == (14e9, 32, 4096)
    assert seven.head_count == seven.head_count_kv and seven.head_count * seven.head_dim == 4096
    assert seven.bits_per_weight == 16
    gpt3 = load_model("gpt3-175b")
    assert (gpt3.layers, gpt3.embedding_length, gpt3.head_count, gpt3.head_dim) == (96, 12288, 96, 128)
    assert (gpt3.feed_forward_length, gpt3.vocab_size) == (49152, 50257)
    assert gpt3.head_count * gpt3.head_dim == gpt3.embedding_length


def _write_json(tmp_path, data, name="model.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


MINIMAL = {"name": "mine", "params": 8e9, "size_bytes": 4.9e9, "layers": 32, "embedding_length": 4096,
           "head_count": 32, "head_count_kv": 8, "head_dim": 128}


def test_json_model_with_required_fields_only(tmp_path):
    m = load_model(_write_json(tmp_path, MINIMAL))
    assert m.active_params == m.params and m.kv_layers == 32
    assert m.bytes_read_per_token == m.size_bytes
    assert m.bits_per_weight == pytest.approx(8 * 4.9 / 8)


def test_json_moe_reads_its_active_share(tmp_path):
    m = load_model(_write_json(tmp_path, {**MINIMAL, "active_params": 2e9, "expert_count": 64,
                                          "expert_used_count": 4, "kv_layers": 8}))
    assert m.bytes_read_per_token == pytest.approx(4.9e9 * 2 / 8)
    assert m.kv_layers == 8


@pytest.mark.parametrize("field", list(REQUIRED_FIELDS))
def test_json_missing_field_names_file_and_field(tmp_path, field):
    data = {k: v for k, v in MINIMAL.items() if k != field}
    path = _write_json(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_model(path)
    kind = "a string" if field == "name" else "a whole number" if REQUIRED_FIELDS[field] == "int" else "a number"
    assert str(info.value) == f"{path}: missing field '{field}' ({kind})"


@pytest.mark.parametrize("patch, fragment", [
    ({"layers": "forty"}, "field 'layers' must be a whole number"),
    ({"layers": 40.5}, "field 'layers' must be a whole number"),
    ({"params": -1}, "field 'params' must be a finite number >= 0"),
    ({"head_count": 0}, "field 'head_count' must be a whole number from 1 to 100,000, not 0"),
    ({"expert_count": 8, "expert_used_count": 9}, "'expert_used_count' (9) exceeds 'expert_count' (8)"),
    ({"tensor_types": {"Q9_Z": {}}}, "'Q9_Z' is not a ggml type"),
])
def test_json_bad_values(tmp_path, patch, fragment):
    with pytest.raises(SpecError, match=None) as info:
        load_model(_write_json(tmp_path, {**MINIMAL, **patch}))
    assert fragment in str(info.value)


def test_json_not_json_and_not_an_object(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n "params": }')
    with pytest.raises(SpecError, match=r"bad.json: line 2 column \d+: not valid JSON"):
        load_model(bad)
    with pytest.raises(SpecError, match="expected a JSON object"):
        load_model(_write_json(tmp_path, [1, 2], "list.json"))
    with pytest.raises(SpecError, match="cannot open"):
        load_model(tmp_path / "absent.json")


def test_unknown_preset_lists_the_presets():
    with pytest.raises(SpecError) as info:
        load_model("qwen9")
    assert "qwen3.6-35b-a3b" in str(info.value) and "\n" not in str(info.value)


def test_gguf_without_the_keys_a_model_needs(tmp_path):
    from gguf import GGMLQuantizationType as Q

    from tests.support.gguf_files import write_gguf
    path = write_gguf(tmp_path / "bare.gguf", "llama", [], [("token_embd.weight", (32, 4), Q.F32)])
    with pytest.raises(GGUFError, match=r"bare.gguf: metadata key 'llama.block_count' is missing"):
        load_model(path)


QWEN2_FILE = SMOLLM2.parent / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


@pytest.mark.skipif(not QWEN2_FILE.exists(), reason="Qwen2.5-Coder file not fetched (make setup)")
def test_qwen2_coder_preset_is_the_file_stored_as_json():
    """The third engine model's preset (the aside's column and the simulator name it) is its
    header: 24 layers of width 896, 14 heads and 2 KV heads of 64, an untied Q8_0 head, so a
    token reads 391.9 MB of the 485.5 MB of tensors (the embedding one row)."""
    m = model_from_gguf(read_gguf_header(QWEN2_FILE), name="qwen2.5-coder-0.5b")
    assert (m.architecture, m.layers, m.embedding_length, m.head_count, m.head_count_kv, m.head_dim) == \
        ("qwen2", 24, 896, 14, 2, 64)
    assert (m.context_length, m.vocab_size, m.size_bytes, m.tied_embeddings) == (32_768, 151_936, 491_400_064, False)
    assert round(m.bytes_read_per_token / 1e6, 1) == 391.9 and round(m.tensor_bytes / 1e6, 1) == 485.5
    preset = model_to_preset(load_model("qwen2.5-coder-0.5b"))
    from_file = model_to_preset(m)
    assert {k: v for k, v in preset.items() if k not in ("title", "sources")} == \
        {k: v for k, v in from_file.items() if k != "sources"}
    assert load_model("qwen2.5-coder-0.5b").title == "Qwen2.5-Coder 0.5B Q4_K_M"
