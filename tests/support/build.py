"""Helpers for the build and browser tests: run build.py as a person would."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "site"


def run_build(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    """`python build.py ARGS`; returns the finished process (text output)."""
    return subprocess.run([sys.executable, str(ROOT / "build.py"), *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def copy_fixture(tmp: Path) -> Path:
    """A writable copy of the fixture article (content/, figures/, numbers.json)."""
    dst = tmp / "fixture"
    shutil.copytree(FIXTURE, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def build_fixture(src: Path, out: Path, cache: Path, *extra) -> subprocess.CompletedProcess:
    return run_build("--content", src / "content", "--figures", src / "figures",
                     "--numbers", src / "numbers.json", "--out", out, "--cache", cache, *extra)


def assert_failed_cleanly(result, out, snapshot, expected_start):
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("build failed: " + expected_start), lines[0]
    assert "Traceback" not in result.stderr
    now = {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
           if p.is_file() and p.parts[-3:-1] != ("pyodide",)}
    assert now == snapshot, "the previous site must stay exactly as it was"
    assert not list(out.parent.glob(f".{out.name}-*")), "no temporary folder left behind"
