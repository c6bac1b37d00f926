"""The command line on hostile input: every hostile file, spec or text ends with one line and
status 2 (or a correct result) within seconds and bounded memory; what a file says is
printed with its control characters escaped; `--json` is strict JSON.

The inputs are written at test time by tests/fixtures/hostile/make_hostile.py. Each case
runs `python -m tokenwalk` in a subprocess with a wall-clock timeout and an address-space
limit (RLIMIT_AS), so a hang or a memory bomb fails the test instead of the machine.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import resource
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# every case runs the command line in a process of its own (a module fixture runs the baselines):
# about 20 s of a worker, so `make test` runs them and `make check` does not
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 20          # per case, on a loaded 2-core machine; most take ~0.3 s
MEMORY_BYTES = 1 << 30  # address space of one CLI run (the interpreter alone maps ~30 MB)
CONTROL = {chr(c) for c in range(32)} - {"\n"} | {"\x7f", "\x9b"}


def _load_maker():
    spec = importlib.util.spec_from_file_location("make_hostile", ROOT / "tests/fixtures/hostile/make_hostile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_hostile = _load_maker()


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


# Cases run in a subprocess (a real terminal's bytes, a locale, a hang or a memory bomb
# if the bounds regress); the others call main() in this process, which is ~100x faster.
ISOLATED = ("baseline-", "layers-", "empty-", "keys-", "name-escapes-", "name-not-utf8-", "-nested-deep-",
            "request-big-")


class Outcome:
    def __init__(self, returncode, stdout: bytes, stderr: bytes, seconds: float):
        self.returncode, self.stdout, self.stderr, self.seconds = returncode, stdout, stderr, seconds


def run_cli(argv, env=None) -> Outcome:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full_env.pop("TOKENWALK_DEBUG", None)
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "tokenwalk", *argv], capture_output=True, cwd=ROOT,
                              env=full_env, timeout=TIMEOUT_S, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired as expired:
        return Outcome("timeout", expired.stdout or b"", expired.stderr or b"", TIMEOUT_S)
    return Outcome(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def run_in_process(argv) -> Outcome:
    from tokenwalk.cli import main

    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse refusing an option
        status = exit_.code
    except BaseException:  # an escaped exception is what the test reports
        sys.stdout, sys.stderr = saved
        status = "raised"
        err.write("Traceback (escaped from main):\n" + traceback.format_exc())
    finally:
        sys.stdout, sys.stderr = saved
    return Outcome(status, out.getvalue().encode("utf-8", "surrogateescape"),
                   err.getvalue().encode("utf-8", "surrogateescape"), time.monotonic() - start)


def _run(case) -> Outcome:
    case_id, argv, _, env = case
    if env or any(tag in case_id + "-" for tag in ISOLATED):
        return run_cli(argv, env)
    return run_in_process(argv)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every case run once, as {case id: (case, outcome)}: the isolated ones two at a
    time in subprocesses, then the others in this process."""
    folder = tmp_path_factory.mktemp("hostile")
    cases = make_hostile.write_cases(folder)
    isolated = [c for c in cases if c[3] or any(tag in c[0] + "-" for tag in ISOLATED)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip((c[0] for c in isolated), pool.map(_run, isolated), strict=True))
    for case in cases:
        if case[0] not in results:
            results[case[0]] = _run(case)
    return {case[0]: (case, results[case[0]]) for case in cases}


def _case_ids():
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return [case[0] for case in make_hostile.write_cases(folder)]


