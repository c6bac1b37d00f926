"""Cross-references: `[](#fig-ID)` -> "Figure N"; `[](#some-heading)` -> the heading's text.

Not a rule of the parser: a reference may point into a later chapter, so it is resolved
after every chapter is parsed (render_chapters calls resolve_references between parsing
and rendering). Any link to #fig-ID must name a figure of the article; an empty link must
name a figure or a heading.
"""

from __future__ import annotations

from markdown_it.token import Token

from .state import token_error


def resolve_references(tokens: list[Token], env, article) -> None:
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
                        raise token_error(env, block, f"reference to figure {fig_id!r}, which is not in the article")
                    text = f"Figure {article.figure_numbers[fig_id]}"
                elif target in article.slugs:
                    text = article.slugs[target]
                elif empty:
                    raise token_error(env, block, f"empty link to #{target}: no figure or heading has that id")
                else:
                    text = None
                if empty and text:
                    filler = Token("text", "", 0)
                    filler.content = text
                    children.insert(i + 1, filler)
                    child.attrJoin("class", "xref")
            i += 1
