"""The walk and its bounds on hostile input: work that does not grow with the numbers, and every
value checked against one statement of its domain (tokenwalk.specs.schema).

- The walk sums its prefill chunks and decode steps without a list: the full chunks and
  the steps as piecewise-linear sums over their index, the shorter last chunk on its own.
  The sums equal the step-by-step sums, and the number of steps evaluated stays bounded
  whatever the request's size (3 x 10^8 one-token chunks, 10^9 decoded tokens).
- Layer patterns are counted arithmetically (10^12 layers with an interval and a window).
- The schemas' domains cover every numeric field of a model, a machine and a request;
  what lies outside is refused with one line naming the field, in the core, the command
  line and the page's form alike.
- A machine is calibrated by what its file says, never by its name (`laptop-860m` or
  `this-machine` written by a user).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tokenwalk import walk as walk_module
from tokenwalk.errors import SpecError, TokenwalkError
from tokenwalk.physics.chunked_prefill import ChunkPlan
from tokenwalk.physics.roofline import prompt_chunks
from tokenwalk.specs import machine as machine_spec
from tokenwalk.specs import model as model_spec
from tokenwalk.specs.machine import load_machine, machine_from_dict
from tokenwalk.specs.model import layer_kind_counts, load_model, model_from_dict
from tokenwalk.specs.schema import MACHINE_DOMAINS, MAX_CONTEXT_TOKENS, MODEL_DOMAINS, REQUEST_DOMAINS
from tokenwalk.timing import stages as timing
from tokenwalk.walk import Request, walk_request
from tokenwalk_app import entry

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------- chunks without a list

@pytest.mark.parametrize("prompt, chunk", [(6550, 512), (512, 512), (1, 512), (100, 1), (1000, 7), (0, 3)])
def test_a_chunk_plan_is_the_list_of_chunks_without_the_list(prompt, chunk):
    plan = ChunkPlan(prompt, chunk)
    assert [plan.chunk(i) for i in range(plan.count)] == prompt_chunks(prompt, chunk)
    assert plan.full * chunk + plan.rest == prompt


def test_a_chunk_plan_of_a_billion_chunks_costs_nothing():
    plan = ChunkPlan(MAX_CONTEXT_TOKENS, 1)
    assert (plan.full, plan.rest, plan.count) == (MAX_CONTEXT_TOKENS, 0, MAX_CONTEXT_TOKENS)
    assert plan.chunk(MAX_CONTEXT_TOKENS - 1) == (MAX_CONTEXT_TOKENS - 1, 1)
    with pytest.raises(IndexError):
        plan.chunk(MAX_CONTEXT_TOKENS)


# ----------------------------------------------------------------- the sums

SCENARIOS = [  # model, machine, prompt, output, chunk, extra
    ("qwen3.6-35b-a3b", "laptop-860m", 6550, 300, 512, {}),            # the article's request: every step
    ("qwen3.6-35b-a3b", "laptop-860m", 100_000, 5_000, 512, {}),       # 196 chunks, the last one short
    ("gemma3-270m", "h100-sxm", 20_000, 1_000, 64, {"users": 8}),      # windows fill, the bound changes
    ("gemma3-270m", "laptop-860m", 3_000, 20_000, 100, {}),            # decode past the window
    ("dense-7b-fp16", "h100-sxm", 300_000, 3_000, 77, {"users": 64}),
    # a speculative round's time is a ratio of lines in the context: a curve, summed to 1e-6
    ("smollm2-135m", "rtx-5090", 40_000, 30_000, 512, {"spec_alpha": 0.7, "spec_gamma": 4}),
]


def _stepwise(monkeypatch, model, machine, request):
    monkeypatch.setattr(walk_module, "_EXACT_LIMIT", 10**9)
    try:
        return walk_request(model, machine, request)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s[0]}-{s[2]}-{s[3]}-{s[4]}")
def test_the_walk_sums_equal_the_step_by_step_sums(monkeypatch, scenario):
    name, machine_name, prompt, output, chunk, extra = scenario
    model, machine = load_model(name), load_machine(machine_name)
    request = Request(prompt_tokens=prompt, output_tokens=output, chunk_tokens=chunk, **extra)
    fast = walk_request(model, machine, request)
    slow = _stepwise(monkeypatch, model, machine, request)
    rel = 1e-6 if "spec_alpha" in extra else 1e-9
    for stage in ("prefill", "decode"):
        a, b = fast.stage(stage), slow.stage(stage)
        assert a.seconds == pytest.approx(b.seconds, rel=rel), stage
        assert a.bytes == pytest.approx(b.bytes, rel=rel), stage
        assert a.bound == b.bound, stage
    assert fast.stage("prefill").detail["chunk_count"] == -(-prompt // chunk)
    assert fast.stage("decode").detail["first_step_s"] == slow.stage("decode").detail["first_step_s"]
    assert fast.stage("decode").detail["last_step_s"] == slow.stage("decode").detail["last_step_s"]


def _counted_walk(monkeypatch, model, machine, request):
    """The walk with its step evaluations counted: the timed machine's prefill chunks and
    decode steps, which every stage reads."""
    calls = {"prefill": 0, "decode": 0}
    prefill, decode = timing.TimedMachine.prefill_chunk_s, timing.TimedMachine.decode_step

    def counted_prefill(*args, **kwargs):
        calls["prefill"] += 1
        return prefill(*args, **kwargs)

    def counted_decode(*args, **kwargs):
        calls["decode"] += 1
        return decode(*args, **kwargs)

    monkeypatch.setattr(timing.TimedMachine, "prefill_chunk_s", counted_prefill)
    monkeypatch.setattr(timing.TimedMachine, "decode_step", counted_decode)
    start = time.perf_counter()
    walk = walk_request(model, machine, request)
    return walk, calls, time.perf_counter() - start


@pytest.mark.parametrize("name, prompt, output", [
    ("qwen3.6-35b-a3b", 300_000_000, 300),        # the link of the issue: 3 x 10^8 one-token chunks
    ("qwen3.6-35b-a3b", 100_000_000, 10),         # `walk --prompt-tokens 100000000 --chunk 1`
    ("gemma3-270m", 1_000, MAX_CONTEXT_TOKENS - 1_000),  # a billion decoded tokens, windows full
])
def test_the_work_does_not_grow_with_the_request(monkeypatch, name, prompt, output):
    walk, calls, seconds = _counted_walk(monkeypatch, load_model(name), load_machine("laptop-860m"),
                                         Request(prompt_tokens=prompt, output_tokens=output, chunk_tokens=1))
    assert walk.prefill_s > 0 and walk.decode_s > 0
    assert calls["prefill"] <= 2 * 300 and calls["decode"] <= 2 * 300, calls
    assert calls["prefill"] >= 17 and calls["decode"] >= min(output, 17), calls  # the samples were counted
    assert seconds < 3, seconds
    assert walk.stage("prefill").detail["chunk_count"] == prompt
    assert len(walk.stage("prefill").detail["chunks"]) <= 300


def test_a_request_past_the_context_limit_is_one_line():
    with pytest.raises(TokenwalkError, match=r"^request: prompt_tokens \+ output_tokens = 1,000,000,001 is more"):
        walk_request(load_model("smollm2-135m"), load_machine("laptop-860m"),
                     Request(prompt_tokens=MAX_CONTEXT_TOKENS, output_tokens=1))


# ----------------------------------------------------------------- layer patterns

def test_layer_patterns_are_counted_not_looped():
    start = time.perf_counter()
    counts = layer_kind_counts(10**12, full_interval=4, swa_period=6)
    assert time.perf_counter() - start < 0.5
    assert sum(counts.values()) == 10**12
    assert counts["full"] + counts["sliding"] == 10**12 // 4  # one layer in four keeps a cache
    assert model_spec.full_attention_layers(10**12, 4) == 10**12 // 4


# ----------------------------------------------------------------- domains

def _numeric(fields: dict) -> set:
    return {name for name, kind in fields.items() if kind in ("int", "number")}


def test_every_numeric_field_has_a_domain():
    assert _numeric({**model_spec.REQUIRED_FIELDS, **model_spec.OPTIONAL_FIELDS}) <= set(MODEL_DOMAINS)
    assert _numeric({**machine_spec.REQUIRED_FIELDS, **machine_spec.OPTIONAL_FIELDS}) <= set(MACHINE_DOMAINS)
    numeric_request = {"prompt_tokens", "output_tokens", "num_ctx", "chunk_tokens", "users", "spec_alpha",
                       "spec_gamma"}
    assert numeric_request == set(REQUEST_DOMAINS)


def test_every_preset_lies_within_the_domains():
    for name in model_spec.list_model_presets():
        load_model(name)
    for name in machine_spec.list_machine_presets():
        load_machine(name)


MACHINE = {"name": "box", "bandwidth_gbs": 100, "fp16_tflops": 10, "memory_gb": 32}
MODEL = {"name": "m", "params": 1e9, "size_bytes": 1e9, "layers": 24, "embedding_length": 2048,
         "head_count": 16, "head_count_kv": 4, "head_dim": 128}


@pytest.mark.parametrize("field, value", [
    ("bandwidth_gbs", 1e308), ("bandwidth_gbs", 5e-324), ("bandwidth_gbs", 1e-308), ("fp16_tflops", 1e308),
    ("memory_gb", 1e308), ("disk_gbs", 1e-300), ("compute_units", 10**12), ("clock_ghz", 1e9),
])
def test_a_machine_out_of_its_domain_is_one_line_naming_the_field(field, value):
    with pytest.raises(SpecError) as info:
        machine_from_dict({**MACHINE, field: value}, "box.json")
    message = str(info.value)
    assert message.startswith(f"box.json: field '{field}' must be a ") and "\n" not in message


@pytest.mark.parametrize("field, value", [
    ("layers", 10**12), ("size_bytes", 1e308), ("params", 1e300), ("head_count", 10**9),
    ("embedding_length", 10**12), ("context_length", 2**63), ("sliding_window", 10**10),
])
def test_a_model_out_of_its_domain_is_one_line_naming_the_field(field, value):
    with pytest.raises(SpecError) as info:
        model_from_dict({**MODEL, field: value}, "m.json")
    assert str(info.value).startswith(f"m.json: field '{field}' must be a ")


@pytest.mark.parametrize("field, value", [
    ("prompt_tokens", 0), ("prompt_tokens", MAX_CONTEXT_TOKENS + 1), ("output_tokens", -1),
    ("chunk_tokens", 10**12), ("users", 10**9), ("num_ctx", 10**12),
])
def test_a_request_out_of_its_domain_is_one_line_naming_the_field(field, value):
    values = {"prompt_tokens": 100, "output_tokens": 10, field: value}
    with pytest.raises(TokenwalkError, match=rf"^request: {field} must be a whole number from"):
        Request(**values).check()


@pytest.mark.parametrize("field, value, label", [
    ("bandwidth_gbs", "1e308", "bandwidth (GB/s)"), ("bandwidth_gbs", "5e-324", "bandwidth (GB/s)"),
    ("fp16_tflops", "1e-308", "FP16 TFLOPS"), ("memory_gb", "1e308", "memory (GB)"),
    ("prompt_tokens", "1e20", "prompt tokens"), ("chunk_tokens", "0", "chunk"),
    ("users", "1000000000", "users"), ("spec_gamma", "100000", "draft tokens (gamma)"),
])
def test_the_page_form_uses_the_same_domains(field, value, label):
    form = {"model": "qwen3.6-35b-a3b", "machine": "custom", "prompt_tokens": "100", "output_tokens": "10",
            "bandwidth_gbs": "128", "fp16_tflops": "6", "memory_gb": "64", "spec": field.startswith("spec"),
            "spec_alpha": "0.5", "spec_gamma": "3", field: value}
    out = json.loads(entry.call("simulate_view", json.dumps([form])))
    assert out["error"].startswith(f"{label} must be a "), out
    assert "\n" not in out["error"]


def test_the_page_walks_the_issues_link_in_closed_form():
    form = {"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "300000000",
            "chunk_tokens": "1", "output_tokens": "300", "num_ctx": ""}
    start = time.perf_counter()
    out = json.loads(entry.call("simulate_view", json.dumps([form])))
    assert time.perf_counter() - start < 3
    assert out["ok"]["walk"]["stages"][3]["chunk_count"] == 300_000_000
    assert "does not fit" in out["ok"]["summary"]


# ----------------------------------------------------------------- calibration by identity

def _walk_json(*args) -> dict:
    done = subprocess.run([sys.executable, "-m", "tokenwalk", "walk", *args, "--json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_user_machine_named_like_a_calibrated_one_is_not_calibrated_by_its_name(tmp_path):
    """Issue item 11: a JSON machine named `laptop-860m` (the laptop's spec with twice the
    bandwidth, no calibration of its own) or `this-machine` is timed on the published fit,
    not on the measurements of the machine whose name it borrows."""
    laptop = json.loads((ROOT / "tokenwalk/data/machines/laptop-860m.json").read_text(encoding="utf-8"))
    mine = {k: v for k, v in laptop.items() if k not in ("calibration", "system_and_apps_bytes")}
    request = ["--model", "qwen3.6-35b-a3b", "--prompt-tokens", "6550", "--output-tokens", "300"]
    preset = _walk_json(*request, "--machine", "laptop-860m")
    for name in ("laptop-860m", "this-machine"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**mine, "name": name, "bandwidth_gbs": 2 * laptop["bandwidth_gbs"]}),
                        encoding="utf-8")
        walk = _walk_json(*request, "--machine", str(path))
        assert walk["machine"] == name
        assert walk["efficiency"]["decode"]["from"] != preset["efficiency"]["decode"]["from"]
        assert not walk["efficiency"]["decode"]["from"].endswith(name)
        assert walk["ranges"] is not None, "an uncalibrated machine gets the fit's likely range"
        assert walk["decode_tok_s"] != pytest.approx(preset["decode_tok_s"], rel=0.05)


def test_the_page_calibrates_no_custom_machine():
    """The page's custom machine (the laptop's numbers typed in) is timed on the fit: it is
    always named "custom", carries no calibration, and a name cannot be smuggled in."""
    laptop = load_machine("laptop-860m")
    form = {"model": "qwen3.6-35b-a3b", "machine": "custom", "prompt_tokens": "6550", "output_tokens": "300",
            "bandwidth_gbs": str(laptop.bandwidth_gbs), "fp16_tflops": str(laptop.fp16_tflops),
            "memory_gb": str(laptop.memory_gb), "name": "laptop-860m", "calibration": laptop.calibration}
    walk = json.loads(entry.call("simulate", json.dumps([form])))["ok"]
    assert walk["machine"] == "custom" and walk["ranges"] is not None
    assert "laptop-860m" not in walk["efficiency"]["decode"]["from"]


def test_the_page_keeps_a_bounded_number_of_files_and_names_them_by_file():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_hostile", ROOT / "tests/fixtures/hostile/make_hostile.py")
    make_hostile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_hostile)
    data = make_hostile.gguf_bytes(make_hostile.model_kvs(**{"general.name": (make_hostile.STR, "qwen3.6-35b-a3b")}))
    keys = [entry.inspect_gguf(data, len(data), f" model {i}\x1b.gguf ")["key"] for i in range(entry.MAX_GGUF_MODELS + 4)]
    assert keys[0] == "file:model 0\\x1b.gguf" and len(set(keys)) == len(keys)
    assert len(entry._gguf_models) <= entry.MAX_GGUF_MODELS and keys[-1] in entry._gguf_models
    with pytest.raises(TokenwalkError, match="pick it again"):
        entry.simulate({"model": keys[0], "machine": "laptop-860m", "prompt_tokens": 10, "output_tokens": 1})
    # the preset its general.name borrows is still the preset
    walk = entry.simulate({"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": 10,
                           "output_tokens": 1})
    assert walk["weights_bytes"] == load_model("qwen3.6-35b-a3b").size_bytes
    walk = entry.simulate({"model": keys[-1], "machine": "laptop-860m", "prompt_tokens": 10, "output_tokens": 1})
    assert walk["model"] == f"model {entry.MAX_GGUF_MODELS + 3}\\x1b.gguf"
