"""Markdown for the article: markdown-it-py + mdit-py-plugins, rendered at build time.

What a chapter (content/NN-name.md) may use, beyond CommonMark (each rule set is one
module here with a `<name>_plugin(md)`, in mdit-py-plugins' manner, and a fixture file
tests/fixtures/markdown/<name>.md):

    ---                               front matter (front_matter.py), `key: value` lines;
    article_title: Transformers ...   for the page (first chapter that sets them):
    ---                               article_title, subtitle, description
    {{ n.decode_tok_s | fixed(1) }}   numbers (Jinja runs first: publish/chapters.py)
    Some claim.[^src]                 footnote -> sidenote (sidenotes.py): margin on wide
    [^src]: Spec sheet, p. 3.         screens, tap-to-open inline on phones, no JavaScript
    $\frac{a}{b}$ and $$...$$         math -> MathML Core (math.py, math-core)
    | a | b |                         tables (tables.py)
    ::: figure balance-point          a numbered figure (figures.py): <figure id=
    Caption: domain, model, machine.  "fig-balance-point">; the caption is the text;
    :::                               without figures/balance_point.py, a placeholder
    ::: figure phases                 a figure drawn in Markdown (a table, code, tabs):
    | ... table ... |                 no module; the last paragraph is the caption
    Caption.
    :::
    far past the balance point{?x}    a claim (claims.py): prints nothing; the build checks
                                      condition x of article/claims/ and stops if it is false
    see [](#fig-balance-point)        -> "Figure 16" (references.py, across chapters);
    see [](#some-heading)             -> the heading's text
    ::: aside                         a boxed aside (containers.py)
    :::: tabs                         tabs (containers.py)
    ::: tab Speculative decoding
    :::
    ::::
    ```python                         highlighted by Pygments (code.py)
    ```
    20.1 % and 128 GB/s               a number and its unit on one line (units.py)

Headings get ids and a "#" permalink (anchors.py). Errors name the chapter file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from .anchors import anchors_plugin, slugify
from .claims import check_claims, claims_plugin
from .code import code_plugin, pygments_css
from .containers import containers_plugin
from .figures import figures_plugin, number_figures
from .front_matter import front_matter_plugin
from .math import math_plugin
from .references import resolve_references
from .sidenotes import sidenotes_plugin
from .state import Article
from .tables import tables_plugin
from .units import units_plugin

__all__ = ["Article", "check_claims", "make_markdown", "pygments_css", "render_chapters", "render_markdown", "slugify"]


def make_markdown() -> MarkdownIt:
    """The article's parser: CommonMark with typography, and every rule set of this package."""
    md = MarkdownIt("commonmark", {"typographer": True})
    md.enable(["strikethrough", "replacements", "smartquotes"])
    for plugin in (tables_plugin, front_matter_plugin, sidenotes_plugin, math_plugin, figures_plugin,
                   containers_plugin, anchors_plugin, code_plugin, claims_plugin, units_plugin):
        md.use(plugin)
    return md


def render_chapters(chapters: list[tuple[str, str]], article: Article) -> list[dict]:
    """Parse every chapter, resolve cross-references, render each to HTML.

    chapters: (shown file name, Markdown after Jinja) in reading order.
    Returns one dict per chapter: file, id, html.
    """
    from math_core import LatexToMathML
    converter = LatexToMathML(fancy_error=False)
    md = make_markdown()
    number_figures(chapters, article)
    article.shift_headings = any(re.search(r"^# ", text, re.M) for _, text in chapters)
    parsed = []
    for shown, text in chapters:
        env = {"file": shown, "article": article, "math": converter}
        parsed.append((shown, env, md.parse(text, env)))
    out = []
    for shown, env, tokens in parsed:
        resolve_references(tokens, env, article)
        out.append({"file": shown, "id": "ch-" + slugify(Path(shown).stem),
                    "html": md.renderer.render(tokens, md.options, env)})
    return out


def render_markdown(text: str, figures: dict | None = None, file: str = "chapter.md") -> str:
    """One chapter alone, as the build renders it (the fixture tests use this)."""
    return render_chapters([(file, text)], Article(figures=dict(figures or {})))[0]["html"]
