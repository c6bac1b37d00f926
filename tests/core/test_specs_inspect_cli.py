"""`tokenwalk inspect`: the article's numbers for a model, and one line + exit 2 for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.gguf_files import ROOT, SMOLLM2, needs_smollm2
from tokenwalk.cli import main
from tokenwalk.specs.model import load_model


def run_cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tokenwalk", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def test_inspect_qwen_json_gives_the_article_numbers(capsys):
    """FIGURES.md #27/#30: KV 2 x 10 x 2 x 256 x 2 = 20,480 bytes per token; the bytes read per
    token of the preset's tensor table; the laptop's ceiling 128 GB/s over them; 4.89 bits per weight."""
    assert main(["inspect", "qwen3.6-35b-a3b", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kv_bytes_per_token"]["f16"] == 2 * 10 * 2 * 256 * 2 == 20_480
    read = load_model("qwen3.6-35b-a3b").bytes_read_per_token
    assert report["bytes_read_per_token"] == read
    assert report["decode_ceiling_tok_s"]["laptop-860m"]["tok_s"] == pytest.approx(128e9 / read)
    assert round(report["bits_per_weight"], 2) == 4.89
    assert report["gguf"]["tensor_count"] == 753
    assert report["decode_ceiling_tok_s"]["rtx-5080"]["fits"] is False


def test_inspect_dense_7b_on_the_h100(capsys):
    """FIGURES.md #21: 0.5 MB of KV per token; 3,350 / 14 = 239 tok/s."""
    assert main(["inspect", "dense-7b-fp16", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kv_bytes_per_token"]["f16"] == 2 * 32 * 4096 * 2
    assert round(report["decode_ceiling_tok_s"]["h100-sxm"]["tok_s"]) == 239


@needs_smollm2
def test_inspect_the_smollm2_file_as_a_new_user_would():
    result = run_cli("inspect", str(SMOLLM2), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["architecture"] == "llama" and report["params"] == 134_515_008
    assert report["tensor_types"]["Q8_0"]["bits_per_weight"] == 8.5
    assert report["kv_bytes_per_token"]["f16"] == 2 * 30 * 3 * 64 * 2
    text = run_cli("inspect", str(SMOLLM2))
    assert text.returncode == 0 and "9 query, 3 KV" in text.stdout and "96.6 MB" in text.stdout


def _bad_inputs(tmp_path):
    truncated = tmp_path / "cut.gguf"
    data = SMOLLM2.read_bytes()[:5000] if SMOLLM2.exists() else b"GGUF\x03\x00\x00\x00" + b"\x00" * 10
    truncated.write_bytes(data)
    text = tmp_path / "notes.gguf"
    text.write_text("hello\n")
    missing_field = tmp_path / "m.json"
    missing_field.write_text(json.dumps({"name": "m", "params": 1e9}))
    bad_json = tmp_path / "b.json"
    bad_json.write_text("{")
    return {
        "missing path": (str(tmp_path / "absent.gguf"), "cannot open"),
        "not GGUF": (str(text), "not a GGUF file"),
        "truncated": (str(truncated), "byte "),
        "JSON missing a field": (str(missing_field), "missing field 'size_bytes'"),
        "not JSON": (str(bad_json), "not valid JSON"),
        "unknown preset": ("no-such-model", "not a model preset"),
    }


@pytest.mark.parametrize("case", ["missing path", "not GGUF", "truncated", "JSON missing a field", "not JSON",
                                  "unknown preset"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    arg, fragment = _bad_inputs(tmp_path)[case]
    result = run_cli("inspect", arg)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokenwalk inspect: ") and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stderr
