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
    return f'<div class="code-block"{lang_attr}><pre class="highlight" tabindex="0"><code>{code}</code></pre></div>\n'


def code_plugin(md) -> None:
    md.add_render_rule("fence", _render_fence)


# The page's code backgrounds (content/static/style.css, --code-bg: light, then dark):
# every highlighting colour is made to read at WCAG AA (4.5:1) against its own.
CODE_BACKGROUNDS = {"light": "#f4f4f1", "dark": "#202126"}
MIN_CONTRAST = 4.5


def _luminance(hex_color: str) -> float:
    rgb = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(color: str, background: str, ratio: float = MIN_CONTRAST) -> str:
    """`color` (#rgb or #rrggbb), darkened on a light background or lightened on a dark
    one, in small steps of lightness (same hue), until it reads at `ratio`."""
    import colorsys

    if len(color) == 4:
        color = "#" + "".join(c * 2 for c in color[1:])
    color = color.lower()
    hue, light, sat = colorsys.rgb_to_hls(*(int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)))
    step = -0.01 if _luminance(background) > 0.18 else 0.01
    while contrast(color, background) < ratio and 0 <= light <= 1:
        light = min(1.0, max(0.0, light + step))
        color = "#" + "".join(f"{round(c * 255):02x}" for c in colorsys.hls_to_rgb(hue, light, sat))
        if light in (0.0, 1.0):
            break
    return color


def _readable_css(css: str, background: str) -> str:
    return re.sub(r"(?<![-\w])color: (#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3})\b",
                  lambda m: f"color: {readable(m.group(1), background)}", css)


def pygments_css() -> str:
    """Highlighting colours: light, dark (the toggle) and dark (the system's, unless the
    reader chose light), each readable against its code background (CODE_BACKGROUNDS)."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark_sel = ':root[data-theme="dark"] .highlight'
    dark = HtmlFormatter(style="monokai").get_style_defs(dark_sel)
    system_dark = HtmlFormatter(style="monokai").get_style_defs(':root:not([data-theme="light"]) .highlight')
    strip_bg = re.compile(r"^.*\{ background: [^}]*\}\s*$", re.M)  # the page sets code backgrounds
    light, dark, system_dark = (strip_bg.sub("", css) for css in (light, dark, system_dark))
    light = _readable_css(light, CODE_BACKGROUNDS["light"])
    dark, system_dark = (_readable_css(css, CODE_BACKGROUNDS["dark"]) for css in (dark, system_dark))
    # dark colours on screens only: print uses the light ones
    return (f"{light}\n@media screen {{\n{dark}\n}}\n"
            f"@media screen and (prefers-color-scheme: dark) {{\n{system_dark}\n}}\n")
