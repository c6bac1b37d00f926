"""Front matter: `key: value` lines between `---` at the top of a chapter; the first
chapter that sets a key gives it to the page (article_title, subtitle, description)."""

from __future__ import annotations

from mdit_py_plugins.front_matter import front_matter_plugin as _mdit_front_matter


def _core_meta(state) -> None:
    meta = state.env["article"].meta
    for token in state.tokens:
        if token.type == "front_matter":
            for line in token.content.splitlines():
                key, sep, value = line.partition(":")
                if sep and key.strip() and key.strip() not in meta:
                    meta[key.strip()] = value.strip().strip('"')


def front_matter_plugin(md) -> None:
    _mdit_front_matter(md)
    md.core.ruler.push("article_meta", _core_meta)
