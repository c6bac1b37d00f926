"""A machine and a model the project has never seen get decode and prefill predictions from
the fitted timing model through `tokenwalk walk --json` (issue: timing model, "done when")."""

import json
import subprocess
import sys

import pytest

from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model
from tokenwalk.timing import model as timing_model

MACHINE = {  # a desktop card that is no preset; `backend` picks the fitted row
    "name": "desk-7900xtx", "bandwidth_gbs": 960, "fp16_tflops": 122.8, "memory_gb": 24, "backend": "ROCm",
    "sources": {"bandwidth_gbs": "test input", "fp16_tflops": "test input", "memory_gb": "test input"},
}
MODEL = {  # a Mistral-7B-shaped model in Q4_K_M, no preset
    "name": "mistral-7b-q4km", "params": 7.24e9, "size_bytes": 4.37e9, "layers": 32,
    "embedding_length": 4096, "head_count": 32, "head_count_kv": 8, "head_dim": 128, "vocab_size": 32768,
    "sources": {"params": "test input"},
}


def _walk_json(tmp_path, machine: dict, *extra):
    (tmp_path / "machine.json").write_text(json.dumps(machine))
    (tmp_path / "model.json").write_text(json.dumps(MODEL))
    cmd = [sys.executable, "-m", "tokenwalk", "walk", "--model", str(tmp_path / "model.json"),
           "--machine", str(tmp_path / "machine.json"), "--prompt-tokens", "1000", "--output-tokens", "100",
           "--warm", "--json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_unseen_machine_and_model_get_fitted_decode_and_prefill(tmp_path):
    walk = _walk_json(tmp_path, MACHINE)
    model, machine = load_model(str(tmp_path / "model.json")), load_machine(str(tmp_path / "machine.json"))
    assert timing_model.coefficients(machine).row == "ROCm"
    # one chunk of 1,000 tokens, then 100 steps from 1,000 to 1,099 cached tokens
    prefill = timing_model.prefill_chunk_s(model, machine, 512, 0) + timing_model.prefill_chunk_s(model, machine, 488, 512)
    assert walk["prefill_tok_s"] == pytest.approx(1000 / prefill, rel=1e-6)
    first = timing_model.decode_step_s(model, machine, 1000)
    assert walk["decode_tok_s"] == pytest.approx(1 / first, rel=0.01)
    assert 40 < walk["decode_tok_s"] < 220  # below the 960 / 4.4 GB ceiling
    assert walk["efficiency"]["decode"]["from"] == "fitted: ROCm"


def test_machine_without_backend_uses_the_all_gpu_row(tmp_path):
    machine = {k: v for k, v in MACHINE.items() if k != "backend"}
    walk = _walk_json(tmp_path, machine)
    assert walk["efficiency"]["decode"]["from"] == "fitted: default"
    assert walk["efficiency"]["decode"]["value"] == timing_model.load_fit()["default"]["bandwidth_efficiency"]
