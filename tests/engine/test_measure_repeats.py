"""`tokenwalk measure --repeats N`: several runs of the request, one file whose timed values
are the runs' medians (a machine shared with other work slows some runs), the shares
recomputed from those medians, each run kept, and the command and the machine's load recorded.
And `make bench-engine`'s pieces that need no model: the launch count of a step's list and
the table the README quotes."""

from __future__ import annotations

import copy

import pytest

from tokenwalk.native.measure import TIMED_VALUES, median_of_runs


def _run(prefill: float, decode: float, bandwidth: float, load: float = 2.0, ttft: float = 20.0) -> dict:
    """A measure() result with the given timed values (the rest as a Qwen2.5-Coder run has them)."""
    def v(value, unit="", what="x"):
        return {"value": value, "unit": unit, "what": what, "source": "tokenwalk measure, 2026-12-03"}

    values = {"device": v("pthread-AMD EPYC (Portable Computing Language, 2 compute units)"),
              "load_s": v(load, "s"), "prompt_tokens": v(6584, "tokens"), "output_tokens": v(300, "tokens"),
              "prefill_tok_s": v(prefill, "tok/s"), "ttft_s": v(ttft, "s"), "decode_tok_s": v(decode, "tok/s"),
              "bytes_read_per_token": v(391860328, "bytes"), "measured_bandwidth_gbs": v(bandwidth, "GB/s"),
              "decode_bandwidth_share": v(decode * 391860328 / (bandwidth * 1e9)),
              "kv_bytes_read_per_token": v(83_000_000, "bytes"),
              "decode_bandwidth_share_with_kv": v(0.0)}
    return {"what": "w", "where": "d", "when": "2026-12-03", "how": "tokenwalk measure: ...", "model": "m.gguf",
            "values": values}


RUNS = [_run(300.0, 30.0, 40.0, load=2.5), _run(100.0, 10.0, 20.0, load=9.0), _run(320.0, 28.0, 44.0, load=2.0)]


def test_each_timed_value_is_the_median_of_the_runs():
    out = median_of_runs(copy.deepcopy(RUNS), "tokenwalk measure --model qwen2.5-coder-0.5b --repeats 3",
                         (3.5, 6.25), "shared with other work")
    values = {k: e["value"] for k, e in out["values"].items()}
    # the slowed second run (a third of the others' speeds) sets none of them
    assert (values["prefill_tok_s"], values["decode_tok_s"], values["measured_bandwidth_gbs"], values["load_s"]) == \
        (300.0, 28.0, 40.0, 2.5)
    # the shares are the quotient of the medians, not medians of the runs' shares
    assert values["decode_bandwidth_share"] == round(28.0 * 391860328 / 40e9, 4) == 0.2743
    assert values["decode_bandwidth_share_with_kv"] == round(28.0 * (391860328 + 83_000_000) / 40e9, 4)
    assert values["prompt_tokens"] == 6584 and values["bytes_read_per_token"] == 391860328
    assert out["values"]["decode_tok_s"]["what"].endswith("(median of 3 runs)")


def test_the_file_says_how_when_and_under_what_load_it_was_measured():
    out = median_of_runs(copy.deepcopy(RUNS), "tokenwalk measure --repeats 3", (3.5, 6.25), "shared with other work")
    assert out["command"] == "tokenwalk measure --repeats 3"
    assert out["conditions"] == "one-minute load average 3.5 before the runs, 6.25 after them; shared with other work"
    assert "Run 3 times in a row" in out["how"] and out["when"] == "2026-12-03"
    assert out["cpu"].endswith("logical CPUs")
    assert [r["decode_tok_s"] for r in out["runs"]] == [30.0, 10.0, 28.0]
    assert set(out["runs"][0]) == set(TIMED_VALUES)
    # the runs given are not changed
    assert RUNS[0]["values"]["decode_tok_s"]["what"] == "x"


