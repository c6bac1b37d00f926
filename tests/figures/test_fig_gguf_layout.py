"""Figure 9, gguf-layout: the numbers of FIGURES.md #9 from the Qwen3.6 preset, and the real
SmolLM2 file drawn through the same code."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from figures import gguf_layout
from tests.support.context import default_context
from tests.support.gguf_files import SMOLLM2, needs_smollm2, write_hybrid_moe_file
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.specs.model import model_from_gguf

NS = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()).replace("\u00a0", " ") for t in root.iter(NS + "text")]


def check_svg(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    assert width <= 640 and height > 0
    assert root.find(NS + "title").text and root.find(NS + "desc").text
    return root


def test_fig9_gguf_layout_numbers_of_qwen36():
    """FIGURES.md #9: GGUF v3, 753 tensors, 36 keys, 21,718,480,960 bytes; block_count 41
    (40 + 1 MTP), embedding 2,048, heads 16, kv heads 2, key length 256,
    full_attention_interval 4, context 262,144, experts 256, used 8, expert ffn 512,
    247,587 merges."""
    inputs = gguf_layout.inputs(default_context())
    json.dumps(inputs)  # the build hashes them
    assert (inputs["version"], inputs["tensor_count"], inputs["kv_count"]) == (3, 753, 36)
    assert inputs["file_bytes"] == 21_718_480_960
    values = {k["key"]: k.get("value", k.get("count")) for k in inputs["keys"]}
    assert values == {
        "general.architecture": "qwen35moe",
        "qwen35moe.block_count": 41,
        "qwen35moe.embedding_length": 2048,
        "qwen35moe.attention.head_count": 16,
        "qwen35moe.attention.head_count_kv": 2,
        "qwen35moe.attention.key_length": 256,
        "qwen35moe.full_attention_interval": 4,
        "qwen35moe.context_length": 262144,
        "qwen35moe.expert_count": 256,
        "qwen35moe.expert_used_count": 8,
        "qwen35moe.expert_feed_forward_length": 512,
        "tokenizer.ggml.merges": 247587,
    }
    svg = gguf_layout.render(inputs, None)
    check_svg(svg)
    words = "\n".join(texts(svg))
    for fragment in ("GGUF file, 21.7 GB", "version 3", "753 tensors, 36 metadata keys",
                     "qwen35moe.block_count = 41", "40 layers + 1 for multi-token prediction",
                     "qwen35moe.full_attention_interval = 4", "10 keep a KV cache",
                     "qwen35moe.context_length = 262144", "[247587 entries: 'Ġ Ġ'", "blk.0.ffn_up_exps",
                     "2048 × 512 × 256", "average 4.89 bits per weight", "schematic"):
        assert fragment in words, fragment
    assert "24 more keys" in words      # 36 keys, 12 shown


def test_fig9_text_is_text_and_labels_stay_inside_the_viewbox():
    svg = gguf_layout.render(gguf_layout.inputs(default_context()), None)
    root = check_svg(svg)
    for t in root.iter(NS + "text"):
        x = float(t.get("x"))
        # "mono small" is 12 units: about 7.2 units per character; the longest line must end by 640
        chars = len("".join(t.itertext()))
        if "mono" in (t.get("class") or ""):
            assert x + chars * 7.2 <= 640, "".join(t.itertext())


@needs_smollm2
def test_fig9_renders_the_real_smollm2_file():
    header = read_gguf_header(SMOLLM2)
    inputs = gguf_layout.inputs_for_model(model_from_gguf(header))
    json.dumps(inputs)
    svg = gguf_layout.draw(inputs)
    check_svg(svg)
    words = "\n".join(texts(svg))
    assert "272 tensors, 33 metadata keys" in words
    assert "llama.block_count = 30" in words and "llama.attention.head_count_kv = 3" in words
    assert "[48900 entries:" in words and "token_embd.weight" in words
    assert "576 × 49152 · Q8_0" in words
    assert re.search(r"tensor data is 98\.2 % of the file", words)
    assert "24 bytes" in words


def test_fig9_draws_a_hybrid_moe_header(tmp_path):
    inputs = gguf_layout.inputs_for_model(model_from_gguf(read_gguf_header(write_hybrid_moe_file(tmp_path / "h.gguf"))))
    words = "\n".join(texts(gguf_layout.draw(inputs)))
    assert "qwen35moe.full_attention_interval = 4" in words
    assert "4 layers + 1 for multi-token prediction" in words and "1 keep a KV cache" in words


def test_fig9_alt_states_the_domain():
    alt = gguf_layout.alt(gguf_layout.inputs(default_context()))
    assert "Qwen3.6 35B-A3B" in alt and "schematic" in alt and "753 tensors" in alt
