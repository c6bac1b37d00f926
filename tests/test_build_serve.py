"""`build.py --serve`: serves the site on localhost, rebuilds when a chapter changes and
tells the page to reload (server-sent events); a broken edit keeps the old site served."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from build_support import ROOT, copy_fixture


@pytest.fixture
def served(tmp_path):
    src = copy_fixture(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-u", str(ROOT / "build.py"), "--serve", "--port", "0",
         "--content", str(src / "content"), "--figures", str(src / "figures"),
         "--numbers", str(src / "numbers.json"), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

    def wait_for(pattern, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            match = re.search(pattern, line)
            if match:
                return match
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s")

    url = wait_for(r"at (http://127\.0\.0\.1:\d+/)").group(1)
    yield src, url, wait_for
    process.terminate()
    process.wait(timeout=10)


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_serve_rebuilds_on_change_and_signals_reload(served):
    src, url, wait_for = served
    page = get(url)
    assert 'new EventSource("/__reload")' in page  # live reload only in serve mode
    events: queue.Queue = queue.Queue()

    def listen():
        with urllib.request.urlopen(url + "__reload", timeout=60) as stream:
            for raw in stream:
                events.put(raw.decode().strip())

    threading.Thread(target=listen, daemon=True).start()
    time.sleep(0.5)  # the stream is open before the edit
    chapter = src / "content" / "02-more.md"
    chapter.write_text(chapter.read_text() + "\nA live edit appears.\n")
    wait_for(r"built .* in ")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "event: reload" not in list(events.queue):
        time.sleep(0.1)
    assert "event: reload" in list(events.queue)
    assert "A live edit appears." in get(url)

    chapter.write_text(chapter.read_text() + "\n{{ n.no_such_number }}\n")
    assert "02-more.md" in wait_for(r"build failed: (.*)").group(1)
    assert "A live edit appears." in get(url), "the previous site is still served"
