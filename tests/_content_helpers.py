"""Shared helpers of the content tests: the chapters, rendered with the namespace `n`."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"
DRAFT = ROOT.parent / "shared" / "reference" / "article-notes.txt"


def chapter_files() -> list[Path]:
    """content/NN-*.md in order (the files build.py renders)."""
    return [p for p in sorted(CONTENT.glob("*.md")) if not p.name.startswith("_") and p.name != "README.md"]


def request_files() -> list[Path]:
    """The request the article follows (system prompt, history, question)."""
    folder = CONTENT / "request"
    return [folder / name for name in ("system-prompt.txt", "patient-history.md", "question.txt")]


def jinja_env():
    import jinja2

    from publish.filters import FILTERS

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(CONTENT)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    env.filters.update(FILTERS)
    return env


def render_chapters(numbers: dict) -> dict[str, str]:
    """file name -> the chapter's Markdown after Jinja, as build.py renders it."""
    env = jinja_env()
    return {p.name: env.get_template(p.name).render(n=numbers) for p in chapter_files()}


@lru_cache(maxsize=1)
def default_numbers() -> dict:
    from article.numbers import article_numbers

    return article_numbers()
