"""Numbered figures: `::: figure ID` ... `:::`.

With a module figures/ID.py (the registry's figures, env["article"].figures) the body is
its drawing and the container's text the caption; without one, either a placeholder or,
when the container holds more than paragraphs (a table, code, tabs), a figure drawn in
Markdown whose last paragraph is the caption. Figures are numbered in order of appearance
across all chapters before parsing (number_figures), so a reference may come first.
"""

from __future__ import annotations

import html
import re

from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

from ..errors import BuildError
from ..registry import drop_repeated_styles

FIGURE_OPEN = re.compile(r"^ {0,3}:{3,}\s*figure\s+(\S+)", re.M)


def number_figures(chapters: list[tuple[str, str]], article) -> None:
    """Number the figures in order of appearance across all chapters (before parsing,
    so a reference may come before its figure)."""
    for shown, text in chapters:
        for match in FIGURE_OPEN.finditer(text):
            fig_id = match.group(1)
            if fig_id in article.figure_numbers:
                line = text[:match.start()].count("\n") + 1
                raise BuildError(f"{shown}:{line}: figure {fig_id!r} appears twice in the article")
            article.figure_numbers[fig_id] = len(article.figure_numbers) + 1


def figure_tools(fig_id: str, number: int, extras: str = "") -> str:
    """The row between a figure's drawing and its caption (the caption stays the figure's
    last child): a link to the figure, which content/static/article.js also copies, and the
    figure's disclosures (registry.extras_html)."""
    link = (f'<a class="figure-link" href="#fig-{html.escape(fig_id)}" aria-label="Link to Figure {number}">'
            '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path d="M6.5 9.5l3-3M7 4.5l1.2-1.2a2.5 2.5 0 0 1 3.5 3.5'
            'L10.5 8M9 11.5l-1.2 1.2a2.5 2.5 0 0 1-3.5-3.5L5.5 8" fill="none" stroke="currentColor" stroke-width="1.5" '
            'stroke-linecap="round"/></svg>Link</a>')
    return f'<div class="figure-tools">{link}{extras}</div>\n'


def _core_figure_bodies(state) -> None:
    """A figure without a module may carry its body in Markdown (a code block, a table,
    tabs: FIGURES.md kinds C and T): then the container's last paragraph is the caption
    and everything before it is the figure. Only paragraphs: they are the caption, and the
    figure is a placeholder until its module exists."""
    article = state.env["article"]
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
                fig_id = token.info.split()[1]
                marker.content = "</div>\n" + figure_tools(fig_id, article.figure_numbers[fig_id]) + "<figcaption>"
                marker.meta["caption_start"] = True
                out.extend(tokens[i + 1:split])
                out.append(marker)
                out.extend(tokens[split:end])
                i = end
                continue
        i += 1
    state.tokens = out


def _core_captions(state) -> None:
    """"Figure N." at the start of each figure's caption."""
    article = state.env["article"]
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if token.type != "container_figure_open":
            continue
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


def _render_figure(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.nesting == -1:
        return "</figcaption>\n</figure>\n"
    article = env["article"]
    fig_id = token.info.split()[1]
    number = article.figure_numbers[fig_id]
    extras = ""
    if fig_id in article.figures:
        # the alt text is on the image; the caption names the figure
        body, _alt, *more = article.figures[fig_id]
        extras = more[0] if more else ""
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
    # a wide drawing scrolls sideways on a phone (style.css): its box is reachable by keyboard
    focus = ' tabindex="0"' if re.match(r'\s*<svg\b[^>]*\bclass="[^"]*\bwide\b', body) else ""
    return (f'<figure id="fig-{html.escape(fig_id)}" class="{classes}" data-figure="{html.escape(fig_id)}"{attrs}>\n'
            f'<div class="figure-body"{focus}>{body}</div>\n{figure_tools(fig_id, number, extras)}<figcaption>')


def figures_plugin(md) -> None:
    container_plugin(md, "figure", validate=lambda params, *a: bool(re.fullmatch(r"\s*figure\s+\S+\s*", params)),
                     render=_render_figure)
    md.core.ruler.push("figure_bodies", _core_figure_bodies)
    md.core.ruler.push("figure_captions", _core_captions)
