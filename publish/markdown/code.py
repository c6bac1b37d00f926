"""Fenced code highlighted by Pygments at build time (a copy button is added by
JavaScript when it runs), and the colours: light, dark and the system's dark."""

from __future__ import annotations

import html
import re

from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound


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


def code_plugin(md) -> None:
    md.add_render_rule("fence", _render_fence)


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