def test_runs_of_different_requests_are_refused():
    other = copy.deepcopy(RUNS)
    other[2]["values"]["prompt_tokens"]["value"] = 6000
    with pytest.raises(ValueError, match="the runs differ in prompt_tokens: 6584 and 6000"):
        median_of_runs(other, "tokenwalk measure")


def test_repeats_outside_its_range_is_one_line(capsys):
    from tokenwalk.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["measure", "--repeats", "0"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--repeats: must be a whole number from 1 to 9, not 0" in err and "Traceback" not in err


def test_the_command_recorded_names_what_changes_the_measurement():
    import argparse

    from tokenwalk.cli.measure import _command

    args = argparse.Namespace(model="qwen2.5-coder-0.5b", request=None, device=None, ctx=None, output_tokens=None,
                              chunk=128, repeats=3, note="shared machine")
    assert _command(args) == "tokenwalk measure --model qwen2.5-coder-0.5b --repeats 3 --note 'shared machine'"


def test_launches_are_counted_as_kernels_not_fills_or_copies():
    from tokenwalk.native.cl.ops import CopyRow, ZeroBuffer, kernel_launches

    launches = [ZeroBuffer(None, 64), ("kernel", (2,), None), CopyRow(None, None, 0, 4), ("kernel", (2,), (1,))]
    assert kernel_launches(launches) == 2


def test_bench_table_gives_medians_ratios_launches_and_kv():
    from benchmarks.engine_bench import summary_table

    ours = {"model": "m.gguf", "load": [0.5, 0.6, 0.4], "pp512": [1000, 1200, 1100], "tg128": [100, 80, 90],
            "tg_long": [50, 60, 55], "launches_per_step": 100, "kv_ctx": 32768, "kv_bytes": 100 * 2**20}
    peer = {"model": "m.gguf", "load": [0.2, 0.25, 0.3], "pp512": [500, 550, 600], "tg128": [100, 100, 100],
            "tg_long": [40, 50, 60], "kv_ctx": 32768, "kv_bytes": 24 * 2**20}
    lines = summary_table([ours, peer], 6000).splitlines()
    assert lines[0].startswith("| | load s | pp512 tok/s | tg128 tok/s | tg@6,000 tok/s | launches/step | µs/launch")
    # median 90 tok/s: a step of 11,111 µs over 100 launches
    assert lines[2] == "| m.gguf, engine | 0.50 | 1,100.0 | 90.0 | 55.0 | 100 | 111.1 | 100.0 MiB at 32,768 |"
    assert lines[3] == "| m.gguf, llama.cpp | 0.25 | 550.0 | 100.0 | 50.0 | | | 24.0 MiB at 32,768 |"
    assert lines[4] == "| engine / llama.cpp (speed) | 0.50 | 2.00 | 0.90 | 1.10 | | | |"


def test_bench_times_each_kind_of_decode_product_once():
    """`make bench-engine`'s products alone: one row per role and weight layout, then the head,
    each a positive time whose GB/s is the matrix's bytes over it (SmolLM2: Q4_1 throughout,
    its tied head Q8_0)."""
    pytest.importorskip("pyopencl")
    from benchmarks.engine_bench import EngineSide
    from tests.engine.test_engine_peer import MODELS

    if not MODELS["smollm2"].exists():
        pytest.skip("SmolLM2 file not fetched (run make setup)")
    side = EngineSide(MODELS["smollm2"], 64)
    rows = side.products(launches=2, rounds=2)
    assert [(r["role"], r["layout"]) for r in rows] == [("qkv", "Q4_1"), ("out", "Q4_1"), ("gate_up", "Q4_1"),
                                                        ("down", "Q4_1"), ("head", "Q8_0")]
    head = rows[-1]
    assert (head["rows"], head["cols"]) == (49152, 576) and head["bytes"] == side.engine.weights.head.nbytes
    for r in rows:
        assert r["us"] > 0 and r["gbs"] == pytest.approx(r["bytes"] / (r["us"] * 1e-6) / 1e9)
