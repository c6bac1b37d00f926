"""The built site in headless Chromium (Debian's, no browser download), served on
localhost: no console error, no failed request, no request to another host, every image
and SVG loads, dark mode follows the system and the remembered toggle, sidenotes sit in
the margin on a wide screen and open inline on a phone, the page works without
JavaScript. Screenshots at 390 and 1280 px go to tests/screenshots/ (git-ignored).

Two sites: the fixture article (always) and the real article (when its number namespace,
article/numbers.py, exists)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.support.browser import SCREENSHOTS, Watched, load_settled, serve
from tests.support.build import FIXTURE, build_fixture

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=["fixture", "article"])
def site(request, tmp_path_factory):
    """(name, base URL) of a built site served on localhost: the fixture article built here,
    the real one as conftest builds it once for all browser tests."""
    if request.param == "article":
        yield request.param, request.getfixturevalue("real_article")[0]
        return
    tmp = tmp_path_factory.mktemp(f"browser-{request.param}")
    result = build_fixture(FIXTURE, tmp / "site", tmp / "cache")
    assert result.returncode == 0, result.stderr
    server = serve(tmp / "site")
    yield request.param, f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture
def watched(browser, site):
    pages = []

    def open_page(**options):
        options.setdefault("viewport", {"width": 1280, "height": 900})
        page = Watched(browser, site[1], **options)
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        page.close()


def test_no_console_error_no_failed_request_no_other_host(watched, site):
    w = watched()
    w.page.mouse.wheel(0, 20000)  # scroll to the end: lazy content loads too
    w.page.wait_for_load_state("networkidle")
    assert w.errors == []
    assert w.failed == []
    base = urlparse(site[1])
    other = [u for u in w.urls if urlparse(u).netloc != base.netloc and not u.startswith("data:")]
    assert other == [], "requests to another host"


def test_every_image_and_svg_loads(watched):
    w = watched()
    broken = w.page.evaluate("""async () => {
        const bad = [];
        for (const img of document.images) {  // lazy images load once scrolled to
            img.scrollIntoView();
            if (!img.complete) {
                await new Promise(done => {
                    img.addEventListener('load', done, {once: true});
                    img.addEventListener('error', done, {once: true});
                    setTimeout(done, 5000);
                });
            }
            if (!img.complete || img.naturalWidth === 0) bad.push(img.currentSrc || img.src);
        }
        for (const svg of document.querySelectorAll('figure svg')) {
            if (svg.closest('.figure-link')) continue;  // the link control's 14 px icon, not a drawing
            const box = svg.getBoundingClientRect();
            if (box.width < 50 || box.height < 20) bad.push('svg in ' + svg.closest('figure').id);
        }
        return bad;
    }""")
    assert broken == []
    figures = w.page.locator("figure").count()
    assert figures >= 1
    assert figures == w.page.locator("figure[id^='fig-']").count()


def _background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_dark_mode_follows_the_system_without_javascript(browser, site):
    context = browser.new_context(color_scheme="dark", java_script_enabled=False)
    page = context.new_page()
    page.goto(site[1])
    assert _luminance(_background(page)) < 0.2
    fig_fg = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--fig-fg')")
    assert _luminance(f"rgb({int(fig_fg.strip()[1:3], 16)},{int(fig_fg.strip()[3:5], 16)},{int(fig_fg.strip()[5:7], 16)})") > 0.7
    context.close()


def test_dark_mode_toggle_works_and_is_remembered(watched):
    w = watched(color_scheme="light")
    page = w.page
    assert _luminance(_background(page)) > 0.8
    page.click(".theme-toggle")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.wait_for_timeout(50)
    assert _luminance(_background(page)) < 0.2
    load_settled(page)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark", "remembered across loads"
    assert _luminance(_background(page)) < 0.2
    page.click(".theme-toggle")
    load_settled(page)
    assert _luminance(_background(page)) > 0.8
    assert w.errors == []


def test_sidenotes_in_the_margin_on_wide_screens(watched):
    w = watched(viewport={"width": 1280, "height": 900})
    if w.page.locator(".sidenote").count() == 0:
        pytest.skip("no sidenotes on this page yet")
    note = w.page.locator(".sidenote").first.bounding_box()
    paragraph = w.page.locator("p:has(.sidenote)").first.bounding_box()
    assert note["x"] >= paragraph["x"] + paragraph["width"], "the note sits right of the text column"
    assert note["x"] + note["width"] <= 1280


def test_sidenotes_open_inline_on_a_phone_without_javascript(browser, site):
    context = browser.new_context(viewport={"width": 360, "height": 740}, java_script_enabled=False)
    page = context.new_page()
    page.goto(site[1])
    if page.locator(".sidenote").count() == 0:
        pytest.skip("no sidenotes on this page yet")
    note = page.locator(".sidenote").first
    assert not note.is_visible()
    page.locator("label.sidenote-ref").first.click()
    assert note.is_visible()
    box = note.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 360
    context.close()


def test_no_horizontal_scroll_on_a_360px_phone(watched):
    w = watched(viewport={"width": 360, "height": 740})
    assert w.page.evaluate("document.documentElement.scrollWidth") <= 360


def test_without_javascript_every_figure_shows(browser, site):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    load_settled(page, site[1])
    for i in range(page.locator("figure img").count()):  # lazy images load once scrolled to
        page.locator("figure img").nth(i).scroll_into_view_if_needed()
    page.wait_for_load_state("networkidle")
    sizes = page.evaluate("""() => [...document.querySelectorAll('figure')].map(f => {
        const body = f.querySelector('.figure-body');
        const box = body.getBoundingClientRect();
        const imgs = [...body.querySelectorAll('img')];
        return [f.id, box.width, box.height, imgs.every(i => i.complete && i.naturalWidth > 0)];
    })""")
    assert sizes, "the page has figures"
    for fig_id, width, height, images_ok in sizes:
        assert width > 100 and height > 10 and images_ok, fig_id
    assert page.locator(".theme-toggle").is_hidden(), "no dead button without JavaScript"
    context.close()


def test_tabs_and_copy_buttons_with_javascript(watched):
    w = watched()
    page = w.page
    if page.locator(".tabs").count():
        tabs = page.locator(".tabs").first
        buttons = tabs.locator("[role=tab]")
        assert buttons.count() == tabs.locator(".tab-pane").count() >= 2
        assert tabs.locator(".tab-pane").nth(1).is_hidden()
        buttons.nth(1).click()
        assert tabs.locator(".tab-pane").nth(1).is_visible()
        assert tabs.locator(".tab-pane").nth(0).is_hidden()
    assert page.locator(".copy-button").count() == page.locator(".code-block").count()


def test_screenshots_390_and_1280(browser, site):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, scheme in ((390, "dark"), (1280, "light")):
        context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
        page = context.new_page()
        load_settled(page, site[1])
        for i in range(page.locator("img").count()):  # load lazy images for the picture
            page.locator("img").nth(i).scroll_into_view_if_needed()
        page.wait_for_load_state("networkidle")
        page.evaluate("window.scrollTo(0, 0)")
        path = SCREENSHOTS / f"{site[0]}-{width}-{scheme}.png"
        # a tall viewport rather than full_page (which stalls on very long pages here);
        # a long article is captured down to 16,000 px
        height = min(page.evaluate("document.documentElement.scrollHeight"), 16000)
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(path), timeout=120_000)
        context.close()
        assert path.stat().st_size > 10_000


def test_print_is_light_and_shows_sidenotes_even_in_dark_mode(watched):
    w = watched(color_scheme="dark")
    page = w.page
    page.click(".theme-toggle")
    page.click(".theme-toggle")  # an explicit, remembered dark choice
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.emulate_media(media="print")
    assert _luminance(_background(page)) > 0.9
    assert page.locator(".theme-toggle").is_hidden()
    if page.locator(".sidenote").count():
        # every note prints once: a paragraph's after it (not cutting its sentences), others at their mark
        shown = page.evaluate("""() => [...document.querySelectorAll('.sidenote')].map(n => {
            const p = n.closest('p'), after = p && p.nextElementSibling;
            const printed = after && after.classList.contains('print-notes') ? after : null;
            return [getComputedStyle(n).display !== 'none', printed ? getComputedStyle(printed).display !== 'none' : null,
                    printed ? printed.textContent.includes(n.textContent.trim()) : null];
        })""")
        assert all(inline != (after is True) for inline, after, _ in shown), shown
        assert all(same is not False for *_, same in shown)
        assert any(after for _, after, _ in shown)
    page.emulate_media(media="screen")
    assert page.locator(".print-notes").count() == 0 or page.locator(".print-notes").first.is_hidden()


def test_raster_figures_follow_the_toggle(watched, site):
    """<picture data-theme-swap> figures (Manim stills) show their dark variant when the
    reader chooses dark, even on a light system."""
    w = watched(color_scheme="light")
    page = w.page
    pictures = page.locator("picture[data-theme-swap]")
    if pictures.count() == 0:
        pytest.skip("no raster figure with a dark variant on this page")
    img = pictures.first.locator("img")
    img.scroll_into_view_if_needed()
    page.wait_for_load_state("networkidle")
    dark_src = pictures.first.get_attribute("data-src-dark")
    assert not img.evaluate("i => i.currentSrc").endswith(dark_src)
    page.click(".theme-toggle")
    page.wait_for_function("s => document.querySelector('picture[data-theme-swap] img').currentSrc.endsWith(s)", arg=dark_src)


def test_ids_are_unique_and_figure_links_resolve(watched):
    """Headings, figures, sidenotes and inline SVGs share one id space."""
    w = watched()
    duplicates, dangling = w.page.evaluate("""() => {
        const ids = [...document.querySelectorAll('[id]')].map(e => e.id);
        const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
        const dangling = [...document.querySelectorAll('a[href^="#"]')]
            .map(a => a.getAttribute('href').slice(1))
            .filter(id => id && !document.getElementById(id));
        return [dup, dangling];
    }""")
    assert duplicates == []
    assert dangling == []


def test_contents_open_on_a_wide_screen_and_folded_on_a_phone(watched):
    wide = watched(viewport={"width": 1280, "height": 900})
    assert wide.page.evaluate("document.querySelector('.toc details').open") is True
    phone = watched(viewport={"width": 390, "height": 844})
    assert phone.page.evaluate("document.querySelector('.toc details').open") is False
    assert phone.page.locator("h2").first.bounding_box()["y"] < 844, "the article starts on the first screen"
