"""The site made fast to load, on stand-ins: minified and versioned assets with
their references rewritten, the precompressed copies and the headers `make serve` sends,
the math font cut to the page's glyphs, the lazy chapters' reserved heights, row headers
and code colours readable at 4.5:1."""

from __future__ import annotations

import gzip
import hashlib
import re
import urllib.request
from pathlib import Path

import brotli
import pytest

from publish import BuildError
from publish.assets import MATH_FONT, math_text, subset_math_font
from publish.chapters import PX_PER_BLOCK, PX_PER_WORD, lazy_height_px
from publish.markdown import render_markdown
from publish.markdown.code import CODE_BACKGROUNDS, contrast, pygments_css, readable
from publish.optimize import ESBUILD, optimize
from publish.serve import IMMUTABLE, cache_control, serve_site

ROOT = Path(__file__).resolve().parents[2]
needs_esbuild = pytest.mark.skipif(not (ROOT / ESBUILD).is_file(), reason="esbuild is installed by make setup")

PAGE = """<!doctype html><html><head>
<link rel="stylesheet" href="static/style.css" data-inline>
<script src="static/app.js" defer></script>
<script type="module" src="static/interactive/client.js"></script>
<style>@font-face{src:url("static/fonts/f.woff2")}</style>
</head><body data-pyodide="pyodide/1.0/pyodide.mjs" data-wheel="wheels/core/t-1-py3-none-any.whl"
data-worker="static/interactive/worker.mjs">
<img src="figures/one/one.webp" width="2" height="1" alt="">
<p>Text that names static/app.js is left alone.</p>
</body></html>"""


def staged_site(tmp: Path) -> Path:
    site = tmp / "site"
    files = {
        "index.html": PAGE,
        "static/style.css": "body {  color : red ;  }\n",
        "static/app.js": "function twice(value) { return value * 2; }\n"
                         + "".join(f"console.log(twice({k}), 'a line the compressor folds');\n" for k in range(40)),
        "static/interactive/client.js": 'import { helper } from "./helper.js";\nhelper();\n',
        "static/interactive/helper.js": "export function helper() { return 1 + 1; }\n",
        "static/interactive/worker.mjs": "self.onmessage = (event) => { self.postMessage(event.data); };\n",
        "static/fonts/f.woff2": "not really a font",
        "figures/one/one.webp": bytes(range(256)),
        "pyodide/1.0/pyodide.mjs": "export const x = 1;\n" * 50,
        "pyodide/1.0/pyodide.asm.wasm": b"\0asm" + b"\1" * 5000,
        "wheels/core/t-1-py3-none-any.whl": b"PK" + bytes(range(256)),
    }
    for rel, data in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return site


def short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:10]


@needs_esbuild
def test_every_reference_is_versioned_and_points_at_a_file(tmp_path):
    site = staged_site(tmp_path)
    manifest = optimize(site, ROOT, tmp_path / "compressed")["manifest"]
    html = (site / "index.html").read_text()
    refs = re.findall(r'(?:src|href|data-pyodide|data-wheel|data-worker)="([^"]+)"|url\("([^"]+)"\)', html)
    refs = [a or b for a, b in refs]
    assert len(refs) == 7
    for ref in refs:
        assert (site / ref).is_file(), ref
        assert re.search(r"\.[0-9a-f]{10}(/|\.[^/]+$)", ref), ref
    # a loose file: name.HASH.ext, the hash of what is served (minified)
    app = next((site / "static").glob("app.*.js"))
    assert app.name == f"app.{short_hash(app.read_bytes())}.js"
    assert "twice(value)" not in app.read_text(), "minified"
    # folders keep their file names, so relative imports still resolve
    client = next((site / "static").glob("interactive.*/client.js"))
    assert (client.parent / "helper.js").is_file() and (client.parent / "worker.mjs").is_file()
    assert manifest["pyodide/1.0/"].startswith("pyodide/1.0.") and manifest["figures/one/"].startswith("figures/one.")
    # the data-inline stylesheet is in the page, minified; prose is not rewritten
    assert "<style>body{color:red}</style>" in html
    assert "names static/app.js is left alone" in html


@needs_esbuild
def test_a_changed_file_changes_its_folders_name_and_nothing_else(tmp_path):
    first = staged_site(tmp_path / "a")
    one = optimize(first, ROOT, tmp_path / "compressed")["manifest"]
    second = staged_site(tmp_path / "b")
    (second / "static" / "interactive" / "helper.js").write_text("export function helper() { return 3; }\n")
    two = optimize(second, ROOT, tmp_path / "compressed")["manifest"]
    changed = sorted(k for k in one if one[k] != two[k])
    assert changed == ["static/interactive/"]


