"""Interactive figures benchmark: the built article in headless Chromium on localhost.

    python -m benchmarks.interactive_bench [--site DIR] [--updates N] [--runs N]

1. bytes transferred before any interaction (the page opened, not scrolled): every
   request the page made, by kind; Pyodide and the core wheel must not be among them;
2. time from the first click (the tokenizer's Start button) to a ready interactive
   figure (Python booted in the worker, the default sentence cut), in a fresh browser
   each run (no cache), with the worker's own boot time;
3. time per simulator update: a changed prompt length until the new walk is on screen
   (median and worst of N), measured in the page.

Targets (issue 6): under 3 s to a ready figure, under 50 ms per update. It builds the
article into a temporary folder (the project's figure cache makes that quick) unless
--site names a built one.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".wasm": "application/wasm", ".svg": "image/svg+xml"}

    def log_message(self, *args):
        pass


def serve(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def kind(path: str) -> str:
    if "/pyodide/" in path:
        return "Pyodide"
    if path.endswith(".whl"):
        return "core wheel"
    if "/static/interactive/" in path:
        return "interactive JS/CSS"
    if "/figures/" in path:
        return "figures"
    return path.rsplit(".", 1)[-1].split("?")[0] if "." in path.rsplit("/", 1)[-1] else "HTML"


def bytes_before_interaction(browser, url: str) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sizes: dict[str, int] = {}

    def on_finished(request):
        try:
            size = request.sizes()["responseBodySize"] + request.sizes()["responseHeadersSize"]
        except Exception:  # a request without sizes (data: URLs)
            return
        k = kind(urlparse(request.url).path)
        sizes[k] = sizes.get(k, 0) + size

    page.on("requestfinished", on_finished)
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(500)
    context.close()
    return sizes


def first_click_to_ready(browser, url: str) -> tuple[float, float]:
    """(seconds from the click to the ready tokenizer, the worker's boot seconds)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    start = time.perf_counter()
    page.evaluate("document.querySelector('.tw-tokenizer .tw-start').click()")
    page.wait_for_selector(".tw-tokenizer[data-state=ready]", timeout=180_000)
    seconds = time.perf_counter() - start
    page.locator(".tw-simulator").scroll_into_view_if_needed()
    page.wait_for_selector(".tw-simulator[data-state=ready]", timeout=180_000)
    boot = page.evaluate("window.performance.now()")  # keeps the page alive until here
    del boot
    return seconds, page, context


def simulator_updates(page, n: int) -> list[float]:
    times = []
    for k in range(n):
        prompt = 1000 + 137 * k
        page.fill("#tw-sim-prompt_tokens", str(prompt))
        page.wait_for_function(f"(() => {{ const r = document.querySelector('.tw-sim-result');"
                               f" return r.dataset.walk && JSON.parse(r.dataset.walk).prompt_tokens === {prompt}"
                               f" && document.querySelector('.tw-simulator').dataset.busy === '0'; }})()")
        times.append(float(page.locator(".tw-sim-result").get_attribute("data-ms")) / 1e3)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build the article into a temporary folder)")
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2, help="fresh browsers for the click-to-ready time")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            done = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(site)], cwd=ROOT,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
        server = serve(site)
        url = f"http://127.0.0.1:{server.server_port}/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            sizes = bytes_before_interaction(browser, url)
            total = sum(sizes.values())
            print(f"before any interaction: {total / 1e3:,.0f} KB transferred")
            for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]):
                print(f"  {k:<20} {v / 1e3:>9,.1f} KB")
            heavy = [k for k in sizes if k in ("Pyodide", "core wheel")]
            print("  Pyodide and the core wheel: " + ("LOADED (wrong)" if heavy else "not loaded"))
            clicks, page, context = [], None, None
            for _ in range(args.runs):
                if context is not None:
                    context.close()
                seconds, page, context = first_click_to_ready(browser, url)
                clicks.append(seconds)
            print(f"first click to a ready interactive figure: {min(clicks):.2f} s best, "
                  f"{statistics.median(clicks):.2f} s median of {len(clicks)} (target < 3 s)")
            updates = simulator_updates(page, args.updates)
            print(f"simulator update: {1e3 * statistics.median(updates):.0f} ms median, "
                  f"{1e3 * max(updates):.0f} ms worst of {len(updates)} (target < 50 ms)")
            context.close()
            browser.close()
        server.shutdown()
    return 1 if heavy else 0


if __name__ == "__main__":
    sys.exit(main())
