"""Headings: ids (slugs, unique across the article), a "#" permalink, the table of
contents (levels 2 and 3), and, when chapters start with "# Chapter", every heading one
level down (the page's <h1> is the article's title)."""

from __future__ import annotations

import re
import unicodedata


def slugify(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _core_anchors(state) -> None:
    article = state.env["article"]
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        closing = next(t for t in tokens[i + 2:] if t.type == "heading_close")
        if article.shift_headings:  # chapters start at "# ": the page's <h1> is the title
            token.tag = closing.tag = f"h{min(int(token.tag[1]) + 1, 6)}"
        inline = tokens[i + 1]
        text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline", "math_inline"))
        slug = base = slugify(text)
        k = 2
        while slug in article.slugs or slug.startswith("fig-"):
            slug, k = f"{base}-{k}", k + 1
        article.slugs[slug] = text
        token.attrSet("id", slug)
        closing.meta["slug"] = slug
        level = int(token.tag[1])
        if level in (2, 3):
            article.headings.append((level, text, slug))


def _render_heading_close(self, tokens, idx, options, env):
    slug = tokens[idx].meta.get("slug")
    anchor = f'<a class="heading-anchor" href="#{slug}" aria-label="Link to this section">#</a>' if slug else ""
    return f"{anchor}</{tokens[idx].tag}>\n"


def anchors_plugin(md) -> None:
    md.core.ruler.push("anchors", _core_anchors)
    md.add_render_rule("heading_close", _render_heading_close)
