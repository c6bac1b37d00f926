"""What rendering the chapters shares across plugins and chapters (the env's "article")."""

from __future__ import annotations

import dataclasses

from markdown_it.token import Token

from ..errors import BuildError


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
    claims: list = dataclasses.field(default_factory=list)  # (chapter file, claim name) in page order


def token_error(env, token: Token | None, message: str) -> BuildError:
    """`chapter.md:line: message` for the Markdown source line of `token`."""
    line = f":{token.map[0] + 1}" if token is not None and token.map else ""
    return BuildError(f"{env['file']}{line}: {message}")
