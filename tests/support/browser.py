"""What the browser tests share: the project's server, a page that lays out every chapter
and watches the console, a worker that can be made to hang or crash, form helpers."""

from __future__ import annotations

import json
import re
from pathlib import Path

from publish.serve import serve_site
from tests.support.paths import ROOT

SCREENSHOTS = ROOT / "tests" / "screenshots"


# Every chapter but the first is laid out only near the screen (content-visibility: auto),
# so text far below has no layout: innerText is empty and nothing there "is visible" to
# playwright until scrolled to. Tests of what figures do lay out every chapter first;
# test_browser_fast.py checks the page as it ships.
EVERY_CHAPTER = ".chapter.is-lazy { content-visibility: visible !important; }"


def lay_out_every_chapter(page) -> None:
    # a <style> appended by evaluate (add_style_tag waits for a load event that never
    # comes on a page with JavaScript off)
    page.evaluate("(css) => { const s = document.createElement('style'); s.textContent = css; document.head.append(s); }",
                  EVERY_CHAPTER)


def load_settled(page, url: str | None = None) -> None:
    """Open ``url`` (None: reload) until the load event, then until the network is idle.
    The load event first: playwright's "networkidle" counts requests only, and on a busy
    machine it came while the parser was still in the article's later chapters."""
    if url is None:
        page.reload(wait_until="load")
    else:
        page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")


def serve(site: Path):
    """The site behind the project's own server (publish/serve.py): precompressed files
    and cache headers, as a host sends them."""
    return serve_site(site)


class Watched:
    """A page with every console error, page error, failed request and request URL."""

    def __init__(self, browser, url, **context_options):
        self.context = browser.new_context(**context_options)
        self.page = self.context.new_page()
        self.errors, self.failed, self.urls = [], [], []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.urls.append(r.url))
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.url} ({r.status})"))
        load_settled(self.page, url)
        lay_out_every_chapter(self.page)

    def close(self):
        self.context.close()


BOOT_MS = 120_000
CALL_MS = 5_000
# Appended to worker.mjs for the tests only: a simulator call with these prompt tokens hangs
# (after telling the page it began), throws an uncaught error, or closes the worker silently.
WORKER_PATCH = """
const twRealOnMessage = self.onmessage;
self.onmessage = (event) => {
  const msg = event.data || {};
  const mark = msg.fn === "simulate_view" && msg.args && msg.args[0] && msg.args[0].prompt_tokens;
  if (mark === "424242") { self.postMessage({ type: "begin", id: msg.id }); for (;;) {} }
  if (mark === "424243") {
    self.postMessage({ type: "begin", id: msg.id });
    throw new Error("a crash staged by the test");
  }
  if (mark === "424244") { self.close(); return; }
  return twRealOnMessage(event);
};
"""


class Page:
    def __init__(self, browser, url, limits=None, patch_worker=False, viewport=None):
        self.context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900})
        self.urls, self.errors = [], []
        if limits:
            self.context.add_init_script(f"window.twPythonLimits = {json.dumps(limits)};")
        if patch_worker:
            def patched(route):
                response = route.fetch()
                route.fulfill(response=response, body=response.text() + WORKER_PATCH)
            self.context.route(re.compile(r".*/static/interactive\.[0-9a-f]+/worker\.mjs$"), patched)
        self.url = url
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.urls.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self):
        self.page.goto(self.url, wait_until="domcontentloaded")
        lay_out_every_chapter(self.page)
        return self.page

    def close(self):
        self.context.close()


def status(page, figure: str) -> str:
    return page.locator(f".tw-{figure} .tw-status").first.inner_text()


def wait_tokenizer_counts(page, text: str, timeout=60_000):
    page.fill("#tw-tok-input", text)
    page.wait_for_function(
        f"document.querySelector('.tw-counters [data-counter=characters]').textContent === '{len(text)}'",
        timeout=timeout)


def wait_walk(page, prompt_tokens: int, timeout=60_000):
    page.wait_for_function(
        "(n) => { const r = document.querySelector('.tw-sim-result'); return r.dataset.walk "
        "&& JSON.parse(r.dataset.walk).prompt_tokens === n && !r.classList.contains('is-stale'); }",
        arg=prompt_tokens, timeout=timeout)


def set_form(page, values: dict) -> None:
    for name, value in values.items():
        field = page.locator(f".tw-sim-form [name={name}]")
        field.evaluate("e => { const d = e.closest('details'); if (d) d.open = true; }")  # the runs' box
        if isinstance(value, bool):
            field.set_checked(value)
        elif field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)


def shown_walk(page) -> dict:
    page.wait_for_function("document.querySelector('.tw-simulator').dataset.busy === '0'")
    return json.loads(page.locator(".tw-sim-result").get_attribute("data-walk"))
