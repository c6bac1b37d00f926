"""llama-bench output for the simulator's "Time it on your own llama-bench runs" tests:
llama.cpp's own README example (tests/fixtures/llama-bench/) with the model fields of presets."""

from __future__ import annotations

import json

from tests.support.paths import ROOT

README_EXAMPLE = ROOT / "tests" / "fixtures" / "llama-bench" / "readme-qwen2.5-7b-rtx4080.json"
# (preset, n_prompt, n_gen, tok/s): two small models' decode and prefill, and Gemma's decode as a check
OWN_RUNS = [("smollm2-135m", 512, 0, 21000.0), ("smollm2-135m", 0, 128, 650.0), ("qwen2.5-coder-0.5b", 0, 128, 390.0),
            ("qwen2.5-coder-0.5b", 512, 0, 14000.0), ("gemma3-270m", 0, 128, 480.0)]


def bench_rows(*tests) -> list:
    """llama-bench's JSON objects for presets (their count of weights; model_size the
    tensors' bytes, a little under the file): (preset, n_prompt, n_gen, tok/s) each."""
    from tokenwalk.specs.model import load_model

    fixture = json.loads(README_EXAMPLE.read_text())[0]
    rows = []
    for name, prompt, gen, tok_s in tests or OWN_RUNS:
        spec = load_model(name)
        rows.append({**fixture, "model_type": spec.architecture, "model_n_params": spec.params,
                     "model_size": int(spec.size_bytes * 0.98), "n_prompt": prompt, "n_gen": gen, "avg_ts": tok_s})
    return rows
