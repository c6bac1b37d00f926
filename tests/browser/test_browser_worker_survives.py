"""The page's Python worker survives what can go wrong (hostile input on the page's side, and
the page's JavaScript): every call has a time limit, a wedged or crashed worker is
restarted and the other figures keep working, loading failures show a message and a retry
that works, the no-JS note stays when client.js fails, a long paste does not overflow the
stack, out-of-order replies never overwrite a newer result, and every URL the page loads
carries its content hash.

Failures are staged in the browser, never in the product: routes answer 404 or stall, and
a test-only copy of worker.mjs (served by route) hangs, throws or closes on marked inputs.
Short time limits come from window.twPythonLimits (an init script)."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import BOOT_MS, CALL_MS, Page, status, wait_tokenizer_counts, wait_walk

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(real_article):
    """The real article as conftest builds it once for all browser tests."""
    return real_article


@pytest.fixture(scope="module")
def staged(browser, site):
    """One page with the test worker and 5 s calls, Python started from the simulator."""
    p = Page(browser, site[0], limits={"call": CALL_MS}, patch_worker=True)
    page = p.open()
    page.locator(".tw-simulator").scroll_into_view_if_needed()
    page.wait_for_selector(".tw-simulator[data-state=ready]", timeout=BOOT_MS)
    yield p
    p.close()


def test_a_call_past_its_time_limit_restarts_python_and_the_other_figures_work(staged):
    page = staged.page
    page.fill("#tw-sim-prompt_tokens", "424242")
    page.wait_for_function("document.querySelector('.tw-simulator').dataset.state === 'error'",
                           timeout=CALL_MS + 30_000)
    message = status(page, "simulator")
    assert "took longer than 5 s" in message and "\n" not in message
    # another figure, on the fresh worker
    page.locator(".tw-tokenizer").scroll_into_view_if_needed()
    wait_tokenizer_counts(page, "After the restart.")
    # and the simulator itself, at its next change
    page.fill("#tw-sim-prompt_tokens", "300")
    wait_walk(page, 300)
    assert status(page, "simulator") == ""


def test_a_call_queued_behind_a_wedged_one_runs_again_by_itself(staged):
    page = staged.page
    page.fill("#tw-sim-prompt_tokens", "424242")
    page.fill("#tw-tok-input", "Queued behind the hang.")  # waits in the worker behind the hang
    wait_tokenizer_counts(page, "Queued behind the hang.", timeout=CALL_MS + 60_000)
    assert status(page, "tokenizer") == ""
    page.fill("#tw-sim-prompt_tokens", "301")
    wait_walk(page, 301)


@pytest.mark.parametrize("mark", ["424243", "424244"], ids=["throws", "closes"])
def test_a_crashed_worker_rejects_its_calls_and_the_figure_recovers(staged, mark):
    page = staged.page
    page.fill("#tw-sim-prompt_tokens", mark)
    page.wait_for_function("document.querySelector('.tw-simulator').dataset.state === 'error'",
                           timeout=2 * CALL_MS + 30_000)
    message = status(page, "simulator")
    assert message and "\n" not in message and "Traceback" not in message
    page.fill("#tw-sim-prompt_tokens", "302")
    wait_walk(page, 302)
    wait_tokenizer_counts(page, f"After {mark}.")


def test_settings_are_checked_in_python_and_the_message_is_one_line(staged):
    page = staged.page
    page.fill("#tw-sim-prompt_tokens", "1.5")
    page.wait_for_function("document.querySelector('.tw-simulator').dataset.state === 'error'")
    assert status(page, "simulator") == "prompt tokens: a whole number is needed, not 1.5"
    page.fill("#tw-sim-prompt_tokens", "2e3")  # a whole number, however it is written
    wait_walk(page, 2000)
    assert "prompt_tokens=2000" in page.url


def test_every_url_the_page_loaded_carries_its_content_hash(staged, site):
    """After Python started: every module, the worker, Pyodide's files and the wheel came
    from a versioned URL (publish/optimize.py), none from a plain one."""
    base = staged.url
    loaded = [u[len(base):].split("?")[0] for u in staged.urls if u.startswith(base) and u != base]
    versioned = re.compile(r"\.[0-9a-f]{10}(/|\.[^/]+$)")
    assert [u for u in loaded if not versioned.search(u)] == [], "a URL without its content hash"
    names = {u.rsplit("/", 1)[1] for u in loaded}
    assert names >= {"client.js", "python.js", "latest.js", "tokenizer.js", "quantizer.js", "simulator.js", "dom.js",
                     "worker.mjs", "pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip"}
    for u in loaded:  # and each is in the site under that name
        assert (site[1] / u).is_file(), u


def test_out_of_order_replies_never_overwrite_a_newer_result(staged):
    out = staged.page.evaluate("""async () => {
        const { latestWins } = await import(new URL("latest.js", document.querySelector("script[type=module]").src));
        const tick = () => new Promise((r) => setTimeout(r, 0));
        const shown = [], failed = [], replies = [];
        let runs = 0;
        const request = latestWins(() => { const k = ++runs; return new Promise((ok) => replies.push(() => ok(k))); },
                                   { show: (v) => shown.push(v), fail: (e) => failed.push(String(e)) });
        const first = request();   // run 1 starts
        request(); request();      // two more requests while it runs: one more run, after it
        replies[0]();              // run 1 replies: stale, a newer request came
        await tick();
        replies[1]();              // run 2: the newest inputs
        await first;
        // a run rejected for another figure's sake (error.retry) runs once more by itself
        let tries = 0;
        const retried = latestWins(async () => {
            if (++tries === 1) { const e = new Error("restarted"); e.retry = true; throw e; }
            return "second try";
        }, { show: (v) => shown.push(v), fail: (e) => failed.push(String(e)) });
        await retried();
        return { shown, failed, runs, tries };
    }""")
    assert out == {"shown": [2, "second try"], "failed": [], "runs": 2, "tries": 2}


def test_a_paste_of_200000_pieces_draws_in_batches_without_overflowing(staged):
    out = staged.page.evaluate("""async () => {
        const { chips } = await import(new URL("tokenizer.js", document.querySelector("script[type=module]").src));
        const box = document.createElement("div");
        document.body.append(box);
        // the worker sends the note on the chips not drawn already formatted (entry.tokenize_toy's more_text)
        chips(box, Array.from({ length: 200000 }, (_, i) => i % 2 ? " " : "a"), "… and 180,000 more tokens (not drawn)");
        const more = () => box.querySelector(".tw-chips-more");
        for (let i = 0; i < 40 && !more(); i++) await new Promise(requestAnimationFrame);
        const out = { chips: box.querySelectorAll(".tw-chip").length, more: more()?.textContent };
        chips(box, ["only", "this"]);  // a newer text replaces it, and stops any batch still to come
        await new Promise(requestAnimationFrame);
        out.after = box.querySelectorAll(".tw-chip").length;
        box.remove();
        return out;
    }""")
    assert out == {"chips": 20000, "more": "… and 180,000 more tokens (not drawn)", "after": 2}


def test_no_traceback_or_uncaught_error_reached_the_page(staged):
    assert staged.errors == []
    texts = staged.page.locator(".tw-interactive").all_inner_texts()
    assert not any("Traceback" in t for t in texts)


def test_a_stalled_or_missing_runtime_shows_a_message_and_the_retry_works(browser, site):
    p = Page(browser, site[0], limits={"boot": 4_000})
    stalled = []
    p.context.route("**/pyodide.asm.wasm", lambda route: stalled.append(route))  # never answered
    page = p.open()
    try:
        page.evaluate("document.querySelector('.tw-tokenizer .tw-start').click()")
        page.wait_for_function("document.querySelector('.tw-tokenizer').dataset.python === 'failed'", timeout=30_000)
        assert "did not start within 4 s" in status(page, "tokenizer")
        button = page.locator(".tw-tokenizer .tw-start")
        assert button.is_visible() and button.inner_text() == "Try again"

        p.context.unroute("**/pyodide.asm.wasm")
        p.context.route("**/pyodide.asm.wasm", lambda route: route.fulfill(status=404, body="gone"))
        button.click()
        page.wait_for_function("document.querySelector('.tw-tokenizer').dataset.python === 'failed'", timeout=30_000)
        message = status(page, "tokenizer")
        assert "pyodide.asm.wasm could not be downloaded (HTTP 404)" in message, message

        p.context.unroute("**/pyodide.asm.wasm")
        page.evaluate("window.twPythonLimits = undefined")  # the usual limits again
        button.click()
        page.wait_for_selector(".tw-tokenizer[data-state=ready]", timeout=BOOT_MS)
        wait_tokenizer_counts(page, "Started after all.")
        assert "could not start" not in status(page, "tokenizer")
        assert page.locator(".tw-quantization").get_attribute("data-python") in ("loading", "ready")
    finally:
        p.close()


def test_a_wheel_that_does_not_load_is_one_line_and_retry_works(browser, site):
    p = Page(browser, site[0])
    p.context.route("**/tokenwalk-*.whl", lambda route: route.fulfill(status=200, body=b"not a zip"))
    page = p.open()
    try:
        page.evaluate("document.querySelector('.tw-tokenizer .tw-start').click()")
        page.wait_for_function("document.querySelector('.tw-tokenizer').dataset.python === 'failed'", timeout=BOOT_MS)
        message = status(page, "tokenizer")
        assert message.startswith("The interactive version could not start:") and "\n" not in message
        assert "Traceback" not in message
        p.context.unroute("**/tokenwalk-*.whl")
        page.locator(".tw-tokenizer .tw-start").click()
        page.wait_for_selector(".tw-tokenizer[data-state=ready]", timeout=BOOT_MS)
    finally:
        p.close()


def test_when_client_js_fails_the_no_js_notes_stay(browser, site):
    p = Page(browser, site[0], viewport={"width": 390, "height": 900})
    p.context.route(re.compile(r".*/static/interactive\.[0-9a-f]+/client\.js$"), lambda route: route.fulfill(status=404))
    page = p.open()
    try:
        page.wait_for_load_state("networkidle")
        for name in ("tokenizer", "quantization", "simulator"):
            note = page.locator(f".tw-{name} .tw-nojs").first
            assert note.is_visible() and "needs JavaScript" in note.inner_text(), name
        assert page.locator(".tw-sim-form").is_hidden(), "a form that does nothing is not shown"
    finally:
        p.close()
