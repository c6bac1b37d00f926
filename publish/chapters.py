"""The chapters through Jinja, and the page template around them.

Each content/NN-name.md is a Jinja template first (with the namespace `n` and the number
filters; line numbers kept, so a Markdown error names the right line), then Markdown
(publish/markdown/). The page is content/templates/article.html; it names files by
their plain site paths, which publish/optimize.py versions afterwards. Failures are one line with the file and
line (publish.errors.location).
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import BuildError, fail, location, shown
from .filters import FILTERS

PROJECT = Path(__file__).resolve().parent.parent


def chapter_files(content: Path) -> list[Path]:
    """content/*.md in name order (01-..., 02-...), without README.md and _drafts."""
    return [p for p in sorted(Path(content).glob("*.md")) if not p.name.startswith("_") and p.name != "README.md"]


def jinja_cache() -> Path:
    """Compiled chapter templates (a long chapter takes ~0.1 s to compile)."""
    folder = PROJECT / ".cache" / "jinja"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chapter_environment(folder: Path, cache: bool = True):
    """The Jinja environment the chapters of `folder` render in."""
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False,
                             bytecode_cache=jinja2.FileSystemBytecodeCache(str(jinja_cache())) if cache else None)
    env.filters.update(FILTERS)
    return env


def _source_line(path: Path, line: int | None) -> str:
    try:
        return path.read_text(encoding="utf-8").splitlines()[line - 1] if line else ""
    except (OSError, IndexError):
        return ""


def render_sources(files: list[Path], numbers: dict, **extra) -> list[tuple[str, str]]:
    """Each chapter through Jinja with `n` and the number filters: (shown name, Markdown).
    `extra`: more variables for the chapters (`updates`, the dated record of publications)."""
    if not files:
        return []
    env = chapter_environment(files[0].parent)
    out = []
    for path in files:
        try:
            out.append((shown(path), env.get_template(path.name).render(n=numbers, **extra)))
        except Exception as exc:
            error = fail(path, exc)
            line = _source_line(path, location(exc, path).line)
            missing = sorted({m for m in re.findall(r"\bn\.(\w+)", line) if m not in numbers})
            if missing:
                error = BuildError(f"{error}; n has no {', '.join(missing)}"
                                   + ("" if numbers else " (the namespace n is empty)"))
            raise error from exc
    return out


# Height a chapter is assumed to take before the browser lays it out (content-visibility:
# auto skips the layout of chapters off screen): so many px per word and per drawing,
# table or code block, fitted on the article's chapters at 390 px (within 15 % of their
# laid-out heights; 10-30 % less at 1280 px). `auto` replaces it by the real height once
# the chapter has been drawn, so only the scroll bar's first guess depends on it.
PX_PER_WORD = 2.8
PX_PER_BLOCK = 300


def lazy_height_px(chapter_html: str) -> int:
    """The height (CSS px) reserved for a chapter drawn lazily (every chapter but the
    first, which is on the first screen): its words and its blocks, PX_PER_WORD and
    PX_PER_BLOCK."""
    words = len(re.sub(r"<[^>]+>", " ", chapter_html).split())
    blocks = len(re.findall(r"<(?:figure|table|pre)\b", chapter_html))
    return int(words * PX_PER_WORD + blocks * PX_PER_BLOCK)


def render_page(templates: Path, site: Path, context: dict) -> str:
    """content/templates/article.html around the chapters."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)),
                             autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined)
    env.filters.update(FILTERS)
    try:
        return env.get_template("article.html").render(**context)
    except jinja2.TemplateNotFound as exc:
        raise BuildError(f"{shown(templates)}/{exc.name}: template not found") from exc
    except Exception as exc:
        raise fail(templates, exc, fallback=Path(templates) / "article.html") from exc
