"""Markdown for the article: markdown-it-py + mdit-py-plugins, rendered at build time.

What a chapter (content/NN-name.md) may use, beyond CommonMark:

    ---                               front matter, `key: value` lines; for the page
    article_title: Transformers ...   (first chapter that sets them): article_title,
    ---                               subtitle, description
    {{ n.decode_tok_s | fixed(1) }}   numbers (Jinja runs first; {% raw %} for literal {{ )
    Some claim.[^src]                 footnote -> sidenote: margin on wide screens,
    [^src]: Spec sheet, p. 3.         tap-to-open inline on phones, no JavaScript
    $\frac{a}{b}$ and $$...$$         math -> MathML Core (math-core) at build time
    | a | b |                         tables
    ::: figure balance-point          a numbered figure: <figure id="fig-balance-point">;
    Caption: domain, model, machine.  the caption is the container's text; with no
    :::                               figures/balance_point.py, a placeholder
    ::: figure phases                 a figure drawn in Markdown (a table, code, tabs):
    | ... table ... |                 no module; the last paragraph is the caption
    Caption.
    :::
    see [](#fig-balance-point)        -> "Figure 16" (an empty link to a figure);
    see [](#some-heading)             -> the heading's text
    ::: aside                         a boxed aside
    :::: tabs                         tabs (outer marker longer than the panes');
    ::: tab Speculative decoding      without JavaScript the panes are shown one
    :::                               after the other under their labels
    ::::
    ```python                         highlighted by Pygments; a copy button is added
    ```                               by JavaScript when it runs

Headings get ids (slugs, unique across the article) and a "#" permalink. When chapters
start with "# Chapter", every heading moves one level down (the page's <h1> is the
article's title) and the chapters and their sections make the table of contents. Errors name the chapter file and the line.
"""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

from . import BuildError
from .registry import drop_repeated_styles

FIGURE_OPEN = re.compile(r"^ {0,3}:{3,}\s*figure\s+(\S+)", re.M)


@dataclasses.dataclass
class Article:
    """What rendering the chapters needs to share: figures, numbers, slugs."""
    figures: dict  # id -> (html, alt) of the registry's figures
    figure_numbers: dict = dataclasses.field(default_factory=dict)  # id -> 1, 2, ...
    slugs: dict = dataclasses.field(default_factory=dict)  # heading id -> heading text
    headings: list = dataclasses.field(default_factory=list)  # (level, text, id)
    meta: dict = dataclasses.field(default_factory=dict)  # front matter, first wins
    shift_headings: bool = False  # True when a chapter uses "# ": every heading goes one level down
    sidenotes: int = 0
    placeholders: list = dataclasses.field(default_factory=list)
    styles: set = dataclasses.field(default_factory=set)  # <style> blocks already on the page


def number_figures(chapters: list[tuple[str, str]], article: Article) -> None:
    """Number the figures in order of appearance across all chapters (before parsing,
    so a reference may come before its figure)."""
    for shown, text in chapters:
        for match in FIGURE_OPEN.finditer(text):
            fig_id = match.group(1)
            if fig_id in article.figure_numbers:
                line = text[:match.start()].count("\n") + 1
                raise BuildError(f"{shown}:{line}: figure {fig_id!r} appears twice in the article")
            article.figure_numbers[fig_id] = len(article.figure_numbers) + 1


def _err(env, token: Token | None, message: str) -> BuildError:
    line = f":{token.map[0] + 1}" if token is not None and token.map else ""
    return BuildError(f"{env['file']}{line}: {message}")


