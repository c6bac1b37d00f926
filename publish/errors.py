"""Build failures as one line for a person: `file[:line]: cause`.

One function turns an exception into a place, `location(exc, path)`: the deepest traceback
frame inside `path` (a file: a figure module, a chapter's Jinja template; or a folder: the
page templates, the whole project). Everything that reports a failure goes through it:
the figure registry, the chapters (Jinja), the page template and the last-resort handler
in the pipeline.
"""

from __future__ import annotations

import dataclasses
import traceback
from pathlib import Path


class BuildError(Exception):
    """A failed build, as one line for a person: `file[:line]: cause`."""


def shown(path: Path | str) -> str:
    """A path as the author reads it: relative to the working folder when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclasses.dataclass(frozen=True)
class Location:
    file: Path
    line: int | None = None

    def __str__(self) -> str:
        return f"{shown(self.file)}:{self.line}" if self.line else shown(self.file)


def _inside(file: Path, target: Path) -> bool:
    if target.is_dir():
        return file.is_relative_to(target) and not {".venv", "site-packages"} & set(file.parts)
    return file == target


def location(exc: BaseException, path: Path | str, fallback: Path | str | None = None) -> Location:
    """Where `exc` happened in `path`.

    `path` is a file (a figure module, a template) or a folder (every file under it, the
    environment excepted). The place is the deepest traceback frame there; a SyntaxError or
    a Jinja TemplateSyntaxError names its own file and line, which count as the first frame.
    With no frame there: `fallback` (or `path`) without a line.
    """
    target = Path(path).resolve()
    found: Location | None = None
    own_file, own_line = getattr(exc, "filename", None), getattr(exc, "lineno", None)
    if own_file and isinstance(own_line, int) and _inside(Path(own_file).resolve(), target):
        found = Location(Path(own_file), own_line)
    for frame, line in traceback.walk_tb(exc.__traceback__):
        file = Path(frame.f_code.co_filename).resolve()
        if _inside(file, target):
            found = Location(file, line)
    if found is None:
        return Location(Path(fallback if fallback is not None else path))
    return found


def cause(exc: BaseException) -> str:
    """`TypeName: first line of the message` (the type alone when there is no message)."""
    message = getattr(exc, "message", None) or str(exc)
    first = message.splitlines()[0] if message else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def fail(path: Path | str, exc: BaseException, doing: str = "", fallback: Path | str | None = None) -> BuildError:
    """The BuildError for `exc` raised while `doing` something with `path`:
    `file:line: doing: Type: message` (to raise `from exc`)."""
    parts = [str(location(exc, path, fallback)), doing, cause(exc)]
    return BuildError(": ".join(p for p in parts if p))
