"""The bytes a decode step reads, counted from a tensor table: a preset's `tensor_table`
is counted as a GGUF header's table is (tokenwalk.specs.model.table_counts), on a
stand-in table small enough to add up by hand."""

from __future__ import annotations

import pytest

from tokenwalk.errors import SpecError
from tokenwalk.specs.model import model_from_dict, table_tensors

# A 2-layer MoE with a third, multi-token-prediction block; 4 experts, 1 used; vocabulary 10
# of width 4. F32 is 4 bytes a weight, F16 2.
TABLE = [
    {"name": "token_embd.weight", "shape": [4, 10], "ggml_type": "F32"},            # 160 B, one row 16
    {"name": "blk.{i}.attn_norm.weight", "shape": [4], "ggml_type": "F32", "blocks": [0, 1, 2]},  # 16 B each
    {"name": "blk.{i}.attn_q.weight", "shape": [4, 4], "ggml_type": "F16", "blocks": [0, 1, 2]},  # 32 B each
    {"name": "blk.{i}.ffn_up_exps.weight", "shape": [4, 2, 4], "ggml_type": "F32", "blocks": [0, 1, 2]},  # 128 B
    {"name": "output.weight", "shape": [4, 10], "ggml_type": "F16"},                # 80 B, every row
]
PARAMS = 40 + 3 * (4 + 16 + 32) + 40    # 236


def _spec(**extra):
    return {"name": "standin", "params": PARAMS, "size_bytes": 1000, "layers": 2,
            "embedding_length": 4, "head_count": 1, "head_count_kv": 1, "head_dim": 4,
            "expert_count": 4, "expert_used_count": 1, "active_params": 150, "tensor_table": TABLE, **extra}


def test_the_bytes_one_token_reads_are_counted_from_the_table():
    """One embedding row (16), the norms and attention of the two blocks a token runs
    (2 x 48), a quarter of their experts (2 x 128 / 4), the whole output head (80); the
    third block (multi-token prediction) is left out: 16 + 96 + 64 + 80 = 256 bytes."""
    m = model_from_dict(_spec(), "standin.json")
    assert m.bytes_read_per_token == 16 + 2 * (16 + 32) + 2 * 128 / 4 + 80 == 256
    assert m.expert_bytes == 2 * 128
    assert m.tensor_bytes == 160 + 3 * (16 + 32 + 128) + 80
    assert m.tied_embeddings is None    # what active_params holds is the spec's to say
    # not pro rata: the file's share by parameters would be 1000 x 150 / 236
    assert m.bytes_read_per_token != pytest.approx(1000 * 150 / PARAMS)


def test_a_value_the_spec_gives_itself_is_kept():
    m = model_from_dict(_spec(bytes_read_per_token=300, expert_bytes=200), "standin.json")
    assert (m.bytes_read_per_token, m.expert_bytes) == (300, 200)


def test_without_output_weight_the_embedding_is_the_head_and_read_whole():
    """No output.weight: the embedding (160 B) is read in full, as from a GGUF header."""
    table = [row for row in TABLE if row["name"] != "output.weight"]
    m = model_from_dict(_spec(tensor_table=table, params=PARAMS - 40), "standin.json")
    assert m.bytes_read_per_token == 160 + 2 * (16 + 32) + 2 * 128 / 4 == 320


def test_rows_with_blocks_stand_for_one_tensor_per_block():
    names = [t.name for t in table_tensors(TABLE, "standin.json")]
    assert len(names) == 1 + 3 * 3 + 1
    assert "blk.2.ffn_up_exps.weight" in names and "blk.{i}.attn_q.weight" not in names


@pytest.mark.parametrize("change, message", [
    ({"params": PARAMS + 1}, "standin.json: field 'tensor_table' sums to 236 weights, but 'params' is 237"),
    ({"tensor_table": [{"name": "x", "shape": [4], "ggml_type": "Q9_Z"}]},
     "standin.json: field 'tensor_table' row 0 (x): 'ggml_type' must be one of"),
    ({"tensor_table": [{"name": "x", "shape": [4, 0], "ggml_type": "F32"}]},
     "standin.json: field 'tensor_table' row 0 (x): 'shape' must be a list of whole numbers > 0"),
    ({"tensor_table": [{"name": "x", "shape": [100, 2], "ggml_type": "Q4_K"}]},
     "standin.json: field 'tensor_table' row 0 (x): a row of 100 weights does not fill whole Q4_K blocks of 256"),
    ({"tensor_table": [{"name": "blk.{i}.x", "shape": [4], "ggml_type": "F32"}]},
     "standin.json: field 'tensor_table' row 0 (blk.{i}.x): 'blocks' must be a list of block numbers"),
    ({"tensor_table": "no"}, "standin.json: field 'tensor_table' must be"),
])
def test_a_bad_table_is_refused_in_one_line_naming_the_row(change, message):
    with pytest.raises(SpecError) as err:
        model_from_dict(_spec(**change), "standin.json")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
