"""Every reader, on the built article in headless Chromium: a keyboard reaches
every note, figure link, disclosure and live control, with a visible focus, and a screen
reader gets each note's text from the accessibility tree; with reduced motion nothing moves
by itself and every Manim figure says what it shows; each plot's numbers are on the page as
text; a figure's link copies an address that opens at the figure; the sharing card and
"Cite this" come from content/article.toml; printed, external links show their address, the
live figures their build-time drawing, and no figure is taller than a page."""

from __future__ import annotations

import re
import struct
import tomllib
import unicodedata
from pathlib import Path

import pytest

from tests.support.build import ROOT

pytestmark = pytest.mark.browser

# A4 less the print bench's margins (16 mm each side, 18 mm top and bottom), in CSS px.
PRINT_WIDTH_PX = round((210 - 32) / 25.4 * 96)
PRINT_HEIGHT_PX = round((297 - 36) / 25.4 * 96)


@pytest.fixture(scope="module")
def site(real_article):
    return real_article


@pytest.fixture(scope="module")
def figure_modules():
    """id -> module of every figure the registry finds."""
    from publish import registry
    return {fig.id: fig.module for fig in registry.discover(ROOT / "figures", ROOT)}


@pytest.fixture(scope="module")
def context_n():
    from article.context import build_context
    return build_context()


def new_page(browser, url, width, **options):
    context = browser.new_context(viewport={"width": width, "height": 900}, **options)
    page = context.new_page()
    page.goto(url, wait_until="load")
    return context, page


FOCUSED = """() => { const e = document.activeElement;
  const target = e.matches('input.margin-toggle') ? e.previousElementSibling : e;
  const style = getComputedStyle(target);
  return { id: e.id, cls: e.className && e.className.baseVal === undefined ? e.className : '',
           tag: e.tagName, figure: e.closest('figure') ? e.closest('figure').id : '',
           outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 }; }"""


@pytest.mark.parametrize("width", [390, 1280])
def test_tab_walks_the_whole_page_through_every_note_link_and_control(browser, site, width):
    context, page = new_page(browser, site[0], width)
    page.wait_for_function("document.querySelector('.tw-simulator.is-live')")  # the live form is shown
    # a note in a tab not selected is reached once its tab is chosen (arrow keys in the tab list)
    expected = page.evaluate("""() => {
      const open = e => !e.closest('[hidden]');
      const shown = e => e.getClientRects().length > 0 || e.matches('input.margin-toggle');
      return { notes: [...document.querySelectorAll('input.margin-toggle')].filter(open).map(e => e.id),
               in_tabs: [...document.querySelectorAll('input.margin-toggle')].filter(e => !open(e))
                 .every(e => e.closest('.tab-pane[role=tabpanel]')),
               links: [...document.querySelectorAll('a.figure-link')].filter(open).map(e => e.closest('figure').id),
               summaries: [...document.querySelectorAll('figure summary')].filter(open).length,
               controls: [...document.querySelectorAll('.tw-interactive input, .tw-interactive select, '
                 + '.tw-interactive button, .tw-interactive textarea')].filter(e => shown(e) && !e.disabled)
                 .map(e => e.id || e.name || e.textContent.trim()) }; }""")
    assert len(expected["notes"]) >= 20 and expected["in_tabs"]
    assert len(expected["links"]) == page.locator("figure[id^=fig-]:not([hidden] *)").count()
    seen, unfocused = [], []
    page.keyboard.press("Tab")
    for _ in range(3000):
        now = page.evaluate(FOCUSED)
        if now["tag"] == "BODY" or (seen and now == seen[0] and len(seen) > 5):
            break
        seen.append(now)
        if not now["outline"]:
            unfocused.append(now)
        page.keyboard.press("Tab")
    else:
        pytest.fail("Tab never left the page")
    notes = [s["id"] for s in seen if s["cls"] == "margin-toggle"]
    links = [s["figure"] for s in seen if s["cls"] == "figure-link"]
    assert notes == expected["notes"], "every note, in reading order"
    assert links == expected["links"], "every figure's link, in reading order"
    assert sum(1 for s in seen if s["tag"] == "SUMMARY" and s["figure"]) == expected["summaries"]
    reached = {s["id"] for s in seen} | {s.get("name", "") for s in seen}
    missing = [c for c in expected["controls"] if c and c not in reached and not c.isspace()]
    controls_seen = sum(1 for s in seen if s["tag"] in ("INPUT", "SELECT", "TEXTAREA", "BUTTON"))
    assert not missing or controls_seen >= len(expected["controls"]), f"live controls not reached: {missing}"
    assert not unfocused, f"no visible focus on {unfocused[:3]}"
    context.close()


