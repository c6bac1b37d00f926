"""Golden build: the fixture article (tests/fixtures/site) builds into a site with the
expected properties: numbers from the namespace, sidenotes, MathML, numbered figures and
references, a placeholder for a missing figure module, tabs, asides, highlighted code,
the Pyodide runtime and a wheel of the tokenwalk core."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from html.parser import HTMLParser

import pytest

from tests.support.build import FIXTURE, ROOT, build_fixture, copy_fixture


class Collect(HTMLParser):
    """Tags with their attributes, and ids, from the built page."""

    def __init__(self):
        super().__init__()
        self.tags, self.ids = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if "id" in attrs:
            self.ids.append(attrs["id"])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("golden")
    result = build_fixture(FIXTURE, tmp / "site", tmp / "cache")
    assert result.returncode == 0, result.stderr
    html = (tmp / "site" / "index.html").read_text(encoding="utf-8")
    parsed = Collect()
    parsed.feed(html)
    return tmp / "site", html, parsed, result.stdout


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).replace("\u00a0", " ")


def test_numbers_come_from_the_namespace_through_filters(built):
    _, html, _, _ = built
    numbers = json.loads((FIXTURE / "numbers.json").read_text())
    text = text_of(html)
    assert f"{numbers['model_size_bytes'] / 1e9:.1f} GB" in text  # | gb
    assert f"{numbers['prompt_tokens']:,} tokens" in text  # | comma
    assert f"{numbers['kv_bytes_per_token'] / 1e6:.2f} MB" in text  # | mb(2)
    assert f"{numbers['decode_tok_s']:.1f} tokens per second" in text  # | fixed(1)
    assert f"{numbers['bandwidth_share'] * 100:.0f} %" in text  # | pct
    assert "{{" not in html


def test_footnotes_become_sidenotes_with_checkbox_and_label(built):
    _, html, parsed, _ = built
    labels = [a for t, a in parsed.tags if t == "label" and "sidenote-ref" in a.get("class", "")]
    boxes = [a for t, a in parsed.tags if t == "input" and a.get("type") == "checkbox"]
    notes = re.findall(r'<span class="sidenote" id="(sn-\d+)-text">', html)
    # two footnotes in chapter 1 (one inline), one in chapter 2's aside
    assert len(labels) == len(boxes) == len(notes) == 3
    assert [a["for"] for a in labels] == [a["id"] for a in boxes] == notes == ["sn-1", "sn-2", "sn-3"]
    # the checkbox is what a keyboard reaches: named, and described by the note's own text
    assert [(a["aria-label"], a["aria-describedby"]) for a in boxes] == [
        (f"Note {i}", f"sn-{i}-text") for i in (1, 2, 3)]
    assert "footnotes" not in html and 'class="footnote' not in html  # no end-of-page list
    assert re.search(r'<span class="sidenote"[^>]*>.*?<math>', html), "math inside an inline note"


def test_math_renders_to_mathml_at_build_time(built):
    _, html, _, _ = built
    assert html.count('<math display="block">') == 1
    screen = re.sub(r'<div class="print-notes".*?</div>', "", html, flags=re.S)  # notes repeated for print
    inline = re.findall(r"<math>", screen)
    assert len(inline) == 2  # $t = \max(...)$ and the $x^2$ in a sidenote
    assert html.count("<math>") == 3  # the sidenote's once more, after its paragraph, for print
    assert "<mfrac>" in html and "<msqrt>" in html and "<mtext>tokens</mtext>" in html
    assert "$" not in text_of(html)
    assert "katex" not in html.lower() and "mathjax" not in html.lower()


def test_figures_are_numbered_and_referenced(built):
    site, html, parsed, _ = built
    figures = [a for t, a in parsed.tags if t == "figure"]
    assert [f["id"] for f in figures] == ["fig-demo-bars", "fig-demo-image", "fig-not-drawn",
                                          "fig-request-code", "fig-phases-table"]
    assert re.findall(r'class="figure-number">(Figure \d+)\.', html) == [f"Figure {i}" for i in range(1, 6)]
    refs = re.findall(r'<a href="#(fig-[a-z-]+)" class="xref">([^<]+)</a>', html)
    assert ("fig-demo-bars", "Figure 1") in refs and ("fig-demo-image", "Figure 2") in refs
    assert ("fig-not-drawn", "Figure 3") in refs
    assert '<a href="#fig-demo-image">the method</a>' in html  # text given: kept
    assert '<a href="#the-request" class="xref">The request</a>' in html  # heading reference
    img = next(a for t, a in parsed.tags if t == "img")
    # the figure's folder is versioned by content (publish/optimize.py): figures/ID.HASH/
    assert re.fullmatch(r"figures/demo-image\.[0-9a-f]{10}/square\.png", img["src"]), img["src"]
    assert (site / img["src"]).is_file() and img["alt"].startswith("A 16 x 16 pixel")


def test_missing_figure_module_gives_a_countable_placeholder(built):
    _, html, parsed, stdout = built
    placeholders = [a for t, a in parsed.tags if t == "div" and "figure-placeholder" in a.get("class", "")]
    assert [p["data-figure"] for p in placeholders] == ["not-drawn"]
    assert "placeholders for figures not drawn yet: not-drawn" in stdout


def test_figures_drawn_in_markdown_have_a_body_and_a_caption(built):
    """Kinds C and T of FIGURES.md: a code block or a table inside the figure container,
    the last paragraph as caption, no placeholder."""
    _, html, _, _ = built
    code = re.search(r'<figure id="fig-request-code".*?</figure>', html, re.S).group(0)
    body, caption = code.split("<figcaption>")
    assert '<div class="code-block" data-lang="python">' in body and "figure-placeholder" not in code
    assert "Figure 4.</span> A figure whose body is a code block" in caption
    table = re.search(r'<figure id="fig-phases-table".*?</figure>', html, re.S).group(0)
    body, caption = table.split("<figcaption>")
    assert "<table>" in body and "6,550" in body and "<table>" not in caption


def test_headings_anchors_toc_tabs_aside_code(built):
    _, html, parsed, _ = built
    assert len(parsed.ids) == len(set(parsed.ids)), "ids are unique"
    toc = re.search(r'<nav class="toc".*?</nav>', html, re.S).group(0)
    assert re.findall(r'href="#([a-z-]+)"', toc) == ["the-request", "code", "more"]
    assert '<a class="heading-anchor" href="#the-request"' in html
    assert re.findall(r'class="tab-pane" data-label="([^"]+)"', html) == ["Speculative decoding", "Prefix caching"]
    assert '<div class="aside" role="note">' in html
    assert '<div class="code-block" data-lang="python"><pre class="highlight" tabindex="0">' in html
    assert '<span class="k">def</span>' in html  # Pygments at build time
    assert '<div class="table-wrap" tabindex="0"><table>' in html


def test_page_meta_and_no_other_host(built):
    site, html, parsed, _ = built
    assert "<title>A fixture article</title>" in html
    assert '<meta name="description" content="The build&#39;s golden test input.">' in html
    assert '<meta property="og:title" content="A fixture article">' in html
    for tag, attrs in parsed.tags:
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not re.match(r"^(https?:)?//", value), f"<{tag} {name}={value}> points at another host"
    for path in (site / "static").glob("*.css"):
        assert not re.search(r"url\((['\"]?)(https?:)?//", path.read_text()), path
    assert "EventSource" not in html  # live reload only with --serve


def test_pyodide_runtime_and_core_wheel_are_in_the_site(built):
    site, html, _, _ = built
    version = json.loads((ROOT / "node_modules" / "pyodide" / "package.json").read_text())["version"]
    runtime = next((site / "pyodide").glob(f"{version}.*"))  # versioned by content: <version>.HASH/
    assert sorted(p.name for p in runtime.iterdir() if p.suffix not in (".br", ".gz")) == sorted(
        ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"])
    assert f'data-pyodide="pyodide/{runtime.name}/pyodide.mjs"' in html
    wheel = next((site / "wheels").glob("core.*/tokenwalk-*-py3-none-any.whl"))
    assert f'data-wheel="wheels/{wheel.parent.name}/{wheel.name}"' in html
    names = zipfile.ZipFile(wheel).namelist()
    assert "tokenwalk/__init__.py" in names and any(n.endswith(".dist-info/RECORD") for n in names)
    assert not [n for n in names if n.startswith(("tokenwalk/native/", "tokenwalk/cli/", "tokenwalk/timing/fit/"))]
    from tokenwalk import core_module_names
    core = {m.replace(".", "/") + ".py" for m in core_module_names(ROOT / "tokenwalk")}
    core |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "tokenwalk_app").glob("*.py")}  # the page's app
    core = {n[: -len("/__init__.py")] + ".py" if n.endswith("/__init__.py") else n for n in core}
    in_wheel = {n[: -len("/__init__.py")] + ".py" if n.endswith("/__init__.py") else n
                for n in names if n.endswith(".py")}
    assert in_wheel == core  # the core and the page's app, nothing of the article layer or the build
    assert not [n for n in names if n.startswith(("article/", "publish/", "figures/"))]


def test_core_wheel_imports_without_numpy(built):
    """The browser's wheel works as a zip on sys.path with numpy blocked (as in Pyodide)."""
    site, _, _, _ = built
    wheel = next((site / "wheels").glob("core.*/tokenwalk-*.whl"))
    from tokenwalk import core_module_names

    modules = core_module_names(ROOT / "tokenwalk")  # the core by its rule: tokenwalk minus its edge packages
    modules += ["tokenwalk_app.entry", "tokenwalk_app.view", "tokenwalk_app.quant_view"]  # the page's app
    assert "tokenwalk.gguf.header" in modules
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        f"sys.path.insert(0, {str(wheel)!r})\n"
        f"import importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
        "import tokenwalk; print(tokenwalk.__file__)"
    )
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd="/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(str(wheel))


def test_wheel_is_reproducible(tmp_path):
    """Same sources, same wheel bytes (fixed timestamps and order): no spurious changes."""
    from publish.assets import build_core_wheel
    first = build_core_wheel(ROOT, tmp_path / "a").read_bytes()
    assert build_core_wheel(ROOT, tmp_path / "b").read_bytes() == first


def test_build_with_no_chapters_gives_an_empty_shell(tmp_path):
    src = copy_fixture(tmp_path)
    for md in (src / "content").glob("*.md"):
        md.unlink()
    result = build_fixture(src, tmp_path / "site", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "no chapters in" in result.stdout
    assert "The chapters are being written." in (tmp_path / "site" / "index.html").read_text()