CASE_IDS = _case_ids()


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_case_ends_with_one_line_or_a_result(outcomes, case_id):
    (_, argv, expect, _), proc = outcomes[case_id]
    seconds = proc.seconds
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    where = f"tokenwalk {' '.join(argv)}\nstatus {proc.returncode}\nstderr: {err[-2000:]}"
    assert "Traceback" not in err, where
    assert proc.returncode in {"error": (2,), "ok": (0,), "either": (0, 2)}[expect], where
    if proc.returncode == 2:
        assert out == "", where
        lines = [line for line in err.splitlines() if ": warning: " not in line]
        assert len(lines) == 1 and err.endswith("\n") and lines[0].startswith("tokenwalk "), where
    assert seconds < 10, f"{where}\ntook {seconds:.1f} s"
    # Nothing a file says reaches the terminal raw: no ESC, BEL, CR, NUL, C1 control.
    assert not (set(out) | set(err)) & CONTROL, where
    if "--json" in argv and proc.returncode == 0:
        json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json output\n{where}"))


def test_escaped_name_is_readable(outcomes):
    _, proc = outcomes["name-escapes-inspect"]
    out = proc.stdout.decode()
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\rfake line\\x00\\nsecond line" in out
    assert not any(line.startswith("second line") for line in out.splitlines())


def test_error_line_escapes_key_from_file(outcomes):
    _, proc = outcomes["key-escapes-twice-inspect"]
    assert "block_count\\x1b[2J\\x07" in proc.stderr.decode()


def test_not_utf8_name_under_strict_locale(outcomes):
    _, proc = outcomes["name-not-utf8-inspect"]
    assert "caf\\udce9" in proc.stdout.decode()


def test_bombs_are_refused_naming_the_field(outcomes):
    for case_id, what in (("empty-arrays-10m-inspect", "'bomb'"), ("empty-strings-12m-inspect", "'bomb'"),
                          ("empty-strings-split-inspect", "'bomb."), ("keys-10m-inspect", "metadata key count")):
        err = outcomes[case_id][1].stderr.decode()
        assert "byte " in err and what in err and "2,000,000" in err, err


def test_baseline_still_reads(outcomes):
    _, proc = outcomes["baseline-inspect-json"]
    report = json.loads(proc.stdout)
    assert report["layers"] == 2 and report["name"] == "tiny"


def test_invalid_utf8_argument_is_one_line():
    proc = run_cli(["tokenize", "--model", "/nonexistent.gguf", "caf\udce9"])
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


@pytest.mark.skipif(not (ROOT / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf").exists(),
                    reason="SmolLM2 file not fetched (run make setup)")
def test_tokenize_lone_surrogate_is_one_line():
    proc = run_cli(["tokenize", "caf\udce9"], env={"PYTHONUTF8": "1"})
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and "not UTF-8" in err, err


@pytest.mark.parametrize("argv, says", [
    (["generate", "--prompt", "hi", "--max-tokens", "-5"], "--max-tokens: must be a whole number from 1 to"),
    (["generate", "--prompt", "hi", "--ctx", "0"], "--ctx: must be a whole number from 1 to"),
    (["generate", "--prompt", "hi", "--ctx", "99999999999"], "--ctx: must be a whole number from 1 to 1,000,000,000"),
    (["generate", "--prompt", "hi", "--temperature", "nan"], "--temperature: must be a number from 0 to 100"),
    (["generate", "--prompt", "hi", "--top-p", "2"], "--top-p: must be a number from 0 to 1 (0 excluded)"),
    (["generate", "--prompt", "hi", "--top-k", "-1"], "--top-k: must be a whole number from 0 to"),
    (["generate", "--prompt", "hi", "--chunk", "0"], "--chunk: must be a whole number from 1 to"),
    (["generate", "--prompt", "hi", "--seed", "1e3"], "--seed: not an integer: '1e3'"),
    (["measure", "--output-tokens", "0"], "--output-tokens: must be a whole number from 1 to"),
    (["measure", "--chunk", "inf"], "--chunk: not an integer: 'inf'"),
])
def test_engine_number_options_are_checked_against_their_domain(argv, says):
    """generate and measure take their numbers through the schema's GENERATION_DOMAINS, as
    walk takes the request's: refused before any file is read, one line, status 2."""
    proc = run_cli(argv)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and says in err, err