@needs_esbuild
def test_text_is_precompressed_beside_itself_and_served_with_its_headers(tmp_path):
    site = staged_site(tmp_path)
    optimize(site, ROOT, tmp_path / "compressed")
    app = next((site / "static").glob("app.*.js"))
    assert brotli.decompress(Path(f"{app}.br").read_bytes()) == app.read_bytes()
    assert gzip.decompress(Path(f"{app}.gz").read_bytes()) == app.read_bytes()
    wasm = next(site.glob("pyodide/*/pyodide.asm.wasm"))
    assert Path(f"{wasm}.br").is_file()
    webp = next(site.glob("figures/*/one.webp"))
    assert not Path(f"{webp}.br").exists(), "images are not compressed again"

    server = serve_site(site)
    try:
        base = f"http://127.0.0.1:{server.server_port}/"

        def get(rel, encoding):
            request = urllib.request.Request(base + rel, headers={"Accept-Encoding": encoding} if encoding else {})
            with urllib.request.urlopen(request) as response:
                return response.headers, response.read()

        rel = app.relative_to(site).as_posix()
        headers, body = get(rel, "gzip, deflate, br")
        assert headers["Content-Encoding"] == "br" and brotli.decompress(body) == app.read_bytes()
        assert headers["Cache-Control"] == IMMUTABLE and headers["Content-Type"].startswith("text/javascript")
        headers, body = get(rel, "gzip")
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == app.read_bytes()
        headers, body = get(rel, None)
        assert headers["Content-Encoding"] is None and body == app.read_bytes()
        headers, body = get("", "br")
        assert headers["Cache-Control"] == "no-cache" and brotli.decompress(body).startswith(b"<!doctype html>")
    finally:
        server.shutdown()


def test_cache_control_follows_the_hash_in_the_name():
    assert cache_control("/static/style.0123456789.css") == IMMUTABLE
    assert cache_control("/pyodide/314.0.7.abcdef0123/pyodide.asm.wasm") == IMMUTABLE
    assert cache_control("/") == "no-cache"
    assert cache_control("/index.html") == "no-cache"
    assert cache_control("/static/style.css") == "no-cache"


@needs_esbuild
def test_a_script_esbuild_cannot_read_fails_in_one_line_naming_it(tmp_path):
    site = staged_site(tmp_path)
    (site / "static" / "broken.js").write_text("var }\n")
    with pytest.raises(BuildError) as caught:
        optimize(site, ROOT, tmp_path / "compressed")
    message = str(caught.value)
    assert message.startswith("content/static/broken.js:1: esbuild cannot minify it:") and "\n" not in message


def test_math_text_holds_the_italic_forms_chromium_draws():
    page = ('<p>x</p><math><mi>x</mi><mo>=</mo><mi>h</mi><mi mathvariant="normal">d</mi>'
            '<mi>sin</mi><mn>2</mn><mi>&alpha;</mi></math>')
    chars = set(math_text(page))
    assert {"x", "=", "h", "d", "2", "s", "i", "n", "\u03b1"} <= chars
    assert "\U0001d465" in chars and "\u210e" in chars and "\U0001d6fc" in chars  # 𝑥, ℎ, 𝛼
    assert "\U0001d451" not in chars, "mathvariant=normal stays upright"
    assert math_text("<p>no math</p>") == ""


@pytest.mark.skipif(not (ROOT / MATH_FONT).is_file(), reason="the math font comes with make setup")
def test_the_math_font_is_cut_to_the_page_and_keeps_its_math_table(tmp_path):
    from fontTools.ttLib import TTFont

    rel = subset_math_font(ROOT, tmp_path, "x=\U0001d465\u2211", tmp_path / "cache")
    font_file = tmp_path / rel
    whole = (ROOT / MATH_FONT).stat().st_size
    assert font_file.stat().st_size < whole / 10
    font = TTFont(font_file)
    cmap = font.getBestCmap()
    assert {ord(c) for c in "x=\U0001d465\u2211()[]\u221a"} <= set(cmap)
    assert ord("Q") not in cmap
    assert "MATH" in font, "stretchy brackets need the MATH table"


def test_a_lazy_chapter_reserves_its_words_and_blocks():
    html = "<p>" + "word " * 1000 + "</p><figure></figure><table></table><pre></pre>"
    assert lazy_height_px(html) == int(1000 * PX_PER_WORD + 3 * PX_PER_BLOCK)


def test_a_table_with_an_empty_corner_gets_row_headers():
    html = render_markdown("|  | Prefill | Decode |\n|---|---|---|\n| Tokens | all | one |\n| Bound | compute | memory |\n")
    assert '<td class="table-corner"></td>' in html
    assert html.count('<th scope="col">') == 2
    assert '<th scope="row" class="row-name">Tokens</th>' in html and '<th scope="row" class="row-name">Bound</th>' in html
    plain = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "scope=" not in plain and "<td>1</td>" in plain


def test_code_colours_read_at_four_and_a_half_to_one():
    assert readable("#123456", "#ffffff") == "#123456", "already readable: unchanged"
    for color in ("#3d7b7b", "#75715e", "#aaaaaa", "#ff0000"):
        for background in CODE_BACKGROUNDS.values():
            assert contrast(readable(color, background), background) >= 4.5, (color, background)
    css = pygments_css()
    light, _, dark = css.partition("@media screen")
    for part, background in ((light, CODE_BACKGROUNDS["light"]), (dark, CODE_BACKGROUNDS["dark"])):
        colors = re.findall(r"(?<![-\w])color: (#[0-9a-fA-F]{6})\b", part)
        assert len(colors) > 20
        assert [c for c in colors if contrast(c, background) < 4.5] == []
