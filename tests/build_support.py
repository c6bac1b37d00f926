"""Helpers for the build and browser tests: run build.py as a person would."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
