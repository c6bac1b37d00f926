"""In the page, every link the simulator makes reopens to the same walk (an empty
num_ctx is written "auto"; a picked file's link asks for the file and shows nothing else
until then); the latest choice of model wins over a slow file read; the headers kept for a
restarted worker are deduplicated, capped and let go for a preset; a header of too many
tensors is one line in seconds; the runtime's files served as HTML or broken end the start
with one line naming the file; the tokenizer's vocabulary failing to load says so, stays
said and can be loaded again; select-all in a long paste does not freeze the page.

Failures and slowness are staged in the browser (routes, an init script), never in the product.
"""

from __future__ import annotations

import importlib.util
import json
import struct
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.support.browser import Page, set_form, shown_walk, status, wait_tokenizer_counts, wait_walk
from tests.support.own_runs import bench_rows

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
BOOT_MS = 120_000


def _maker():
    spec = importlib.util.spec_from_file_location("make_hostile", ROOT / "tests/fixtures/hostile/make_hostile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TINY_GGUF = _maker().gguf_bytes(_maker().model_kvs())

# A file whose name starts with "slow-" takes 2 s more to read (File.slice's arrayBuffer),
# as a large header on a slow disk does.
SLOW_FILES = """
const twSlice = Blob.prototype.slice;
Blob.prototype.slice = function (...args) {
  const part = twSlice.apply(this, args);
  if (this.name && this.name.startsWith("slow-")) part.twSlow = true;
  return part;
};
const twArrayBuffer = Blob.prototype.arrayBuffer;
Blob.prototype.arrayBuffer = function () {
  const read = twArrayBuffer.call(this);
  return this.twSlow ? read.then((v) => new Promise((done) => setTimeout(() => done(v), 2000))) : read;
};
"""


@pytest.fixture(scope="module")
def site(real_article):
    return real_article


def open_simulator(browser, url, **options) -> tuple[Page, object]:
    p = Page(browser, url, **options)
    p.page.add_init_script(SLOW_FILES)
    page = p.open()
    page.locator(".tw-simulator").scroll_into_view_if_needed()
    page.wait_for_selector(".tw-simulator[data-state=ready], .tw-simulator[data-state=file]", timeout=BOOT_MS)
    return p, page


@pytest.fixture(scope="module")
def sim(browser, site):
    p, page = open_simulator(browser, site[0])
    p.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site[0].rstrip("/"))
    yield p
    p.close()


def query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query, keep_blank_values=True).items()}


LINKS = [
    ("empty-num-ctx", {"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "2000", "num_ctx": "",
                       "output_tokens": "300"}),
    ("empty-num-ctx-long", {"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "20000",
                            "num_ctx": "", "output_tokens": "300"}),
    ("custom-empty-choices", {"machine": "custom", "bandwidth_gbs": "256", "fp16_tflops": "30", "memory_gb": "24",
                              "prompt_tokens": "2001", "num_ctx": ""}),
    ("speculative-warm", {"model": "llama3.1-70b", "machine": "h100-sxm", "spec": True, "spec_alpha": "0.8",
                          "spec_gamma": "5", "warm": True, "num_ctx": "8192", "users": "3", "prompt_tokens": "2002"}),
    # the machine timed on the reader's llama-bench runs: the link carries them
    ("own-runs", {"model": "qwen3.8-27b", "machine": "rtx-5090", "prompt_tokens": "2003", "num_ctx": "",
                  "runs": json.dumps(bench_rows(), indent=1)}),
]