def ax_nodes(page) -> list[dict]:
    """The whole accessibility tree. Chromium's tree over CDP leaves out what
    content-visibility: auto skips (the chapters far from the screen), so every chapter is
    laid out first: this checks the markup's semantics, chapter by chapter."""
    page.evaluate("document.querySelectorAll('.chapter.is-lazy').forEach(c => c.style.contentVisibility = 'visible')")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Accessibility.enable")
    return cdp.send("Accessibility.getFullAXTree")["nodes"]


def ax_value(node, key):
    return (node.get(key) or {}).get("value", "")


@pytest.mark.parametrize("width", [390, 1280])
def test_a_screen_reader_gets_every_note_with_its_text(browser, site, width):
    context, page = new_page(browser, site[0], width)
    # a note in a tab not selected is out of the tree until its tab is chosen
    notes = page.evaluate("""[...document.querySelectorAll('.sidenote')].filter(n => !n.closest('[hidden]'))
        .map(n => [n.id.replace('sn-', 'Note ').replace('-text', ''), n.textContent.replace(/\\s+/g, ' ').trim()])""")
    boxes = [n for n in ax_nodes(page) if ax_value(n, "role") == "checkbox"
             and re.fullmatch(r"Note \d+", ax_value(n, "name"))]
    assert len(notes) >= 20
    # Chromium lists the tree of an enhanced tab set after what follows it: compared by number
    boxes.sort(key=lambda n: int(ax_value(n, "name").split()[1]))
    assert [ax_value(n, "name") for n in boxes] == [name for name, _ in notes]
    notes = [text for _, text in notes]
    for box, text in zip(boxes, notes, strict=True):
        # the description is the note, folded or not (its number first); MathML inside a
        # note is read letter by letter, in mathematical italics
        def plain(s):
            return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))
        assert plain(ax_value(box, "description")) == plain(text)
    context.close()


def test_live_controls_have_names(browser, site):
    context, page = new_page(browser, site[0], 1280)
    page.wait_for_function("document.querySelector('.tw-simulator.is-live')")
    controls = {n["backendDOMNodeId"]: n for n in ax_nodes(page)
                if ax_value(n, "role") in ("combobox", "spinbutton", "textbox", "checkbox", "radio", "button",
                                           "slider")}
    unnamed = [ax_value(n, "role") for n in controls.values() if not ax_value(n, "name").strip()]
    assert len(controls) > 10 and not unnamed, f"controls without a name: {unnamed}"
    context.close()


def test_reduced_motion_nothing_moves_and_every_manim_figure_says_what_it_shows(browser, site, figure_modules,
                                                                               context_n):
    context, page = new_page(browser, site[0], 390, reduced_motion="reduce")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_timeout(500)
    page.locator(".tw-tokenizer").scroll_into_view_if_needed()  # Pyodide starts: its spinner must not turn
    page.wait_for_timeout(300)
    moving = page.evaluate("""document.getAnimations().filter(a => a.playState === 'running'
        && a.effect && a.effect.getComputedTiming().duration > 0).length""")
    playing = page.evaluate("[...document.querySelectorAll('video')].filter(v => v.autoplay || !v.paused).length")
    assert moving == 0 and playing == 0
    from tokenwalk.format import typeset

    manim = [fid for fid, m in figure_modules.items() if getattr(m, "KIND", "") == "M"]
    assert manim
    for fid in manim:
        module = figure_modules[fid]
        steps = module.steps(module.inputs(context_n))
        items = page.locator(f"#fig-{fid} .figure-steps li").all_text_contents()
        assert items == [typeset(s) for s in steps] and len(steps) >= 4, fid  # with the prose's quotes
        # each has a still for every reader, whether or not it also has a video
        assert page.locator(f"#fig-{fid} picture.manim-still img").count() == 1
    context.close()


def test_every_plot_gives_the_numbers_it_draws(browser, site, figure_modules, context_n):
    context, page = new_page(browser, site[0], 1280)
    plots = [fid for fid, m in figure_modules.items() if getattr(m, "KIND", "") == "P"]
    assert plots
    for fid in plots:
        module = figure_modules[fid]
        table = module.data_table(module.inputs(context_n))
        page.locator(f"#fig-{fid} .figure-data summary").click()
        rows = page.evaluate(f"""[...document.querySelectorAll('#fig-{fid} .figure-data tbody tr')]
            .map(tr => [...tr.cells].map(td => td.textContent))""")
        assert rows == table["rows"], fid
    # the balance point the prose prints is the one in the table
    from tokenwalk import format as fmt
    cell = page.locator("#fig-balance-point .figure-data td", has_text="tokens").first.inner_text()
    assert fmt.count(context_n.n["balance_tokens_fp16"]) in cell
    context.close()