def slugify(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


# --- core rules: run after inline parsing, with the block token (and line) at hand ---

def _core_sidenotes(state) -> None:
    """Lift the footnote block that footnote_tail appends into env, keyed by note id."""
    notes = state.env.setdefault("sidenote_tokens", {})
    kept, current, inside = [], None, False
    for token in state.tokens:
        if token.type == "footnote_block_open":
            inside = True
        elif token.type == "footnote_block_close":
            inside = False
        elif inside and token.type == "footnote_open":
            current = notes.setdefault(token.meta["id"], [])
        elif inside and token.type not in ("footnote_close", "footnote_anchor"):
            current.append(token)
        elif not inside:
            kept.append(token)
    state.tokens = kept


def _core_resolve(state) -> None:
    """Math to MathML, heading ids, figure numbers in captions; errors name the line."""
    env = state.env
    article: Article = env["article"]
    converter = env["math"]
    tokens = state.tokens
    for note in env.get("sidenote_tokens", {}).values():  # lifted out of the stream
        for token in note:
            for child in token.children or []:
                if child.type in ("math_inline", "math_inline_double"):
                    child.meta["html"] = _math(converter, child.content, False, env, token)
    for i, token in enumerate(tokens):
        if token.type == "front_matter":
            for line in token.content.splitlines():
                key, sep, value = line.partition(":")
                if sep and key.strip() and key.strip() not in article.meta:
                    article.meta[key.strip()] = value.strip().strip('"')
        elif token.type in ("math_block", "math_block_label"):
            token.meta["html"] = _math(converter, token.content, True, env, token)
        elif token.type == "inline":
            for child in token.children or []:
                if child.type in ("math_inline", "math_inline_double"):
                    child.meta["html"] = _math(converter, child.content, child.type == "math_inline_double", env, token)
        elif token.type == "heading_open":
            if article.shift_headings:  # chapters start at "# ": the page's <h1> is the title
                level = min(int(token.tag[1]) + 1, 6)
                token.tag = f"h{level}"
                next(t for t in tokens[i + 2:] if t.type == "heading_close").tag = token.tag
            inline = tokens[i + 1]
            text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline", "math_inline"))
            slug = base = slugify(text)
            k = 2
            while slug in article.slugs or slug.startswith("fig-"):
                slug, k = f"{base}-{k}", k + 1
            article.slugs[slug] = text
            token.attrSet("id", slug)
            closing = next(t for t in tokens[i + 2:] if t.type == "heading_close")
            closing.meta["slug"] = slug
            level = int(token.tag[1])
            if level in (2, 3):
                article.headings.append((level, text, slug))
        elif token.type == "container_figure_open":
            fig_id = token.info.split()[1]
            caption = next((t for t in tokens[i + 1:] if t.type in ("inline", "container_figure_close")
                            and (t.type == "inline" or t.level == token.level)), None)
            if token.meta.get("markdown_body"):  # the caption starts after the body
                start = next(k for k in range(i, len(tokens)) if tokens[k].meta.get("caption_start"))
                caption = next((t for t in tokens[start:] if t.type in ("inline", "container_figure_close")), None)
            if caption is not None and caption.type == "inline":
                label = Token("html_inline", "", 0)
                label.content = f'<span class="figure-number">Figure {article.figure_numbers[fig_id]}.</span> '
                caption.children.insert(0, label)


def _core_figure_bodies(state) -> None:
    """A figure without a module may carry its body in Markdown (a code block, a table,
    tabs: FIGURES.md kinds C and T): then the container's last paragraph is the caption
    and everything before it is the figure. Only paragraphs: they are the caption, and the
    figure is a placeholder until its module exists."""
    article: Article = state.env["article"]
    tokens = state.tokens
    out = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        out.append(token)
        if token.type == "container_figure_open" and token.info.split()[1] not in article.figures:
            end = next(k for k in range(i + 1, len(tokens))
                       if tokens[k].type == "container_figure_close" and tokens[k].level == token.level)
            children = [k for k in range(i + 1, end) if tokens[k].level == token.level + 1 and tokens[k].nesting >= 0]
            if any(tokens[k].type != "paragraph_open" for k in children):
                token.meta["markdown_body"] = True
                paragraphs = [k for k in children if tokens[k].type == "paragraph_open"]
                split = paragraphs[-1] if paragraphs and paragraphs[-1] > max(
                    k for k in children if tokens[k].type != "paragraph_open") else end
                marker = Token("html_block", "", 0)
                marker.content = "</div>\n<figcaption>"
                marker.meta["caption_start"] = True
                out.extend(tokens[i + 1:split])
                out.append(marker)
                out.extend(tokens[split:end])
                i = end
                continue
        i += 1
    state.tokens = out


def _math(converter, latex: str, display: bool, env, token) -> str:
    from math_core import LatexError
    try:
        mathml = converter.convert_with_local_state(latex, displaystyle=display)
    except LatexError as exc:
        raise _err(env, token, f"math ${latex.strip()[:40]}$: {str(exc).splitlines()[0]}") from exc
    return f'<div class="math-display">{mathml}</div>' if display else mathml


def resolve_references(tokens: list[Token], env, article: Article) -> None:
    """Empty links to #fig-ID become "Figure N"; empty links to a heading, its text.
    Any link to #fig-ID must name a figure of the article."""
    for block in tokens:
        if block.type != "inline":
            continue
        children = block.children or []
        i = 0
        while i < len(children):
            child = children[i]
            href = child.attrGet("href") if child.type == "link_open" else None
            if href and href.startswith("#"):
                target = href[1:]
                empty = i + 1 < len(children) and children[i + 1].type == "link_close"
                if target.startswith("fig-"):
                    fig_id = target[4:]
                    if fig_id not in article.figure_numbers:
                        raise _err(env, block, f"reference to figure {fig_id!r}, which is not in the article")
                    text = f"Figure {article.figure_numbers[fig_id]}"
                elif target in article.slugs:
                    text = article.slugs[target]
                elif empty:
                    raise _err(env, block, f"empty link to #{target}: no figure or heading has that id")
                else:
                    text = None
                if empty and text:
                    filler = Token("text", "", 0)
                    filler.content = text
                    children.insert(i + 1, filler)
                    child.attrJoin("class", "xref")
            i += 1


# --- render rules ---

def _render_footnote_ref(self, tokens, idx, options, env):
    article: Article = env["article"]
    article.sidenotes += 1
    number = article.sidenotes
    body = env.get("sidenote_tokens", {}).get(tokens[idx].meta["id"], [])
    inner = "<br>".join(self.renderInline(t.children, options, env) for t in body if t.type == "inline")
    note_id = f"sn-{number}"
    return (f'<label for="{note_id}" class="sidenote-ref" aria-label="Note {number}">{number}</label>'
            f'<input type="checkbox" id="{note_id}" class="margin-toggle">'
            f'<span class="sidenote"><span class="sidenote-number">{number}</span> {inner}</span>')


def _render_heading_close(self, tokens, idx, options, env):
    slug = tokens[idx].meta.get("slug")
    anchor = f'<a class="heading-anchor" href="#{slug}" aria-label="Link to this section">#</a>' if slug else ""
    return f"{anchor}</{tokens[idx].tag}>\n"


def _render_figure(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.nesting == -1:
        return "</figcaption>\n</figure>\n"
    article: Article = env["article"]
    fig_id = token.info.split()[1]
    number = article.figure_numbers[fig_id]
    if fig_id in article.figures:
        body, _alt = article.figures[fig_id]  # the alt text is on the image; the caption names the figure
        body = drop_repeated_styles(body, article.styles)  # in page order: the first copy stays
        classes, attrs = "figure", ""
    elif token.meta.get("markdown_body"):  # the body follows in Markdown; see _core_figure_bodies
        return (f'<figure id="fig-{html.escape(fig_id)}" class="figure" data-figure="{html.escape(fig_id)}">\n'
                '<div class="figure-body">\n')
    else:
        article.placeholders.append(fig_id)
        body = (f'<div class="figure-placeholder" data-figure="{html.escape(fig_id)}">'
                f'Figure {number} ({html.escape(fig_id)}) is not drawn yet.</div>')
        classes, attrs = "figure is-placeholder", ""
    return (f'<figure id="fig-{html.escape(fig_id)}" class="{classes}" data-figure="{html.escape(fig_id)}"{attrs}>\n'
            f'<div class="figure-body">{body}</div>\n<figcaption>')


def _render_aside(self, tokens, idx, options, env):
    return '<aside class="aside">\n' if tokens[idx].nesting == 1 else "</aside>\n"


def _render_tabs(self, tokens, idx, options, env):
    return '<div class="tabs">\n' if tokens[idx].nesting == 1 else "</div>\n"


def _render_tab(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.nesting == -1:
        return "</section>\n"
    label = html.escape(token.info.strip()[3:].strip() or "Tab")
    return f'<section class="tab-pane" data-label="{label}">\n<h4 class="tab-label">{label}</h4>\n'


def _render_fence(self, tokens, idx, options, env):
    token = tokens[idx]
    lang = token.info.strip().split(" ")[0] if token.info else ""
    try:
        lexer = get_lexer_by_name(lang) if lang else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    code = pygments_highlight(token.content, lexer, HtmlFormatter(nowrap=True))
    lang_attr = f' data-lang="{html.escape(lang)}"' if lang else ""
    return f'<div class="code-block"{lang_attr}><pre class="highlight"><code>{code}</code></pre></div>\n'


def _render_table_open(self, tokens, idx, options, env):
    return '<div class="table-wrap"><table>\n'


def _render_table_close(self, tokens, idx, options, env):
    return "</table></div>\n"


def _render_math(self, tokens, idx, options, env):
    return tokens[idx].meta["html"]


def make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"typographer": True})
    md.enable(["table", "strikethrough", "replacements", "smartquotes"])
    front_matter_plugin(md)
    footnote_plugin(md)
    dollarmath_plugin(md, allow_space=True, allow_digits=False, double_inline=True)
    container_plugin(md, "figure", validate=lambda params, *a: bool(re.fullmatch(r"\s*figure\s+\S+\s*", params)),
                     render=_render_figure)
    container_plugin(md, "aside", render=_render_aside)
    container_plugin(md, "tabs", render=_render_tabs)
    container_plugin(md, "tab", render=_render_tab)
    md.core.ruler.after("footnote_tail", "sidenotes", _core_sidenotes)
    md.core.ruler.push("figure_bodies", _core_figure_bodies)
    md.core.ruler.push("resolve", _core_resolve)
    for name in ("math_inline", "math_inline_double", "math_block", "math_block_label"):
        md.add_render_rule(name, _render_math)
    md.add_render_rule("footnote_ref", _render_footnote_ref)
    md.add_render_rule("heading_close", _render_heading_close)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("table_close", _render_table_close)
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


def pygments_css() -> str:
    """Highlighting colours: light, dark (the toggle) and dark (the system's, unless the
    reader chose light)."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark_sel = ':root[data-theme="dark"] .highlight'
    dark = HtmlFormatter(style="monokai").get_style_defs(dark_sel)
    system_dark = HtmlFormatter(style="monokai").get_style_defs(':root:not([data-theme="light"]) .highlight')
    strip_bg = re.compile(r"^.*\{ background: [^}]*\}\s*$", re.M)  # the page sets code backgrounds
    light, dark, system_dark = (strip_bg.sub("", css) for css in (light, dark, system_dark))
    # dark colours on screens only: print uses the light ones
    return (f"{light}\n@media screen {{\n{dark}\n}}\n"
            f"@media screen and (prefers-color-scheme: dark) {{\n{system_dark}\n}}\n")
