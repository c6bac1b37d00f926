"""Shared helpers of the content tests: the chapters, rendered with the namespace `n`,
by the build's own functions (publish.chapters), not a copy of them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from publish import chapters as build_chapters

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
DRAFT = ROOT.parent / "shared" / "reference" / "article-notes.txt"


def chapter_files() -> list[Path]:
    """content/NN-*.md in order (the files build.py renders)."""
    return build_chapters.chapter_files(CONTENT)


def request_files() -> list[Path]:
    """The request the article follows (system prompt, history, question)."""
    folder = CONTENT / "request"
    return [folder / name for name in ("system-prompt.txt", "patient-history.md", "question.txt")]


def jinja_env():
    """The Jinja environment the build renders the chapters in."""
    return build_chapters.chapter_environment(CONTENT)


def render_chapters(numbers: dict) -> dict[str, str]:
    """file name -> the chapter's Markdown after Jinja, as build.py renders it."""
    return {Path(shown).name: text for shown, text in build_chapters.render_sources(chapter_files(), numbers)}


@lru_cache(maxsize=1)
def default_numbers() -> dict:
    from article.numbers import article_numbers

    return article_numbers()


def reader_words(markdown: str) -> str:
    """A rendered chapter's words as the reader sees them: the quantities' spans
    (`<span data-q=...>74.9 s</span>`, article/numbers/quantities.py) reduced to their text,
    whitespace (no-break spaces too) to single spaces."""
    import re

    return " ".join(re.sub(r'<span data-q="[^"]*">([^<]*)</span>', r"\1", markdown).split())
