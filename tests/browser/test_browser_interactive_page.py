"""The three interactive pieces in the built article, in headless Chromium on localhost:
the tokenizer (figure 1), the quantizer (figure 10) and TokenWalk, the simulator, running
the tokenwalk core in the page through the site's own Pyodide.

One page (one Pyodide boot) serves every test of this module, in order; the serving,
the browser and the request watcher are test_browser_site's."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

import pytest

from tests.support.browser import (
    SCREENSHOTS,
    Watched,
    lay_out_every_chapter,
    load_settled,
    set_form,
    shown_walk,
)
from tests.support.build import ROOT

pytestmark = pytest.mark.browser

SMOLLM2 = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
BOOT_MS = 120_000


@pytest.fixture(scope="module")
def article(real_article):
    """The real article as conftest builds it once for all browser tests."""
    return real_article


@pytest.fixture(scope="module")
def w(browser, article):
    page = Watched(browser, article[0], viewport={"width": 1280, "height": 900})
    yield page
    page.close()


def same_numbers(page_value, native_value, path="walk"):
    """Equal, floats to the last bit when this Python sums like the page's.

    The page runs Python 3.14 (Pyodide), whose sum() of floats is compensated (since
    3.12); on an older interpreter the walk's sums may differ in the last bit, so floats
    are then compared to 1e-12 relative. Everything else must be identical."""
    if isinstance(native_value, float) and isinstance(page_value, (int, float)) and sys.version_info < (3, 12):
        assert page_value == pytest.approx(native_value, rel=1e-12, abs=1e-15), path
    elif isinstance(native_value, dict):
        assert isinstance(page_value, dict) and page_value.keys() == native_value.keys(), path
        for key in native_value:
            same_numbers(page_value[key], native_value[key], f"{path}.{key}")
    elif isinstance(native_value, list):
        assert isinstance(page_value, list) and len(page_value) == len(native_value), path
        for i, (a, b) in enumerate(zip(page_value, native_value, strict=False)):
            same_numbers(a, b, f"{path}[{i}]")
    else:
        assert page_value == native_value, path


def cli(*args) -> dict:
    done = subprocess.run([sys.executable, "-m", "tokenwalk", *args, "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_python_is_not_loaded_before_the_reader_reaches_for_a_figure(w):
    w.page.wait_for_selector(".tw-tokenizer .tw-start", state="visible", timeout=5_000)
    assert [u for u in w.urls if "/pyodide/" in u or u.endswith(".whl")] == []
    assert w.page.evaluate("document.querySelector('.tw-tokenizer').dataset.python") == "idle"


def test_tokenizer_default_sentence_gives_the_builds_counts(w):
    page = w.page
    # the Start button (pressed without scrolling, which would start Python by itself)
    page.evaluate("document.querySelector('.tw-tokenizer .tw-start').click()")
    assert page.evaluate("document.querySelector('.tw-tokenizer').dataset.python") in ("loading", "ready")
    page.locator(".tw-tokenizer").scroll_into_view_if_needed()
    page.wait_for_selector(".tw-tokenizer[data-state=ready]", timeout=BOOT_MS)
    fig = page.locator(".tw-tokenizer")
    for key in ("characters", "utf8-bytes", "words", "tokens", "vocabulary"):
        shown = fig.locator(f".tw-counters [data-counter={key.replace('-', '_')}]").inner_text()
        assert shown.replace(",", "") == fig.get_attribute(f"data-{key}"), key
    assert fig.locator("[data-tokenizer=toy] .tw-chip").count() == int(fig.get_attribute("data-tokens"))


def test_typing_updates_the_counts_and_html_stays_text(w):
    page = w.page
    text = "<script>document.title='x'</script> fever"
    page.fill("#tw-tok-input", text)
    page.wait_for_function(f"document.querySelector('.tw-counters [data-counter=characters]').textContent === '{len(text)}'")
    fig = page.locator(".tw-tokenizer")
    assert fig.locator(".tw-counters [data-counter=utf8_bytes]").inner_text() == str(len(text.encode()))
    assert fig.locator(".tw-counters [data-counter=words]").inner_text() == "2"
    assert "".join(fig.locator("[data-tokenizer=toy] .tw-chip").all_inner_texts()) == text.replace(" ", "·")
    assert page.evaluate("document.querySelectorAll('.tw-tokenizer script').length") == 0
    assert page.title() != "x"


def test_smollm2_cuts_the_same_text_beside_it(w, article):
    from tokenwalk_app import entry as core

    if not SMOLLM2.is_file():
        pytest.skip("the SmolLM2 model file is not fetched (make setup): no vocabulary to ship")
    page = w.page
    page.wait_for_function("document.querySelector('[data-counter=\"smollm2-vocabulary\"]').textContent !== '–'",
                           timeout=60_000)
    # figures/tokenizer.HASH/ (the figure's folder, versioned by content)
    vocab = next((article[1] / "figures").glob("tokenizer.*/smollm2-135m-instruct-vocab.json")).read_text(encoding="utf-8")
    core.load_smollm2(vocab)
    text = "Fever and a dry cough for three days; ibuprofen 400 mg."
    page.fill("#tw-tok-input", text)
    expected = core.tokenize_smollm2(text)
    page.wait_for_function(f"document.querySelector('[data-counter=\"smollm2-tokens\"]').textContent === "
                           f"'{expected['tokens']}'")
    assert page.locator("[data-counter='smollm2-vocabulary']").inner_text() == "49,152"
    assert page.locator("[data-tokenizer=smollm2] .tw-chip").all_inner_texts() == [
        p.replace(" ", "·") for p in expected["pieces"]]


def test_a_picked_gguf_vocabulary_cuts_the_text_as_the_command_line(w):
    """The tokenizer figure with the vocabulary of a GGUF file the reader picks (Qwen2's,
    151,936 entries, from llama.cpp's test set): the header read in the page, the ids those
    of `tokenwalk tokenize --no-special --no-bos`; a WordPiece vocabulary is refused in one line."""
    qwen2 = ROOT / ".cache" / "llama-vocab" / "ggml-vocab-qwen2.gguf"
    if not qwen2.is_file():
        pytest.fail(f"{qwen2} is missing: run `make setup`")
    page = w.page
    text = "Fever and a dry cough for three days; ibuprofen 400 mg. 北京"
    page.fill("#tw-tok-input", text)
    assert "never uploaded" in page.locator("#tw-tok-gguf-hint").inner_text()
    page.set_input_files("#tw-tok-gguf", str(qwen2))
    page.wait_for_selector(".tw-tok-pick .tw-tok-gguf-info[data-state=ok]", timeout=120_000)
    assert page.locator(".tw-tok-pick .tw-tok-gguf-info").inner_text() == (
        "tokenizer.ggml.model gpt2, pre-tokenizer qwen2, 151,936 tokens.")
    expected = cli("tokenize", "--model", str(qwen2), text, "--no-special", "--no-bos")
    page.wait_for_function(f"document.querySelector('[data-counter=\"smollm2-tokens\"]').textContent === "
                           f"'{len(expected['ids'])}'", timeout=30_000)
    assert page.locator("[data-counter='smollm2-vocabulary']").inner_text() == "151,936"
    assert page.locator(".tw-tokenizer section h4").nth(1).inner_text() == "ggml-vocab-qwen2.gguf: its own tokenizer"
    chips = page.locator("[data-tokenizer=smollm2] .tw-chip").all_inner_texts()
    assert chips[:12] == [p.replace(" ", "·") for p in expected["pieces"][:12]]
    bert = ROOT / ".cache" / "llama-vocab" / "ggml-vocab-bert-bge.gguf"
    page.set_input_files("#tw-tok-gguf", str(bert))
    page.wait_for_selector(".tw-tok-pick .tw-tok-gguf-info[data-state=error]", timeout=60_000)
    line = page.locator(".tw-tok-pick .tw-tok-gguf-info").inner_text()
    assert line.startswith("Not a vocabulary this page can read: ggml-vocab-bert-bge.gguf: tokenizer.ggml.model 'bert'")
    # the figure keeps cutting with the last vocabulary it could read
    assert page.locator("[data-counter='smollm2-vocabulary']").inner_text() == "151,936"


def test_quantizer_error_grows_from_8_to_4_to_2_bits(w):
    page = w.page
    fig = page.locator(".tw-quantization")
    fig.scroll_into_view_if_needed()
    page.wait_for_selector(".tw-quantization[data-state=ready]", timeout=BOOT_MS)
    shares, bpw = {}, {}
    for bits in (8, 4, 2):
        before = fig.get_attribute("data-mean-error-share-live") if bits != 8 else None
        fig.locator(f"input[name=tw-quant-bits][value='{bits}']").check()
        page.wait_for_function(f"document.querySelector('.tw-quantization').dataset.bitsPerWeightLive === "
                               f"'{bits + 0.5}'")
        shares[bits] = float(fig.get_attribute("data-mean-error-share-live"))
        bpw[bits] = fig.locator("[data-out=bits-per-weight]").inner_text()
        assert before is None or shares[bits] != float(before)
    assert shares[2] > shares[4] > shares[8]
    assert "= 4.5 bits per weight" in bpw[4] and "= 8.5 bits per weight" in bpw[8]
    assert fig.locator("[data-out=mean-error]").inner_text() == f"mean error {round(100 * shares[2])}\u00a0%"
    # the live drawing is the build's (tokenwalk_app.quant_view): a chart group per weight
    assert fig.locator(".tw-quant-view svg .quant-chart .quant-weight").count() == 32
    # a new block keeps one large weight and a reconstructed table
    fig.locator("[data-action=draw]").click()
    page.wait_for_timeout(300)
    page.wait_for_function("document.querySelector('.tw-quantization').dataset.state === 'ready'")
    assert fig.locator(".tw-quant-view svg .quant-table text.num").count() == 32 * 5, "every weight in the table"


SCENARIOS = [
    ({}, []),  # the article's request, as the page opens
    ({"model": "llama3.1-70b", "machine": "h100-sxm", "prompt_tokens": "2000", "output_tokens": "50",
      "num_ctx": "", "kv_type": "q8_0", "chunk_tokens": "1024", "warm": True, "users": "8"},
     ["--kv-type", "q8_0", "--chunk", "1024", "--warm", "--users", "8"]),
    ({"model": "qwen3.6-35b-a3b", "machine": "m4-max", "prompt_tokens": "300", "output_tokens": "200",
      "num_ctx": "", "kv_type": "f16", "chunk_tokens": "512", "warm": False, "users": "1", "spec": True,
      "spec_alpha": "0.7", "spec_gamma": "4"}, ["--spec-alpha", "0.7", "--spec-gamma", "4"]),
    ({"model": "qwen3.8-27b", "machine": "custom", "bandwidth_gbs": "256", "fp16_tflops": "30", "memory_gb": "32",
      "backend": "Vulkan", "vendor": "", "device_class": "discrete", "memory_type": "", "architecture_year": "2024",
      "prompt_tokens": "1500", "output_tokens": "100", "num_ctx": "4096", "spec": False},
     ["--num-ctx", "4096", "--machine-file"]),
    # a card with HBM: the fit's CUDA/HBM row (where it has one), as for a machine file saying "HBM"
    ({"model": "qwen3.6-35b-a3b", "machine": "custom", "bandwidth_gbs": "3350", "fp16_tflops": "989",
      "memory_gb": "80", "backend": "CUDA", "vendor": "", "device_class": "datacentre", "memory_type": "HBM",
      "architecture_year": "2022", "prompt_tokens": "1500", "output_tokens": "100", "num_ctx": "4096", "spec": False},
     ["--num-ctx", "4096", "--machine-file"]),
    # an Intel card under Vulkan: the fit's Vulkan/Intel row (where it has one), as for a machine file saying "Intel"
    ({"model": "qwen3.6-35b-a3b", "machine": "custom", "bandwidth_gbs": "456", "fp16_tflops": "39.3",
      "memory_gb": "12", "backend": "Vulkan", "vendor": "Intel", "device_class": "discrete", "memory_type": "",
      "architecture_year": "2022", "prompt_tokens": "1500", "output_tokens": "100", "num_ctx": "4096", "spec": False},
     ["--num-ctx", "4096", "--machine-file"]),
    ({"model": "dense-7b-fp16", "machine": "rtx-5090", "prompt_tokens": "700", "output_tokens": "0",
      "num_ctx": "", "kv_type": "q4_0", "chunk_tokens": "256", "users": "3"},
     ["--kv-type", "q4_0", "--chunk", "256", "--users", "3"]),
]


@pytest.mark.parametrize("values,flags", SCENARIOS, ids=["article", "h100-batch", "speculative", "custom", "custom-hbm",
                                                         "custom-vendor", "rtx"])
def test_simulator_gives_exactly_the_walk_cli(w, values, flags, tmp_path):
    page = w.page
    fig = page.locator(".tw-simulator")
    fig.scroll_into_view_if_needed()
    page.wait_for_selector(".tw-simulator[data-state=ready]", timeout=BOOT_MS)
    set_form(page, values)
    page.wait_for_timeout(50)
    walk = shown_walk(page)
    form = page.evaluate("""() => { const f = document.querySelector('.tw-sim-form');
        return Object.fromEntries(['model','machine','prompt_tokens','output_tokens'].map(k => [k, f.elements[k].value])); }""")
    machine = form["machine"]
    if "--machine-file" in flags:
        flags = [f for f in flags if f != "--machine-file"]
        spec = {"name": "custom", **{k: float(values[k]) for k in ("bandwidth_gbs", "fp16_tflops", "memory_gb")},
                "backend": values["backend"], "device_class": values["device_class"],
                "architecture_year": int(values["architecture_year"])}
        for key in ("vendor", "memory_type"):
            if values[key]:
                spec[key] = values[key]
        (tmp_path / "custom.json").write_text(json.dumps(spec))
        machine = str(tmp_path / "custom.json")
    if not values:
        defaults = json.loads(fig.get_attribute("data-defaults"))
        flags = ["--num-ctx", str(defaults["num_ctx"]), "--chunk", str(defaults["chunk_tokens"])]
    expected = cli("walk", "--model", form["model"], "--machine", machine, "--prompt-tokens", form["prompt_tokens"],
                   "--output-tokens", form["output_tokens"], *flags)
    same_numbers(walk, expected)
    from tokenwalk_app.view import fmt_s
    assert fig.locator("[data-number=ttft] .tw-big").inner_text() == fmt_s(expected["ttft_s"])
    live = fig.locator(".tw-live[aria-live=polite]")
    assert f"time to first token {fmt_s(expected['ttft_s'])}" in live.inner_text(), "read out after each update"
    # the scenario is in the URL
    query = {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}
    assert query["model"] == form["model"] and query["prompt_tokens"] == form["prompt_tokens"]
    if values.get("memory_type"):
        from tokenwalk.format import typeset
        from tokenwalk.specs.machine import FIELD_HINTS
        from tokenwalk.timing import model as timing_model

        row = timing_model.row_key(timing_model.load_fit()["backends"], values["backend"], values["device_class"],
                                   None, values["memory_type"])
        assert walk["efficiency"]["decode"]["from"] == f"fitted: {row}" and query["memory_type"] == values["memory_type"]
        # like the kind of device: next in the tab order, labelled, described by the README's hint
        page.focus("#tw-sim-device_class")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "tw-sim-memory_type"
        assert page.locator("label[for=tw-sim-memory_type]").inner_text() == "Memory type"
        described = page.locator("#tw-sim-memory_type").get_attribute("aria-describedby")
        assert page.locator(f"#{described}").inner_text() == typeset(FIELD_HINTS["memory_type"])
    if values.get("vendor"):
        from tokenwalk.format import typeset
        from tokenwalk.specs.machine import FIELD_HINTS
        from tokenwalk.timing import model as timing_model

        rows = timing_model.load_fit()["backends"]
        row = timing_model.row_key(rows, values["backend"], values["device_class"], values["vendor"],
                                   values["memory_type"] or None)
        assert walk["efficiency"]["decode"]["from"] == f"fitted: {row}" and query["vendor"] == values["vendor"]
        assert row == "Vulkan/Intel" or "Vulkan/Intel" not in rows
        # between the backend and the kind of device in the tab order, labelled, described by the README's hint
        page.focus("#tw-sim-backend")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "tw-sim-vendor"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "tw-sim-device_class"
        assert page.locator("label[for=tw-sim-vendor]").inner_text() == "Chip maker"
        described = page.locator("#tw-sim-vendor").get_attribute("aria-describedby")
        assert page.locator(f"#{described}").inner_text() == typeset(FIELD_HINTS["vendor"])


def test_a_shared_link_opens_its_scenario(browser, article, w):
    context = browser.new_context()
    page = context.new_page()
    page.goto(w.page.url, wait_until="domcontentloaded")
    lay_out_every_chapter(page)
    values = page.evaluate("""() => { const f = document.querySelector('.tw-sim-form');
        return [f.elements.model.value, f.elements.prompt_tokens.value, f.elements.users.value]; }""")
    query = {k: v[0] for k, v in parse_qs(urlparse(w.page.url).query).items()}
    assert values == [query["model"], query["prompt_tokens"], query["users"]]
    context.close()


def test_picking_the_smollm2_gguf_reads_its_header_only(w):
    if not SMOLLM2.is_file():
        pytest.skip("the SmolLM2 model file is not fetched (make setup)")
    page = w.page
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    assert page.locator(".tw-gguf").is_visible()
    assert "never uploaded" in page.locator("#tw-sim-gguf-hint").inner_text()
    page.set_input_files("#tw-sim-gguf", str(SMOLLM2))
    page.wait_for_selector(".tw-gguf-info[data-state=ok]", timeout=60_000)
    info = json.loads(page.locator(".tw-gguf-info").get_attribute("data-info"))
    expected = cli("inspect", str(SMOLLM2))
    assert info["architecture"] == expected["architecture"]
    assert info["params"] == expected["params"]
    assert info["kv_bytes_per_token"] == expected["kv_bytes_per_token"]
    text = page.locator(".tw-gguf-info").inner_text()
    assert f"{expected['params']:,} parameters" in text and "architecture llama" in text
    page.locator(".tw-sim-form [name=prompt_tokens]").fill("123")
    walk = shown_walk(page)
    page.wait_for_function("JSON.parse(document.querySelector('.tw-sim-result').dataset.walk).prompt_tokens === 123")
    walk = shown_walk(page)
    # named by the reader's file, not by its general.name
    assert walk["model"] == SMOLLM2.name and walk["weights_bytes"] == expected["size_bytes"]


def test_a_file_that_is_not_gguf_gives_a_clear_error(w, tmp_path):
    page = w.page
    notes = tmp_path / "notes.gguf"
    notes.write_text("Patient notes, not a model.\n" * 20)
    page.locator(".tw-sim-form [name=model]").select_option("gguf")
    page.set_input_files("#tw-sim-gguf", str(notes))
    page.wait_for_selector(".tw-gguf-info[data-state=error]", timeout=30_000)
    text = page.locator(".tw-gguf-info").inner_text()
    assert text.startswith("Not a GGUF model") and "notes.gguf" in text


def test_screenshots_of_the_three_pieces(w):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = w.page
    page.locator(".tw-sim-form [name=model]").select_option("qwen3.6-35b-a3b")
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        for name in ("tokenizer", "quantization", "simulator"):
            height = page.evaluate(f"document.getElementById('fig-{name}').getBoundingClientRect().height")
            page.set_viewport_size({"width": width, "height": int(min(height + 40, 3000))})
            box = page.evaluate(f"""() => {{ const f = document.getElementById('fig-{name}');
                f.scrollIntoView({{block: 'start', behavior: 'instant'}});
                const r = f.getBoundingClientRect();
                return {{x: r.x, y: Math.max(r.y, 0), width: r.width, height: Math.min(r.height, innerHeight)}}; }}""")
            path = SCREENSHOTS / f"interactive-{name}-{width}.png"
            page.screenshot(path=str(path), clip=box, timeout=60_000)
            assert path.stat().st_size > 5_000
        assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_every_control_is_labelled_and_reachable_by_keyboard(w):
    unlabelled = w.page.evaluate("""() => [...document.querySelectorAll(
            '.tw-interactive input, .tw-interactive select, .tw-interactive textarea, .tw-interactive button')]
        .filter(e => e.tabIndex < 0 || !((e.labels && e.labels.length) || e.getAttribute('aria-label')
                                         || (e.tagName === 'BUTTON' && e.textContent.trim())))
        .map(e => e.outerHTML.slice(0, 80))""")
    assert unlabelled == []
    page = w.page
    page.focus("#tw-sim-prompt_tokens")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "tw-sim-output_tokens"
    page.keyboard.type("5")  # appends a digit: 300 -> 3005 output tokens, from the keyboard alone
    # the result has no data-walk while a walk is under way: wait for one, then for this one
    page.wait_for_function("(d => d !== undefined && JSON.parse(d).output_tokens % 10 === 5)"
                           "(document.querySelector('.tw-sim-result').dataset.walk)")


def test_no_console_error_and_no_request_leaves_localhost(w, article):
    host = urlparse(article[0]).netloc
    assert any(u.endswith("pyodide.asm.wasm") for u in w.urls), "the worker's requests are watched too"
    assert [u for u in w.urls if urlparse(u).netloc != host and not u.startswith(("data:", "blob:"))] == []
    assert w.failed == []
    assert w.errors == []


def test_without_javascript_each_piece_shows_its_build_rendering_and_says_why(browser, article):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 900})
    page = context.new_page()
    load_settled(page, article[0])
    lay_out_every_chapter(page)
    for name in ("tokenizer", "quantization"):
        assert page.locator(f".tw-{name} svg").first.is_visible()
        note = page.locator(f".tw-{name} .tw-nojs").first
        assert note.is_visible() and "needs JavaScript" in note.inner_text(), name
    sim = page.locator(".tw-simulator")
    assert sim.locator(".tw-nojs").is_visible() and "needs JavaScript" in sim.locator(".tw-nojs").inner_text()
    assert sim.locator(".tw-sim-form").is_hidden()
    walk = json.loads(sim.get_attribute("data-defaults"))
    assert sim.locator(".tw-sim-numbers").is_visible()
    assert f"{walk['prompt_tokens']:,} prompt tokens" in sim.locator(".tw-sim-head").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "interactive-nojs-simulator-390.png"), clip={
        **page.evaluate("""() => { const f = document.getElementById('fig-simulator');
            f.scrollIntoView(); const r = f.getBoundingClientRect();
            return {x: r.x, y: Math.max(r.y, 0), width: r.width, height: Math.min(r.height, innerHeight)}; }""")})
    context.close()
