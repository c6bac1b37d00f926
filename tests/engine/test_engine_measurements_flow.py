"""The build machine's measurements (data/measurements/engine.json, written by `tokenwalk
measure`) reach the article's aside "Measured with `tokenwalk measure` on <device>, <date>" (chapter 7,
section "TokenWalk") and the simulator's "this machine" preset.

A substituted copy of engine.json (through `data_refs.read_data_json`, as
test_content_measurement_flow.py does for the laptop) shows that the box and the preset follow
the file, and that a missing file turns the box into a note instead of a build failure.
"""

from __future__ import annotations

import json

import pytest

from tests.support.content import jinja_env
from tests.support.context import fresh_context
from tests.support.data_substitute import substitute_data_file

ENGINE_FILE = "measurements/engine.json"
CHAPTER = "07-numbers.md"
BOX_TITLE = "Measured with `tokenwalk measure`"


def _engine_file() -> dict:
    from tokenwalk import data_refs

    return data_refs.read_data_json(ENGINE_FILE)


def _substitute(monkeypatch, change):
    """engine.json reads as `change(copy)` (None: the file is missing)."""
    substitute_data_file(monkeypatch, ENGINE_FILE, change)


def _box(numbers: dict) -> str:
    """The aside of section "TokenWalk" that holds the build machine's numbers."""
    text = jinja_env().get_template(CHAPTER).render(n=numbers)
    start = text.index(BOX_TITLE)
    return text[start:text.index("\n:::", start)]


def test_article_numbers_expose_every_value_of_engine_json():
    from tests.support.content import default_numbers

    n = default_numbers()
    values = _engine_file()["values"]
    assert n["engine"] is not None
    for key, entry in values.items():
        assert n[f"engine_{key}"] == entry["value"], key
    assert n["engine_when"] == _engine_file()["when"]
    assert n["engine_model_file"] == _engine_file()["model"]
    # the step time and the time the weights take to stream at the measured bandwidth
    assert n["engine_decode_step_ms"] == pytest.approx(1e3 / values["decode_tok_s"]["value"])
    assert n["engine_weights_step_ms"] == pytest.approx(
        values["bytes_read_per_token"]["value"] / (values["measured_bandwidth_gbs"]["value"] * 1e9) * 1e3)


def test_tokenwalk_aside_shows_the_measured_decode_speed_and_follows_the_file(monkeypatch):
    from article.numbers import article_numbers
    from tests.support.content import default_numbers

    base = default_numbers()
    before = _box(base)
    assert f"{base['engine_decode_tok_s']:.1f} tok/s" in before
    assert base["engine_device"] in before
    # named for what it is: the tool, the device and the date of the measurement
    assert before.startswith(f"{BOX_TITLE} on {base['engine_device']}, {base['engine_when']}.")
    assert f"on {base['engine_compute_units']} CPU cores" in before

    def faster(data):
        data["values"]["decode_tok_s"]["value"] = 2 * data["values"]["decode_tok_s"]["value"]
        return data

    _substitute(monkeypatch, faster)
    moved = article_numbers()
    after = _box(moved)
    assert moved["engine_decode_tok_s"] == 2 * base["engine_decode_tok_s"]
    assert moved["engine_decode_step_ms"] == pytest.approx(base["engine_decode_step_ms"] / 2)
    assert after != before
    assert f"{moved['engine_decode_tok_s']:.1f} tok/s" in after
    # the laptop's numbers beside it do not move
    assert moved["decode_tok_s_moe"] == base["decode_tok_s_moe"]


def test_without_engine_json_the_box_says_the_machine_was_not_measured(monkeypatch):
    from article.numbers import article_numbers
    from tokenwalk.specs.machine import has_measured_machine

    _substitute(monkeypatch, lambda data: None)
    n = article_numbers()
    assert n["engine"] is None
    assert not has_measured_machine()
    box = _box(n)
    assert "has not been measured" in box and "tokenwalk measure" in box


def test_this_machine_preset_has_the_measured_bandwidth_and_prefill_rate():
    from tokenwalk.physics.roofline import attention_width, flops_per_token
    from tokenwalk.specs.machine import load_machine, measured_model

    data = _engine_file()
    values = {k: v["value"] for k, v in data["values"].items()}
    machine = load_machine("this-machine")
    assert machine.name == "this-machine" and machine.title == "the build machine (measured)"
    assert machine.bandwidth_gbs == values["measured_bandwidth_gbs"]
    model = measured_model(data["model"])
    # operations of the measured prefill: the weights' 2 x active params per token, and the
    # attention's 4 x width per (query, key) pair in every layer, n^2/2 pairs under the mask
    p = values["prompt_tokens"]
    ops = p * flops_per_token(model) + 4 * model.kv_layers * attention_width(model) * p * p / 2
    assert machine.fp16_tflops == pytest.approx(ops / (p / values["prefill_tok_s"]) / 1e12)
    # more than the weights alone would say: at the request's length attention is a large share
    assert machine.fp16_tflops > values["prefill_tok_s"] * flops_per_token(model) / 1e12
    assert machine.memory_gb == pytest.approx(values["memory_bytes"] / 1e9)
    assert machine.backend == "CPU"  # the engine ran on PoCL, the CPU itself
    assert "lower bound" in machine.sources["fp16_tflops"]


def test_this_machine_follows_a_changed_bandwidth(monkeypatch):
    from tokenwalk.specs.machine import load_machine

    def halved(data):
        data["values"]["measured_bandwidth_gbs"]["value"] /= 2
        return data

    base = load_machine("this-machine").bandwidth_gbs
    _substitute(monkeypatch, halved)
    assert load_machine("this-machine").bandwidth_gbs == pytest.approx(base / 2)


