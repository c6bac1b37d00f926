"""Hostile input in the page: crafted links (absurd sizes, bad numbers) and crafted GGUF files in the picker
each end with one message (or a result) within seconds, no traceback reaches the page, and
the three live figures (tokenizer, quantizer, simulator) still work afterwards. An
uploaded file is named by the reader's file name and never replaces a preset.

The GGUF files are written at test time (tests/fixtures/hostile/make_hostile.py)."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from tests.support.browser import Page, set_form, status, wait_tokenizer_counts, wait_walk
from tests.support.own_runs import README_EXAMPLE, bench_rows

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
BOOT_MS = 120_000
ANSWER_S = 10  # a crafted input's message or result, once Python runs
QWEN_BYTES = 21_718_480_960


def _maker():
    spec = importlib.util.spec_from_file_location("make_hostile", ROOT / "tests/fixtures/hostile/make_hostile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_hostile = _maker()


@pytest.fixture(scope="module")
def site(real_article):
    """The real article as conftest builds it once for all browser tests."""
    return real_article[0]


def _settled(page, timeout=BOOT_MS):
    page.wait_for_function("['ready', 'error'].includes(document.querySelector('.tw-simulator').dataset.state) "
                           "&& document.querySelector('.tw-simulator').dataset.busy === '0'", timeout=timeout)


def three_figures_work(page, tag: str) -> None:
    """The tokenizer counts a new text, the quantizer redraws at 4 bits, the simulator walks."""
    page.locator(".tw-tokenizer").scroll_into_view_if_needed()
    wait_tokenizer_counts(page, f"Still cutting text after {tag}.")
    fig = page.locator(".tw-quantization")
    fig.scroll_into_view_if_needed()
    page.wait_for_selector(".tw-quantization[data-state=ready]", timeout=BOOT_MS)
    bits = "2" if fig.get_attribute("data-bits-per-weight-live") == "4.5" else "4"
    fig.locator(f"input[name=tw-quant-bits][value='{bits}']").check()
    page.wait_for_function(f"document.querySelector('.tw-quantization').dataset.bitsPerWeightLive === "
                           f"'{int(bits) + 0.5}'", timeout=30_000)
    page.locator(".tw-simulator").scroll_into_view_if_needed()
    page.locator(".tw-sim-form [name=model]").select_option("qwen3.6-35b-a3b")
    page.locator(".tw-sim-form [name=machine]").select_option("laptop-860m")
    page.fill("#tw-sim-prompt_tokens", "321")
    page.fill("#tw-sim-chunk_tokens", "512")
    wait_walk(page, 321, timeout=30_000)
    assert status(page, "simulator") == ""


# Crafted links (and a custom machine at the edges of float): (query, outcome, check)
LINKS = [
    ({"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "300000000", "chunk_tokens": "1",
      "num_ctx": ""}, "result", 300_000_000),
    ({"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "1e20", "num_ctx": ""}, "error",
     "prompt tokens must be a whole number from 1 to 1,000,000,000"),
    # as such a link gives it, the form's num_ctx (16,384) stays: refused at once, not walked for 18 s
    ({"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "100000000", "chunk_tokens": "1"},
     "error", "request: num_ctx 16384 is smaller than prompt_tokens + output_tokens"),
    ({"model": "qwen3.6-35b-a3b", "machine": "laptop-860m", "prompt_tokens": "100000000", "chunk_tokens": "1",
      "num_ctx": ""}, "result", 100_000_000),
    ({"model": "qwen3.6-35b-a3b", "machine": "custom", "bandwidth_gbs": "1e308", "fp16_tflops": "1e308",
      "memory_gb": "64", "prompt_tokens": "500"}, "error", "bandwidth (GB/s) must be a number from 0.001"),
    ({"model": "qwen3.6-35b-a3b", "machine": "custom", "bandwidth_gbs": "128", "fp16_tflops": "5e-324",
      "memory_gb": "64", "prompt_tokens": "500"}, "error", "FP16 TFLOPS must be a number from"),
    ({"model": "<img src=x onerror=alert(1)>", "machine": "laptop-860m", "prompt_tokens": "9" * 300}, "error",
     "prompt tokens must be a whole number"),
]


@pytest.mark.parametrize("query, outcome, expect", LINKS, ids=["3e8-chunks-of-1", "1e20", "1e8-chunks-of-1", "1e8-num-ctx",
                                                               "custom-1e308", "custom-5e-324", "300-digits"])
def test_a_crafted_link_ends_with_one_message_or_a_result(browser, site, query, outcome, expect):  # noqa: F811
    p = Page(browser, site + "?" + urlencode(query))
    page = p.open()
    try:
        page.locator(".tw-simulator").scroll_into_view_if_needed()
        _settled(page)
        # the same settings again, timed now that Python runs
        start = time.monotonic()
        page.evaluate("document.querySelector('.tw-sim-form').dispatchEvent(new Event('input'))")
        page.wait_for_timeout(50)
        _settled(page, timeout=ANSWER_S * 1000)
        assert time.monotonic() - start < ANSWER_S
        state = page.locator(".tw-simulator").get_attribute("data-state")
        message = status(page, "simulator")
        if outcome == "result":
            assert state == "ready", message
            walk = json.loads(page.locator(".tw-sim-result").get_attribute("data-walk"))
            assert walk["prompt_tokens"] == expect and walk["chunk_tokens"] == 1
        else:
            assert state == "error" and message.startswith(expect), message
            assert "\n" not in message and "Traceback" not in message
        three_figures_work(page, "a crafted link")
        assert p.errors == []
        assert not any("Traceback" in t for t in page.locator(".tw-interactive").all_inner_texts())
    finally:
        p.close()


def _gguf(kvs, **kwargs) -> bytes:
    return make_hostile.gguf_bytes(kvs, **kwargs)


def _named(name) -> list:
    return make_hostile.model_kvs(**{"general.name": name})


FILES = [  # (file name, bytes or a make_hostile case, "ok" or "error")
    ("layers-1e12.gguf", "layers-1e12", "error"),
    ("layers-2e40.gguf", "layers-2e40", "error"),
    ("zero-tensors.gguf", "zero-tensors", "error"),
    ("block-count-nan.gguf", "block-count-nan", "error"),
    ("width-1e12.gguf", "width-1e12", "error"),
    ("empty-strings-12m.gguf", "empty-strings-12m", "error"),
    ("keys-10m.gguf", "keys-10m", "error"),
    ("notes.gguf", b"Patient notes, not a model.\n" * 20, "error"),
    ("\u202eevil\x1b[2J name.gguf", "name-escapes", "ok"),
    ("  padded   ", (make_hostile.STR, "tiny"), "ok"),
    ("gguf", (make_hostile.STR, "gguf"), "ok"),
    ("7", (make_hostile.U32, 7), "ok"),
    ("qwen3.6-35b-a3b", (make_hostile.STR, "qwen3.6-35b-a3b"), "ok"),
]


@pytest.fixture(scope="module")
def picker(browser, site, tmp_path_factory):  # noqa: F811
    """One page, Python running, and the hostile files written."""
    folder = tmp_path_factory.mktemp("hostile-files")
    make_hostile.write_cases(folder)
    p = Page(browser, site)
    page = p.open()
    page.locator(".tw-simulator").scroll_into_view_if_needed()
    page.wait_for_selector(".tw-simulator[data-state=ready]", timeout=BOOT_MS)
    yield p, folder
    p.close()


def _pick(page, folder: Path, name: str, content) -> tuple[str, str, float]:
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    page.evaluate("document.querySelector('.tw-gguf-info').dataset.state = ''")
    if isinstance(content, str):
        data = (folder / f"{content}.gguf").read_bytes() if content not in ("empty-strings-12m", "keys-10m") else None
        files = str(folder / f"{content}.gguf") if data is None else {"name": name, "mimeType": "", "buffer": data}
    elif isinstance(content, tuple):
        files = {"name": name, "mimeType": "", "buffer": _gguf(_named(content))}
    else:
        files = {"name": name, "mimeType": "", "buffer": content}
    start = time.monotonic()
    page.set_input_files("#tw-sim-gguf", files)
    page.wait_for_selector(".tw-gguf-info[data-state=ok], .tw-gguf-info[data-state=error]", timeout=30_000)
    info = page.locator(".tw-gguf-info")
    return info.get_attribute("data-state"), info.inner_text(), time.monotonic() - start


@pytest.mark.parametrize("name, content, outcome", FILES, ids=[f[1] if isinstance(f[1], str) else f[0].strip()
                                                              for f in FILES])
def test_a_crafted_file_in_the_picker_ends_with_one_message_or_a_model(picker, name, content, outcome):
    p, folder = picker
    page = p.page
    state, text, seconds = _pick(page, folder, name, content)
    assert seconds < ANSWER_S, seconds
    assert state == outcome, text
    assert "\n" not in text.strip() and "Traceback" not in text
    if outcome == "error":
        assert text.startswith("Not a GGUF model this page can read:"), text
        return
    # named by the file, trimmed and shown as text; its own general.name replaces nothing
    info = json.loads(page.locator(".tw-gguf-info").get_attribute("data-info"))
    shown = name.strip().replace("\u202e", "\\u202e").replace("\x1b", "\\x1b")
    assert info["name"] == shown and info["key"] == "file:" + shown
    assert page.locator(".tw-sim-form [name=model]").input_value() == info["key"]
    options = page.evaluate("[...document.querySelectorAll('.tw-sim-form [name=model] option')]"
                            ".map(o => [o.value, o.textContent])")
    assert options.count([info["key"], shown]) == 1
    page.fill("#tw-sim-prompt_tokens", "222")
    wait_walk(page, 222, timeout=30_000)
    # the previous case's walk had 222 prompt tokens too: wait for this file's own walk
    page.wait_for_function("name => { const r = document.querySelector('.tw-sim-result');"
                           " const w = r && r.dataset.walk && JSON.parse(r.dataset.walk);"
                           " return w && w.model === name && w.prompt_tokens === 222; }", arg=shown, timeout=30_000)
    walk = json.loads(page.locator(".tw-sim-result").get_attribute("data-walk"))
    assert walk["model"] == shown
    assert "KV cache (f16)" in page.locator(".tw-gguf-info [data-out=kv]").inner_text()


def test_after_the_files_the_presets_are_themselves_and_the_figures_work(picker):
    p, _folder = picker
    page = p.page
    values = page.evaluate("[...document.querySelector('.tw-sim-form [name=model]').options].map(o => o.value)")
    assert values.count("qwen3.6-35b-a3b") == 1 and values.count("gguf") == 1
    page.locator(".tw-sim-form [name=model]").select_option("qwen3.6-35b-a3b")
    page.fill("#tw-sim-prompt_tokens", "654")
    wait_walk(page, 654, timeout=30_000)
    walk = json.loads(page.locator(".tw-sim-result").get_attribute("data-walk"))
    assert walk["model"] == "qwen3.6-35b-a3b" and walk["weights_bytes"] == QWEN_BYTES
    three_figures_work(page, "the crafted files")
    assert p.errors == []


def test_a_sliding_window_file_shows_its_kv_by_kind_of_layer(picker):
    p, _folder = picker
    page = p.page
    kvs = make_hostile.model_kvs(**{"general.architecture": (make_hostile.STR, "gemma3")})
    kvs = [(k.replace("llama.", "gemma3."), *rest) for k, *rest in kvs]
    kvs += [("gemma3.attention.sliding_window", make_hostile.U32, 64), ("gemma3.block_count", make_hostile.U32, 12)]
    kvs = [kv for i, kv in enumerate(kvs) if kv[0] != "gemma3.block_count" or i == len(kvs) - 1]
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    page.set_input_files("#tw-sim-gguf", {"name": "tiny-gemma.gguf", "mimeType": "", "buffer": _gguf(kvs)})
    page.wait_for_selector(".tw-gguf-info[data-state=ok]", timeout=30_000)
    info = json.loads(page.locator(".tw-gguf-info").get_attribute("data-info"))
    assert info["kv_layer_kinds"] == {"full": 2, "sliding": 10, "none": 0, "window": 64}
    kv = page.locator(".tw-gguf-info [data-out=kv]").inner_text()
    assert "2 layers keep every token" in kv and "10 keep the last 64 tokens" in kv


@pytest.mark.parametrize("text, says", [
    ("'x'.repeat(60000)", "the text has 60,000 characters; this figure cuts at most 50,000"),
    ("'a\\ud800b'", ""),  # a lone surrogate: one line, whatever it says
], ids=["too-long", "lone-surrogate"])
def test_a_hostile_paste_is_one_line_and_the_message_goes_when_the_text_is_fixed(picker, text, says):
    p, _folder = picker
    page = p.page
    page.locator(".tw-tokenizer").scroll_into_view_if_needed()
    wait_tokenizer_counts(page, "Before the paste.", timeout=BOOT_MS)
    start = time.monotonic()
    page.evaluate(f"""() => {{ const box = document.getElementById('tw-tok-input');
        box.value = {text}; box.dispatchEvent(new Event('input')); }}""")
    page.wait_for_function("document.querySelector('.tw-tokenizer .tw-status').textContent !== ''", timeout=30_000)
    assert time.monotonic() - start < ANSWER_S
    message = status(page, "tokenizer")
    assert message.startswith(says) and "\n" not in message and "Traceback" not in message, message
    wait_tokenizer_counts(page, "Fixed text.")
    assert status(page, "tokenizer") == "", "a message about the earlier text is cleared"


@pytest.mark.parametrize("text, says", [
    ("hello", "your llama-bench runs: not llama-bench's output (it begins 'hello'); paste the table it prints, "
              "or its -o json"),
    ("TRUNCATED", "your llama-bench runs: line "),  # half of the output: where the JSON stops
    ('[{"avg_ts": 1}]', "your llama-bench runs: test 1: field 'model_n_params' is missing"),
    ("README", "your llama-bench runs: no tg test is of a model here (test 2's has 7,615,616,512 weights in 4.68 GB): "
               "pick that model's GGUF file under Model"),
], ids=["not-json", "truncated", "no-fields", "no-model-here"])
def test_pasted_runs_that_cannot_time_the_machine_are_one_line_and_good_runs_make_a_table(picker, text, says):
    """The simulator's "Time it on your own llama-bench runs": a broken paste is one line and
    the walk is marked stale; the good runs then time the machine, each beside its predictions;
    llama-bench's file picked instead of pasted reads the same; an empty box is the published fit."""
    p, folder = picker
    page = p.page
    good = json.dumps(bench_rows(), indent=2)
    if text == "TRUNCATED":
        text = good[: len(good) // 2]
    elif text == "README":
        text = README_EXAMPLE.read_text()
    set_form(page, {"model": "qwen3.6-35b-a3b", "machine": "rtx-5080", "runs": ""})
    page.wait_for_function("document.querySelector('.tw-simulator').dataset.busy === '0'")
    start = time.monotonic()
    page.locator("#tw-sim-runs").fill(text)
    page.wait_for_selector(".tw-simulator[data-state=error]", timeout=30_000)
    assert time.monotonic() - start < ANSWER_S
    message = status(page, "simulator")
    assert message.startswith(says) and "\n" not in message and "Traceback" not in message, message
    assert page.locator(".tw-sim-result.is-stale").count() == 1

    (folder / "bench.json").write_text(good)
    page.set_input_files("#tw-sim-runs-file", str(folder / "bench.json"))
    page.wait_for_selector(".tw-simulator[data-state=ready] .tw-sim-runs", timeout=30_000)
    assert page.locator("#tw-sim-runs").input_value() == good and status(page, "simulator") == ""
    cells = page.locator(".tw-sim-runs tbody tr").evaluate_all("rows => rows.map(r => r.cells[0].textContent)")
    assert cells == ["pp512", "tg128solved on", "tg128solved on", "pp512solved on", "tg128"]
    walk = json.loads(page.locator(".tw-sim-result").get_attribute("data-walk"))
    assert walk["efficiency"]["decode"]["from"] == "fitted: calibrated on your 5 llama-bench tests"
    assert len(json.loads(parse_qs(urlparse(page.url).query)["runs"][0])) == 5
    # on a phone the table fits the column: nothing to scroll sideways
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        widths = page.locator(".tw-sim-runs").evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert widths[0] <= widths[1] + 1, widths
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})

    page.locator("#tw-sim-runs").fill("")
    page.wait_for_function("!document.querySelector('.tw-sim-runs') && "
                           "document.querySelector('.tw-simulator').dataset.busy === '0'", timeout=30_000)
    walk = json.loads(page.locator(".tw-sim-result").get_attribute("data-walk"))
    assert not walk["efficiency"]["decode"]["from"].startswith("fitted: calibrated") and "runs=" not in page.url
    assert p.errors == []
