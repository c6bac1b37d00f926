"""Fast on a phone, as the browser sees the built article: nothing moves after
the first paint at 390 and 1280 px (layout shift summed from a PerformanceObserver), at
most one stylesheet blocks the first paint, nothing of Pyodide is fetched before the
reader approaches a live figure and it starts before the figure is on screen, and
axe-core finds no violation in light or dark mode. Speed itself is measured by
`make bench` (benchmarks/lighthouse_bench.py, benchmarks/interactive_bench.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.build import ROOT

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SHIFTS = """window.twShift = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (!e.hadRecentInput) window.twShift += e.value;
}).observe({ type: "layout-shift", buffered: true });"""


@pytest.fixture(scope="module")
def site(real_article):
    """The real article as conftest builds it once for all browser tests."""
    return real_article


def open_page(browser, url, width, height=900, **options):
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    context.add_init_script(SHIFTS)
    page = context.new_page()
    urls = []
    page.on("request", lambda r: urls.append(r.url))
    page.goto(url, wait_until="load")
    return context, page, urls


@pytest.mark.parametrize("width", [390, 1280])
def test_nothing_moves_after_the_first_paint(browser, site, width):
    context, page, _ = open_page(browser, site[0], width)
    try:
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1000)  # the deferred scripts, the code colours, the math font
        shift = page.evaluate("window.twShift")
        assert shift < 0.01, f"cumulative layout shift {shift:.3f} at {width} px"
        opened = page.evaluate("document.querySelector('.toc details').open")
        assert opened is (width > 700), "the contents start folded on a phone, open on a wide screen"
    finally:
        context.close()


def test_at_most_one_stylesheet_blocks_the_first_paint(browser, site):
    context, page, _ = open_page(browser, site[0], 390)
    try:
        blocking = page.evaluate("""performance.getEntriesByType("resource")
            .filter((e) => e.renderBlockingStatus === "blocking").map((e) => e.name)""")
        assert len(blocking) <= 1 and all(u.endswith(".css") for u in blocking), blocking
        linked = page.evaluate("""[...document.head.querySelectorAll('link[rel=stylesheet]')]
            .filter((l) => !l.closest('noscript') && (!l.media || l.media === 'all')).length""")
        assert linked <= 1
    finally:
        context.close()


def is_pyodide(url: str) -> bool:
    return "/pyodide/" in url or url.endswith(".whl")


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_pyodide_waits_for_the_reader_then_starts_before_the_figure_is_on_screen(browser, site, width, height):
    context, page, urls = open_page(browser, site[0], width, height)
    try:
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1000)
        assert [u for u in urls if is_pyodide(u)] == [], "Pyodide fetched before the reader approached a figure"
        assert page.evaluate("document.querySelector('.tw-tokenizer').dataset.python") == "idle"
        # scroll down a third of a screen at a time, as a reader does, until Python starts
        distance = None
        for _ in range(400):
            page.mouse.wheel(0, height // 3)
            page.wait_for_timeout(30)
            state = page.evaluate("""(() => { const f = document.querySelector('.tw-tokenizer');
                return [f.dataset.python, f.getBoundingClientRect().top]; })()""")
            if state[0] != "idle":
                distance = (state[1] - height) / height  # screens between the view's bottom and the figure
                break
        assert distance is not None, "Python never started while scrolling to the tokenizer"
        assert 0 < distance <= 2.5, f"Python started {distance:.2f} screens before the figure (wanted 0 to 2.5)"
        for _ in range(300):  # and the runtime and the wheel are on their way (the worker's requests; a loaded machine is slow to start it)
            if any("/pyodide/" in u for u in urls) and any(u.endswith(".whl") for u in urls):
                break
            page.wait_for_timeout(100)
        assert any("/pyodide/" in u for u in urls) and any(u.endswith(".whl") for u in urls)
    finally:
        context.close()


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is installed by make setup (package.json)")
@pytest.mark.parametrize("width,scheme", [(1280, "light"), (1280, "dark"), (390, "light")])
def test_axe_core_finds_no_violation(browser, site, width, scheme):
    context, page, _ = open_page(browser, site[0], width, color_scheme=scheme)
    try:
        page.wait_for_load_state("networkidle")
        # lay out the lazy chapters too: axe checks what the reader will scroll to
        page.add_style_tag(content=".chapter.is-lazy { content-visibility: visible !important; }")
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate("""async () => {
            const result = await axe.run(document, { resultTypes: ["violations"] });
            return result.violations.map((v) => `${v.id}: ${v.nodes.length} (${v.nodes[0].target.join(" ")})`);
        }""")
        assert violations == [], f"{width} px, {scheme}: {violations}"
    finally:
        context.close()


def test_the_page_reads_without_the_lazy_chapters_being_laid_out_in_print(browser, site):
    context, page, _ = open_page(browser, site[0], 1280)
    try:
        page.emulate_media(media="print")
        visibility = page.evaluate("getComputedStyle(document.querySelector('.chapter.is-lazy')).contentVisibility")
        assert visibility == "visible", "print lays out every chapter"
        page.emulate_media(media="screen")
        assert page.evaluate("getComputedStyle(document.querySelector('.chapter.is-lazy')).contentVisibility") == "auto"
        assert page.evaluate("document.querySelectorAll('.chapter:not(.is-lazy)').length") == 1
    finally:
        context.close()


def test_site_paths_in_the_page_are_files(site):
    """Every versioned path in the page exists (the build rewrote them from its manifest)."""
    import re

    html = (Path(site[1]) / "index.html").read_text(encoding="utf-8")
    paths = set(re.findall(r'(?:src|href|srcset|poster|data-[\w-]+)="((?:static|figures|pyodide|wheels)/[^"]+)"', html))
    assert len(paths) > 10
    assert [p for p in sorted(paths) if not (Path(site[1]) / p).is_file()] == []