def test_this_machine_without_engine_json_is_a_one_line_error(monkeypatch):
    from tokenwalk.errors import SpecError
    from tokenwalk.specs.machine import load_machine

    _substitute(monkeypatch, lambda data: None)
    with pytest.raises(SpecError, match=r"engine\.json: not found.*tokenwalk measure"):
        load_machine("this-machine")


def test_walk_cli_accepts_this_machine(capsys):
    from tokenwalk.cli import main

    rc = main(["walk", "--model", "smollm2-135m", "--machine", "this-machine", "--prompt-tokens", "500",
               "--output-tokens", "20", "--json"])
    assert rc in (0, None)
    walk = json.loads(capsys.readouterr().out)
    assert walk["machine"] == "this-machine"
    assert walk["decode_tok_s"] > 0


def test_simulator_lists_this_machine_and_the_browser_resolves_it():
    from figures.simulator import inputs
    from tokenwalk.specs.machine import load_machine
    from tokenwalk_app.entry import simulate

    machines = {m["name"]: m for m in inputs(fresh_context())["machines"]}
    assert machines["this-machine"]["bandwidth_gbs"] == load_machine("this-machine").bandwidth_gbs
    walk = simulate({"model": "smollm2-135m", "machine": "this-machine", "prompt_tokens": 500, "output_tokens": 20})
    assert walk["machine"] == "this-machine"


def test_a_second_models_measurement_adds_a_column_to_the_aside(monkeypatch):
    """`tokenwalk measure --model gemma3-270m` writes engine-gemma3-270m.json; the aside's table
    gains a column with that run's numbers, beside the SmolLM2 run."""
    import copy

    from article.numbers import article_numbers
    from tokenwalk.specs import machine

    gemma = copy.deepcopy(_engine_file())
    gemma["model"], gemma["when"] = "gemma-3-270m-q4_k_m.gguf", "2026-12-02"
    gemma["values"]["decode_tok_s"]["value"] = 31.5
    gemma["values"]["prompt_tokens"]["value"] = 6380
    monkeypatch.setattr(machine, "other_engine_measurements",
                        lambda store=None: [("measurements/engine-gemma3-270m.json", gemma)])
    box = _box(article_numbers())
    header = next(line for line in box.splitlines() if line.startswith("| |"))
    decode = next(line for line in box.splitlines() if line.startswith("| Decode |"))
    assert header.count("|") == 5 and "The same machine" in header
    assert "31.5 tok/s" in decode and "6,380 tokens" in box and "Gemma 3 270M" in box
    # one machine, one bandwidth: the second run's own probe is not printed, and its share is
    # taken against the first run's probe
    gemma["values"]["measured_bandwidth_gbs"]["value"] = 45.32
    n = article_numbers()
    box = _box(n)
    bandwidth = next(line for line in box.splitlines() if line.startswith("| Memory bandwidth |"))
    assert "45.3" not in bandwidth and bandwidth.count(f"{n['engine_measured_bandwidth_gbs']:.1f} GB/s") == 2
    share = 31.5 * gemma["values"]["bytes_read_per_token"]["value"] / (n["engine_measured_bandwidth_gbs"] * 1e9)
    assert f"{round(100 * share)}\u00a0%" in next(line for line in box.splitlines() if line.startswith("| Share"))

    del gemma["values"]["decode_tok_s"]
    with pytest.raises(Exception, match=r"engine-gemma3-270m\.json: values: missing 'decode_tok_s'"):
        article_numbers()


def test_measure_writes_each_named_model_to_its_own_file():
    from tokenwalk.cli._paths import MEASUREMENTS_FILE, measurements_file

    assert measurements_file(None) == measurements_file("smollm2-135m") == MEASUREMENTS_FILE
    assert measurements_file("gemma3-270m").name == "engine-gemma3-270m.json"
    assert measurements_file("some/file.gguf") == MEASUREMENTS_FILE


def test_a_run_on_another_machine_says_so_and_keeps_its_own_probe(monkeypatch):
    """Runs from two machines: the column of the one whose OpenCL device differs from engine.json's
    is headed with its date and prints its own bandwidth and share."""
    import copy

    from article.numbers import article_numbers
    from tokenwalk.specs import machine

    same, other = copy.deepcopy(_engine_file()), copy.deepcopy(_engine_file())
    same["model"] = "gemma-3-270m-q4_k_m.gguf"
    other["model"], other["when"] = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "2026-12-03"
    other["where"] = "pthread-zen5-AMD EPYC (Portable Computing Language, 2 compute units, OpenCL device)"
    assert other["where"] != _engine_file()["where"]  # another machine than engine.json's
    other["values"]["measured_bandwidth_gbs"]["value"] = 20.41
    other["values"]["decode_tok_s"]["value"] = 11.12
    other["values"]["decode_bandwidth_share"]["value"] = 0.2135  # as measure wrote it, against its own probe
    monkeypatch.setattr(machine, "other_engine_measurements",
                        lambda store=None: [("measurements/engine-gemma3-270m.json", same),
                                 ("measurements/engine-qwen2.5-coder-0.5b.json", other)])
    box = _box(article_numbers())
    rows = {line.split("|")[1].strip(): line for line in box.splitlines() if line.startswith("|")}
    assert rows[""].count("|") == 6 and "The same machine" in rows[""]
    assert "Another build machine, 2026-12-03" in rows[""] and "Qwen2.5-Coder 0.5B Q4_K_M" in rows["Model"]
    assert "20.4 GB/s, its own probe" in rows["Memory bandwidth"] and "the same probe" in rows["Memory bandwidth"]
    assert rows["Share of it decode uses"].split("|")[4].strip() == "21\u00a0%"
    assert "the next columns run the same request through Gemma 3 270M Q4_K_M" in " ".join(box.split())
