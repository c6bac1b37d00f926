"""`build.py --serve`: serves the site on localhost, rebuilds when a chapter changes and
tells the page to reload (server-sent events); a broken edit keeps the old site served;
an edit to the build's own code (a markdown rule) rebuilds with the new code."""

from __future__ import annotations

import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.build import ROOT


def start_serving(project: Path, src: Path, tmp_path: Path):
    """`project/build.py --serve` on the fixture article; (url, wait_for, process)."""
    process = subprocess.Popen(
        [sys.executable, "-u", str(project / "build.py"), "--serve", "--port", "0",
         "--content", str(src / "content"), "--figures", str(src / "figures"),
         "--numbers", str(src / "numbers.json"), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=project)
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

    try:
        url = wait_for(r"at (http://127\.0\.0\.1:\d+/)").group(1)
    except AssertionError:
        process.kill()
        raise
    return url, wait_for, process


@pytest.fixture
def served(tmp_path, fixture_site):
    url, wait_for, process = start_serving(ROOT, fixture_site, tmp_path)
    yield fixture_site, url, wait_for
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


def test_serve_rebuilds_with_the_edited_build_code(tmp_path, fixture_site):
    """A copy of the project's build (build.py, publish/; tokenwalk, article, content and figures linked for
    the wheel, the page template and the static files):
    an edit to a markdown rule under publish/ shows in the next build."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "build.py", project)
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copytree(ROOT / "publish", project / "publish", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tokenwalk", "article", "content", "figures"):
        (project / name).symlink_to(ROOT / name, target_is_directory=True)
    url, wait_for, process = start_serving(project, fixture_site, tmp_path)
    try:
        assert 'class="table-wrap"' in get(url)
        time.sleep(0.5)  # the watcher is running before the edit
        rule = project / "publish" / "markdown" / "tables.py"
        rule.write_text(rule.read_text().replace('class="table-wrap"', 'class="table-wrap edited-rule"'))
        wait_for(r"built .* in ")
        assert 'class="table-wrap edited-rule"' in get(url)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_reader_who_goes_away_mid_download_leaves_no_traceback(tmp_path, capfd):
    """A closed tab or a stopped page hangs up while a file is being sent: the server says
    nothing (the socketserver's default prints a traceback for every such request) and goes on
    serving."""
    import socket

    from publish.serve import serve_site

    site = tmp_path / "site"
    site.mkdir()
    (site / "big.bin").write_bytes(b"\0" * (64 << 20))  # more than the socket buffers take at once
    (site / "index.html").write_text("<p>still here</p>")
    server = serve_site(site)
    try:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", server.server_port)) as client:
                client.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
                assert client.recv(1024).startswith(b"HTTP/1.0 200")
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # a reset, not a goodbye
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/index.html", timeout=10) as reply:
            assert reply.read() == b"<p>still here</p>"
        time.sleep(0.5)  # the handler threads meet the closed sockets
    finally:
        server.shutdown()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