def test_a_figure_link_copies_an_address_that_opens_at_the_figure(browser, site):
    query = "?model=qwen3.6-35b-a3b&prompt_tokens=1234"
    context, page = new_page(browser, site[0] + query, 390)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    figures = page.evaluate("[...document.querySelectorAll('figure[id^=fig-]')].map(f => f.id)")
    target = figures[-3]  # in a chapter laid out only near the screen
    link = page.locator(f"#{target} a.figure-link")
    link.scroll_into_view_if_needed()
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.link-status').textContent.includes('copied')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{site[0]}{query}#{target}"
    assert page.evaluate("location.hash") == f"#{target}"
    context.close()
    context, page = new_page(browser, copied, 390)
    page.wait_for_timeout(800)
    top = page.evaluate(f"document.getElementById('{target}').getBoundingClientRect().top")
    assert abs(top) <= 4, f"the figure's top is {top} px from the top of the screen"
    assert page.evaluate("location.search") == query
    context.close()


def meta_tags(html: str) -> dict:
    return {m.group(1): m.group(2) for m in re.finditer(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', html)}


def test_the_card_and_the_citation_come_from_the_metadata_file(browser, site):
    meta = tomllib.loads((ROOT / "content" / "article.toml").read_text(encoding="utf-8"))
    html = (Path(site[1]) / "index.html").read_text(encoding="utf-8")
    tags = meta_tags(html)
    assert tags["og:title"] == tags["twitter:title"] == meta["title"]
    assert tags["og:description"] == tags["description"] == meta["description"]
    assert tags["twitter:card"] == "summary_large_image"
    card = Path(site[1]) / tags["og:image"].removeprefix(meta["url"])
    png = card.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 630)
    assert tags["twitter:image"] == tags["og:image"]
    context, page = new_page(browser, site[0], 390)
    cite = page.locator(".cite-this")
    text = cite.locator("[data-cite-text]").inner_text()
    assert text.startswith(f"{meta['author']}, \u201c{meta['title']}\u201d, {meta['year']}.")
    assert text.endswith(meta["url"] or site[0])
    bibtex = cite.locator("[data-cite-bibtex]").inner_text()
    assert bibtex.startswith(f"@misc{{{meta['bibtex_key']},") and f"title = {{{meta['title']}}}" in bibtex
    assert f"url = {{{meta['url'] or site[0]}}}" in bibtex
    assert meta["license"] in cite.locator(".reuse").inner_text()
    assert cite.locator("a[rel=license]").get_attribute("href") == meta["license_url"]
    context.close()


def test_printed_links_show_their_address_and_figures_fit_a_page(browser, site):
    context, page = new_page(browser, site[0], PRINT_WIDTH_PX)
    page.emulate_media(media="print")
    checks = page.evaluate("""() => {
      const links = [...document.querySelectorAll('main a[href^="http"]')];
      const after = links.filter(a => !getComputedStyle(a, '::after').content.includes(a.getAttribute('href')));
      const tools = [...document.querySelectorAll('.figure-tools, .tw-sim-form, .tw-start')]
        .filter(e => e.getClientRects().length > 0).length;
      const drawings = [...document.querySelectorAll('.tw-interactive > svg')]
        .filter(s => s.getClientRects().length === 0).length;
      // a drawing, a code block and a table row are never cut (a figure that is a table, prose
      // tabs or the simulator's report breaks between rows, paragraphs or parts)
      const whole = [...document.querySelectorAll('.figure-body, .code-block, tr, .tw-sim-result dl')]
        .filter(e => !(e.matches('.figure-body') && e.querySelector('.tabs, .table-wrap table, .tw-sim-stages')));
      const tall = whole.map(e => [e.id || e.className || e.tagName, e.getBoundingClientRect().height]);
      return { links: links.length, after: after.length, tools, drawings, tall }; }""")
    assert checks["links"] >= 1 and checks["after"] == 0
    assert checks["tools"] == 0 and checks["drawings"] == 0
    too_tall = [(name, h) for name, h in checks["tall"] if h > PRINT_HEIGHT_PX]
    assert not too_tall, f"taller than a printed page ({PRINT_HEIGHT_PX} px): {too_tall}"
    context.close()


def test_the_page_prints_to_a_pdf_whose_pages_the_bench_counts(browser, site):
    from benchmarks.print_bench import pdf_page_count, print_pdf

    pdf = print_pdf(browser, site[0])
    pages = pdf_page_count(pdf)
    # a page holds at most one of the tallest figures: there are more pages than chapters
    chapters = (Path(site[1]) / "index.html").read_text(encoding="utf-8").count('<section class="chapter')
    assert pdf.startswith(b"%PDF-") and pages > chapters
    assert len(re.findall(rb"/Type\s*/Page\b", pdf)) in (0, pages)  # when the pages are plain objects
