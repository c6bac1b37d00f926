"""A reader's own llama-bench runs (`tokenwalk.timing.own_runs`): read as llama-bench prints
them, matched to models, and a machine calibrated on them with the laptop's code (the
simulator's "Time it on your own llama-bench runs", issue "The simulator where readers take it").

The llama-bench output in tests/fixtures/llama-bench/ is the example of llama.cpp's own
tools/llama-bench/README.md (the copy vendored in llama-cpp-python 0.3.36, llama.cpp commit
0c1e570): Qwen2.5 7B Q4_K_M on an RTX 4080, pp512 and tg128."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tokenwalk.errors import TokenwalkError
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import list_model_presets, load_model
from tokenwalk.timing import model as timing_model
from tokenwalk.timing import own_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama-bench"
README_JSON = FIXTURES / "readme-qwen2.5-7b-rtx4080.json"
README_JSONL = FIXTURES / "readme-qwen2.5-7b-rtx4080.jsonl"


def _row(**fields) -> dict:
    base = json.loads(README_JSON.read_text())[0]
    return {**base, **fields}


def test_llama_benchs_own_json_example_reads_as_its_two_tests():
    runs, notes = own_runs.parse_llama_bench(README_JSON.read_text())
    assert notes == []
    assert [(r.test, r.phase, r.tok_s) for r in runs] == [("pp512", "prefill", 7100.002165),
                                                        ("tg128", "decode", 118.881588)]
    assert runs[0].params == 7615616512 and runs[0].size_bytes == 4677120000 and runs[0].ubatch_tokens == 512
    assert runs[0].model_type == "qwen2 7B Q4_K - Medium" and runs[0].model is None
    assert runs[1].decode_context_tokens == 63.5  # tg128 from an empty cache: 0 .. 127 cached


def test_json_lines_read_the_same_as_the_array():
    runs, _ = own_runs.parse_llama_bench(README_JSONL.read_text())
    assert [(r.test, r.tok_s) for r in runs] == [("pp512", 7263.609157), ("tg128", 119.844681)]


@pytest.mark.parametrize("text, says", [
    ("", "llama-bench output: nothing given"),
    ("| model | size | params |", "llama-bench output: line 1: the table has no column 'test'"),
    ("model size params", "llama-bench output: not llama-bench's output (it begins 'model size params'); paste the table"),
    ("[{\"n_prompt\": 512", "llama-bench output: line 1 column 18: not valid JSON"),
    (json.dumps([_row(avg_ts="fast")]), "llama-bench output: test 1: field 'avg_ts': 'fast' is not a speed in tok/s"),
    (json.dumps([_row(), {k: v for k, v in _row().items() if k != "model_n_params"}]),
     "llama-bench output: test 2: field 'model_n_params' is missing"),
    (json.dumps([_row(n_prompt=0, n_gen=0)]), "llama-bench output: test 1: n_prompt and n_gen are both 0"),
    (json.dumps([_row(n_gen=1.5)]), "llama-bench output: test 1: field 'n_gen': '1.5' is not a whole number"),
    (json.dumps([_row()] * 65), "llama-bench output: 65 tests; at most 64 are read"),
    (json.dumps({"tests": []}), "llama-bench output: test 1: field 'model_n_params' is missing"),
])
def test_what_is_not_llama_bench_output_is_one_line_naming_the_test_and_field(text, says):
    with pytest.raises(TokenwalkError) as error:
        own_runs.parse_llama_bench(text)
    assert str(error.value).startswith(says) and "\n" not in str(error.value)


def test_a_combined_pp_tg_test_is_set_aside_with_a_note():
    runs, notes = own_runs.parse_llama_bench(json.dumps([_row(n_prompt=512, n_gen=128), _row(n_gen=0)]))
    assert [r.row for r in runs] == [2]
    assert notes == ["test 1 (pp512+tg128) times both phases at once: set aside"]


def test_a_link_carries_the_runs_and_reads_back_to_the_same_tests():
    runs, _ = own_runs.parse_llama_bench(README_JSON.read_text())
    compact = [r.compact() for r in runs]
    back, notes = own_runs.read_runs(json.dumps(compact))
    assert notes == [] and [r.compact() for r in back] == compact
    assert [r.compact() for r in own_runs.read_runs(compact)[0]] == compact
    with pytest.raises(TokenwalkError, match=r"^runs: run 1: expected \[model_n_params, model_size"):
        own_runs.from_compact([[1, 2, 3]])


def test_a_run_is_matched_by_its_count_of_weights_and_the_nearest_size():
    small = load_model("smollm2-135m")
    q8 = replace(small, size_bytes=small.size_bytes * 1.9)
    models = {"q4": small, "q8": q8, "other": load_model("gemma3-270m")}
    tensors_bytes = small.size_bytes * 0.98  # llama-bench's model_size: the tensors, not the header
    runs = [own_runs.OwnRun(row=1, model_type="llama ?B Q4_1", params=small.params, size_bytes=int(tensors_bytes),
                            prompt_tokens=0, gen_tokens=128, depth_tokens=0, ubatch_tokens=512, tok_s=50.0)]
    runs.append(replace(runs[0], row=2, size_bytes=int(q8.size_bytes)))
    runs.append(replace(runs[0], row=3, params=small.params + 10_000_000))  # another model of about that size
    assert [r.model for r in own_runs.match_models(runs, models)] == ["q4", "q8", None]
    # the reader's own file of the same model, listed after the presets, is the one it ran
    assert own_runs.match_models(runs[:1], {**models, "file:mine.gguf": small})[0].model == "file:mine.gguf"


def _laptop_runs() -> list:
    """The laptop's own measurements (measurements/laptop.json) as the llama-bench tests that
    time the same steps: one token written after the prompt's 2,900 (tg1 @ d2900) for each
    decode speed, and the prompt read in steps of 512 (pp2900, n_ubatch 512)."""
    values = json.loads(Path("tokenwalk/data/measurements/laptop.json").read_text())["values"]
    prompt = values["prefill_prompt_tokens"]["value"]

    def run(row, key, prompt_tokens, gen, depth):
        entry = values[key]
        return own_runs.OwnRun(row=row, model_type="", params=0, size_bytes=0, prompt_tokens=prompt_tokens,
                               gen_tokens=gen, depth_tokens=depth, ubatch_tokens=512, tok_s=entry["value"],
                               model=entry["model"])

    return [run(1, "decode_tok_s_moe", 0, 1, prompt), run(2, "decode_tok_s_dense", 0, 1, prompt),
            run(3, "prefill_tok_s_moe", prompt, 0, 0)]


def test_the_laptops_measurements_as_llama_bench_tests_give_the_laptops_own_calibration(project_root, monkeypatch):
    """The same code solves both: the preset's calibration (measurement files) and a reader's
    runs (own_runs) agree to the last kept digit."""
    monkeypatch.chdir(project_root)
    laptop = load_machine("laptop-860m")
    models = {name: load_model(name) for name in list_model_presets()}
    calibrated = own_runs.calibrate(laptop, _laptop_runs(), models)
    preset = timing_model.coefficients(laptop)
    assert calibrated.coefficients == {"bandwidth_efficiency": preset.bandwidth_efficiency,
                                       "launch_cost_s": preset.launch_cost_s,
                                       "compute_efficiency": preset.compute_efficiency}
    assert [r["used"] for r in calibrated.rows] == ["decode", "decode", "prefill"]
    for row in calibrated.rows:  # two equations, two unknowns, then the prefill: each met
        assert row["calibrated_tok_s"] == pytest.approx(row["measured_tok_s"], rel=2e-3), row
    # the cold load the preset measured still times the load
    assert calibrated.machine.calibration["load"] == laptop.calibration["load"]


def test_speeds_a_calibration_predicts_calibrate_back_to_it():
    """Runs made from known coefficients on a stand-in machine give those coefficients back;
    a third model, not solved on, is predicted as the coefficients say."""
    machine = replace(load_machine("rtx-5090"), name="stand-in", calibration=None)
    known = {"bandwidth_efficiency": 0.61, "launch_cost_s": 7.5e-6, "compute_efficiency": 0.37}
    truth = replace(machine, calibration={"solved": known})
    models = {name: load_model(name) for name in ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b")}
    runs = []
    for name, phase in (("smollm2-135m", "decode"), ("qwen2.5-coder-0.5b", "decode"), ("gemma3-270m", "decode"),
                        ("qwen2.5-coder-0.5b", "prefill")):
        run = own_runs.OwnRun(row=len(runs) + 1, model_type="", params=0, size_bytes=0,
                              prompt_tokens=512 if phase == "prefill" else 0, gen_tokens=128 if phase == "decode" else 0,
                              depth_tokens=0, ubatch_tokens=512, tok_s=1.0, model=name)
        timed = timing_model.machine_timing(models[name], truth)
        runs.append(replace(run, tok_s=own_runs.run_tok_s(run, timed)))
    calibrated = own_runs.calibrate(machine, runs, models)
    assert calibrated.coefficients == pytest.approx(known, rel=2e-3)
    assert calibrated.note == ""
    # the pair whose reads per launch differ most solves decode; Gemma is a check
    assert [r["used"] for r in calibrated.rows] == ["decode", "decode", "", "prefill"]
    assert calibrated.rows[2]["calibrated_tok_s"] == pytest.approx(runs[2].tok_s, rel=5e-3)


def test_one_models_decode_takes_the_fitted_rows_cost_per_launch_and_says_so():
    machine = load_machine("rtx-5090")
    models = {"smollm2-135m": load_model("smollm2-135m")}
    run = own_runs.OwnRun(row=1, model_type="", params=0, size_bytes=0, prompt_tokens=0, gen_tokens=128,
                          depth_tokens=0, ubatch_tokens=512, tok_s=1.0, model="smollm2-135m")
    fitted = own_runs.run_tok_s(run, timing_model.machine_timing(models["smollm2-135m"], machine))
    run = replace(run, tok_s=round(0.8 * fitted))  # a fifth slower than the fit says: the reads slower
    calibrated = own_runs.calibrate(machine, [run], models)
    row = timing_model.coefficients(machine)
    assert calibrated.coefficients["launch_cost_s"] == row.launch_cost_s
    assert calibrated.coefficients["compute_efficiency"] == row.compute_efficiency
    assert "no prefill speed" in calibrated.note and "one model's decode: the cost per launch is the fitted" in calibrated.note
    assert calibrated.rows[0]["calibrated_tok_s"] == pytest.approx(run.tok_s, rel=2e-3)
    assert calibrated.rows[0]["fit_tok_s"] == pytest.approx(fitted)


def test_runs_of_no_model_here_ask_for_its_file_in_one_line():
    runs, _ = own_runs.parse_llama_bench(README_JSON.read_text())
    models = {name: load_model(name) for name in list_model_presets()}
    with pytest.raises(TokenwalkError) as error:
        own_runs.calibrate(load_machine("rtx-5090"), own_runs.match_models(runs, models), models)
    assert str(error.value) == ("your llama-bench runs: no tg test is of a model here (test 2's has 7,615,616,512 "
                                "weights in 4.68 GB): pick that model's GGUF file under Model")


BUILD_MACHINE_RUNS = Path(__file__).resolve().parents[2] / "tokenwalk" / "data" / "measurements" / "llama-bench-build-machine.json"


def test_real_llama_bench_runs_of_three_models_calibrated_on_two_predict_the_third():
    """llama-bench itself (llama.cpp 0c1e570 as vendored in llama-cpp-python 0.3.36, CPU backend,
    2 threads, -r 10) on the machine that builds the page, with the three models `make setup`
    fetches: SmolLM2's and Qwen2.5's decode solve the machine, Gemma 3's decode is predicted
    (section "TokenWalk", the simulator's runs table)."""
    runs, notes = own_runs.parse_llama_bench(json.dumps(json.loads(BUILD_MACHINE_RUNS.read_text())["runs"]))
    assert notes == [] and [r.test for r in runs] == ["pp512", "tg128"] * 3
    models = {name: load_model(name) for name in list_model_presets()}
    runs = own_runs.match_models(runs, models)
    assert [r.model for r in runs[::2]] == ["smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"]
    calibrated = own_runs.calibrate(load_machine("this-machine"), runs, models)
    by_test = {(r["model"], r["test"]): r for r in calibrated.rows}
    assert [k for k, r in by_test.items() if r["used"]] == [
        ("smollm2-135m", "tg128"), ("qwen2.5-coder-0.5b", "pp512"), ("qwen2.5-coder-0.5b", "tg128")]
    gemma = by_test[("gemma3-270m", "tg128")]
    assert gemma["calibrated_tok_s"] == pytest.approx(gemma["measured_tok_s"], rel=0.05)  # between the two: 3.7 %
    gemma_prefill = by_test[("gemma3-270m", "pp512")]
    assert gemma_prefill["calibrated_tok_s"] == pytest.approx(gemma_prefill["measured_tok_s"], rel=0.10)  # 1.5 %


TABLE = FIXTURES / "build-machine-smollm2-table.md"


def test_llama_benchs_default_table_reads_as_its_tests_and_finds_its_model():
    """What llama-bench prints without -o (a markdown table; tests/fixtures/llama-bench/
    build-machine-smollm2-table.md, printed by llama-bench 0c1e570 on the build machine with
    `-p 64 -n 16 -r 1`): params to two decimals ("134.52 M") still find SmolLM2's 134,515,008."""
    runs, notes = own_runs.parse_llama_bench(TABLE.read_text())
    assert notes == [] and [(r.test, r.tok_s) for r in runs] == [("pp64", 76.57), ("tg16", 28.58)]
    assert runs[0].params == 134_520_000 and runs[0].params_rounding == 5_000
    assert runs[0].size_bytes == round(92.10 * 2**20) and runs[0].model_type == "llama 256M Q4_1"
    models = {name: load_model(name) for name in list_model_presets()}
    assert [r.model for r in own_runs.match_models(runs, models)] == ["smollm2-135m"] * 2
    # the rounding travels with a link, so the model is found again where it is opened
    back = own_runs.read_runs([r.compact() for r in runs])[0]
    assert [r.model for r in own_runs.match_models(back, models)] == ["smollm2-135m"] * 2


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace("|     params |", "|      count |"), "line 1: the table has no column 'params'"),
    (lambda t: t.replace("134.52 M", "134.52 k", 1), "line 3: column 'params': '134.52 k' is not as llama-bench prints it"),
    (lambda t: t.replace("tg16 ", "tx16 "), "line 4: column 'test': 'tx16' is not as llama-bench prints it"),
    (lambda t: t.replace("| CPU        |       2 |            pp64", "| CPU        |            pp64"),
     "line 3: 6 cells, the header has 7"),
], ids=["no-params-column", "params-unit", "test-name", "cell-missing"])
def test_a_broken_table_is_one_line_naming_its_line_and_column(edit, says):
    with pytest.raises(TokenwalkError) as error:
        own_runs.parse_llama_bench(edit(TABLE.read_text()))
    assert str(error.value).startswith("llama-bench output: " + says) and "\n" not in str(error.value)