@pytest.mark.parametrize("values", [v for _, v in LINKS], ids=[i for i, _ in LINKS])
def test_every_link_the_page_makes_reopens_to_the_same_walk(browser, site, sim, values):
    page = sim.page
    set_form(page, values)
    wait_walk(page, int(values["prompt_tokens"]))
    walk = shown_walk(page)
    page.click(".tw-sim-form [data-action=share]")
    page.wait_for_function("document.querySelector('.tw-simulator .tw-status').textContent.startsWith('Link')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert status(page, "simulator") == "Link copied." and copied == page.url
    if values.get("num_ctx") == "":
        assert query(copied)["num_ctx"] == "auto"
        assert walk["num_ctx"] == walk["prompt_tokens"] + walk["output_tokens"]
    if values["prompt_tokens"] == "2000":
        assert walk["num_ctx"] == 2300 and walk["kv_cache_bytes"] == 47_104_000  # the issue's 47 MB, not 336 MB

    runs = page.locator(".tw-sim-runs").inner_text() if "runs" in values else None
    if runs is not None:
        assert walk["efficiency"]["decode"]["from"] == "fitted: calibrated on your 5 llama-bench tests"
        assert len(json.loads(query(copied)["runs"])) == 5
        set_form(page, {"runs": ""})  # the next cases walk on the published fit again
        page.wait_for_function("!document.querySelector('.tw-sim-runs')")

    other, reopened = open_simulator(browser, copied)
    try:
        wait_walk(reopened, int(values["prompt_tokens"]))
        assert shown_walk(reopened) == walk
        assert query(reopened.url) == query(copied)  # and its own link is the same link
        assert reopened.locator(".tw-sim-form [name=num_ctx]").input_value() == values.get("num_ctx", "16384")
        if runs is not None:  # the same table of runs, and the box open with what the link carries
            assert reopened.locator(".tw-sim-runs").inner_text() == runs
            assert reopened.locator(".tw-runs").evaluate("d => d.open")
    finally:
        other.close()


@pytest.mark.skipif(not SMOLLM2.is_file(), reason="the SmolLM2 model file is not fetched (make setup)")
def test_a_link_to_a_files_walk_asks_for_the_file_and_shows_nothing_else(browser, site, sim):
    page = sim.page
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    page.set_input_files("#tw-sim-gguf", str(SMOLLM2))
    page.wait_for_selector(".tw-gguf-info[data-state=ok]", timeout=60_000)
    page.fill("#tw-sim-prompt_tokens", "777")
    wait_walk(page, 777)
    walk = shown_walk(page)
    assert walk["model"] == SMOLLM2.name
    link = page.url
    assert query(link)["model"] == f"file:{SMOLLM2.name}"

    other, reopened = open_simulator(browser, link)
    try:
        reopened.wait_for_selector(".tw-simulator[data-state=file]", timeout=30_000)
        message = status(reopened, "simulator")
        assert f"GGUF file {SMOLLM2.name}" in message and "pick that file" in message
        assert not reopened.locator(".tw-sim-result").is_visible()  # no other model's walk meanwhile
        assert reopened.locator(".tw-gguf").is_visible()
        reopened.set_input_files("#tw-sim-gguf", str(SMOLLM2))
        wait_walk(reopened, 777)
        assert shown_walk(reopened) == walk
        assert reopened.locator(".tw-sim-result").is_visible()
    finally:
        other.close()


def _pick(page, name: str) -> None:
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    page.evaluate("document.querySelector('.tw-gguf-info').dataset.state = ''")
    page.set_input_files("#tw-sim-gguf", {"name": name, "mimeType": "", "buffer": TINY_GGUF})


def _read(page) -> None:
    page.wait_for_selector(".tw-gguf-info[data-state=ok], .tw-gguf-info[data-state=error]", state="attached",
                           timeout=30_000)
    info = page.locator(".tw-gguf-info")
    assert info.get_attribute("data-state") == "ok", info.inner_text()


def test_a_slow_file_read_does_not_override_a_later_choice(sim):
    page = sim.page
    _pick(page, "slow-tiny.gguf")
    # while the header reads (2 s): another model, then a prompt length
    page.locator(".tw-sim-form [name=model]").select_option("llama3.1-70b")
    page.fill("#tw-sim-prompt_tokens", "4321")
    _read(page)
    page.wait_for_timeout(300)
    wait_walk(page, 4321)
    assert page.locator(".tw-sim-form [name=model]").input_value() == "llama3.1-70b"
    assert shown_walk(page)["model"] == "llama3.1-70b"
    values = page.evaluate("[...document.querySelector('.tw-sim-form [name=model]').options].map(o => o.value)")
    assert "file:slow-tiny.gguf" in values  # read, offered, not chosen


def test_a_slow_file_read_still_wins_over_typed_values(sim):
    page = sim.page
    _pick(page, "slow-typed.gguf")
    page.fill("#tw-sim-prompt_tokens", "4322")  # a typed value is no choice of model
    _read(page)
    wait_walk(page, 4322)
    assert page.locator(".tw-sim-form [name=model]").input_value() == "file:slow-typed.gguf"
    assert shown_walk(page)["model"] == "slow-typed.gguf"


def test_kept_headers_are_deduplicated_capped_and_let_go_for_a_preset(sim):
    page = sim.page
    page.locator(".tw-sim-form [name=model]").select_option("qwen3.6-35b-a3b")
    assert page.evaluate("window.twKeptGguf()") == []
    for _ in range(3):
        _pick(page, "same.gguf")
        _read(page)
    assert page.evaluate("window.twKeptGguf()") == [{"name": "same.gguf", "bytes": len(TINY_GGUF)}]
    for i in range(17):
        _pick(page, f"f{i:02}.gguf")
        _read(page)
    kept = [k["name"] for k in page.evaluate("window.twKeptGguf()")]
    assert kept == [f"f{i:02}.gguf" for i in range(1, 17)]  # the 16 newest, as Python keeps
    page.locator(".tw-sim-form [name=model]").select_option("qwen3.6-35b-a3b")
    assert page.evaluate("window.twKeptGguf()") == []
    page.fill("#tw-sim-prompt_tokens", "4323")
    wait_walk(page, 4323)
    assert shown_walk(page)["model"] == "qwen3.6-35b-a3b"


def test_a_header_of_two_million_tensors_is_one_line_in_seconds(sim, tmp_path):
    page = sim.page
    path = tmp_path / "tiny-tensors.gguf"
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 1_900_000, 0))
        f.truncate(75_000_000)  # sparse: the table would fit, under the byte and item caps
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    page.evaluate("document.querySelector('.tw-gguf-info').dataset.state = ''")
    start = time.monotonic()
    page.set_input_files("#tw-sim-gguf", str(path))
    page.wait_for_selector(".tw-gguf-info[data-state=error]", timeout=30_000)
    assert time.monotonic() - start < 10
    text = page.locator(".tw-gguf-info").inner_text()
    assert text.startswith("Not a GGUF model this page can read:") and "\n" not in text.strip()
    assert "1,900,000 tensors, more than the 65,536 this reader takes" in text


