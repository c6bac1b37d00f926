"""`make measure-llama-bench` (benchmarks/llama_bench_peer.py) writes the measurement the size
check reads: with a stand-in llama-bench that prints the committed runs, the file it writes
gives `tokenwalk validate`'s llama.cpp size check the same rows (README "The size check")."""

from __future__ import annotations

import json
import shutil
import stat

import pytest

from benchmarks import llama_bench_peer
from tokenwalk.data_refs import DEFAULT_ROOT, DataStore
from tokenwalk.timing import size_check


def test_the_written_measurement_is_the_one_the_size_check_reads(tmp_path, capsys):
    if not all(m.is_file() for m in llama_bench_peer.MODELS):
        pytest.skip("the three model files are not fetched (make setup)")
    data = tmp_path / "data"
    shutil.copytree(DEFAULT_ROOT, data)
    committed = json.loads((DEFAULT_ROOT / size_check.LLAMA_BENCH_FILE).read_text())
    (tmp_path / "runs.json").write_text(json.dumps(committed["runs"]))
    fake = tmp_path / "llama-bench"
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'runs.json'}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = data / size_check.LLAMA_BENCH_FILE
    assert llama_bench_peer.main(["--llama-bench", str(fake), "--reps", "10", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["runs"] == committed["runs"] and written["machine"] == "this-machine"
    assert "llama.cpp commit 0c1e570" in written["measured_by"] and "-t 2 -r 10 -o json" in written["measured_by"]
    assert size_check.llama_bench_leave_one_model_out(DataStore(data)) == size_check.llama_bench_leave_one_model_out()
    assert "wrote " in capsys.readouterr().out


def test_a_missing_model_file_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(llama_bench_peer, "MODELS", [tmp_path / "absent.gguf"])
    assert llama_bench_peer.main(["--llama-bench", "/bin/false", "--out", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err == "llama_bench_peer: absent.gguf is missing (make setup fetches it)\n"