HTML_PAGE = b"<!doctype html><html><head><title>App</title></head><body><div id=app></div></body></html>"


@pytest.mark.parametrize("pattern, body, content_type, says", [
    ("**/pyodide.asm.wasm", HTML_PAGE, "text/html; charset=utf-8", "pyodide.asm.wasm was served as HTML"),
    ("**/pyodide.asm.wasm", b"\0asm\x01\0\0\0" + b"\xff" * 200, "application/wasm",
     "pyodide.asm.wasm is not valid WebAssembly"),
    ("**/python_stdlib.zip", HTML_PAGE, "application/octet-stream", "python_stdlib.zip was served as HTML"),
    ("**/tokenwalk-*.whl", HTML_PAGE, "text/html", ".whl was served as HTML"),
], ids=["wasm-html", "wasm-corrupt", "stdlib-html-as-binary", "wheel-html"])
def test_a_runtime_file_served_as_html_or_broken_is_one_line_naming_it(browser, site, pattern, body,
                                                                        content_type, says):
    p = Page(browser, site[0])
    p.context.route(pattern, lambda route: route.fulfill(status=200, body=body, headers={"content-type": content_type}))
    page = p.open()
    try:
        start = time.monotonic()
        page.evaluate("document.querySelector('.tw-tokenizer .tw-start').click()")
        page.wait_for_function("document.querySelector('.tw-tokenizer').dataset.python === 'failed'", timeout=60_000)
        seconds = time.monotonic() - start
        message = status(page, "tokenizer")
        assert says in message, message
        assert message.startswith("The interactive version could not start:") and "\n" not in message
        assert "did not start within" not in message and "exit(1)" not in message and "File \"" not in message
        assert seconds < 30, seconds  # not the boot's 120 s limit
        p.context.unroute(pattern)
        page.locator(".tw-tokenizer .tw-start").click()
        page.wait_for_selector(".tw-tokenizer[data-state=ready]", timeout=BOOT_MS)
    finally:
        p.close()


def test_a_vocabulary_that_does_not_load_says_so_stays_said_and_loads_again(browser, site):
    p = Page(browser, site[0])
    p.context.route("**/*vocab*.json", lambda route: route.fulfill(status=404, body="gone"))
    page = p.open()
    try:
        fig = page.locator(".tw-tokenizer")
        fig.scroll_into_view_if_needed()
        page.wait_for_selector(".tw-tokenizer[data-vocab-state=error]", timeout=BOOT_MS)
        message = status(page, "tokenizer")
        assert "vocabulary (" in message and "could not be downloaded: the site answered HTTP 404" in message
        assert "http://" not in message and "\n" not in message
        assert fig.locator("[data-counter=smollm2-tokens]").inner_text() == "not loaded"
        wait_tokenizer_counts(page, "A key after the failure.")
        assert status(page, "tokenizer") == message  # the next key does not wipe it
        p.context.unroute("**/*vocab*.json")
        fig.locator(".tw-retry").click()
        page.wait_for_selector(".tw-tokenizer[data-vocab-state=ready]", timeout=60_000)
        page.wait_for_function("/^[0-9,]+$/.test(document.querySelector('[data-counter=smollm2-tokens]').textContent)")
        assert status(page, "tokenizer") == "" and not fig.locator(".tw-retry").is_visible()
    finally:
        p.close()


def test_select_all_and_backspace_in_a_long_paste_take_no_time(sim):
    page = sim.page
    page.locator(".tw-tokenizer").scroll_into_view_if_needed()
    page.wait_for_selector(".tw-tokenizer[data-state=ready]", timeout=BOOT_MS)
    text = "\n".join(f"line {i} of the patient history" for i in range(20_000))
    page.evaluate("(t) => { const i = document.querySelector('#tw-tok-input'); i.value = t; "
                  "i.dispatchEvent(new Event('input')); }", text)
    page.wait_for_function("document.querySelector('.tw-tokenizer').dataset.busy === '0'", timeout=60_000)
    page.focus("#tw-tok-input")
    start = time.monotonic()
    page.keyboard.press("Control+a")
    selected = page.evaluate("(() => { const i = document.querySelector('#tw-tok-input'); "
                             "return [i.selectionStart, i.selectionEnd]; })()")
    select_s = time.monotonic() - start
    assert selected == [0, len(text)]
    assert select_s < 1.5, select_s  # 48 s before: Chromium's keyboard select-all on this page
    start = time.monotonic()
    page.keyboard.press("Backspace")
    assert page.evaluate("document.querySelector('#tw-tok-input').value") == ""
    assert time.monotonic() - start < 1.5
    wait_tokenizer_counts(page, "Short again.")
