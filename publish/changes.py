"""What moved since the last publication, and the dated record of it on the page.

article/data/published/numbers.json is the namespace `n` as last published (the same
snapshot as tests/golden/numbers.json: floats to 6 significant digits, the build machine's
engine_* names left out), a reviewed file in the repository. Every build of the article
compares its namespace with it and prints each quantity that moved, old -> new, with the
chapter lines and figures that print it. `python build.py --publish "why"` builds, then
rewrites that file and appends a dated entry (the why, and one line per moved quantity) to
article/data/published/updates.json, which the "Updates" appendix of the page prints.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path

from .errors import BuildError, shown

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "article" / "data" / "published" / "numbers.json"
UPDATES = ROOT / "article" / "data" / "published" / "updates.json"
SIG = 6  # significant digits a float keeps in a snapshot
# machine-dependent (`tokenwalk measure` on the build machine) or long text tested elsewhere
SKIP_PREFIXES = ("engine",)
SKIP = {"chat_template_full_text", "chat_template_text", "qwen_gguf_metadata", "qwen_gguf_tensors"}


def _rounded(value):
    if isinstance(value, float):
        return value if not math.isfinite(value) or value == 0 else float(f"{value:.{SIG}g}")
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def snapshot(n: dict) -> dict:
    """The namespace as a reviewable JSON object (sorted, rounded, engine_* left out)."""
    return json.loads(json.dumps({k: _rounded(v) for k, v in sorted(n.items())
                                  if k not in SKIP and not k.startswith(SKIP_PREFIXES)}, sort_keys=True))


def _read(path: Path, default):
    if not path.is_file():
        return default
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BuildError(f"{shown(path)}: not JSON: {exc}") from exc


def _shown_value(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _line(name: str, old, new, arrow: str) -> str:
    if old is None:
        return f"{name}: new, {_shown_value(new)}"
    if new is None:
        return f"{name}: no longer printed (was {_shown_value(old)})"
    return f"{name}: {_shown_value(old)} {arrow} {_shown_value(new)}"


def places(name: str, content: Path, figures: Path) -> list[str]:
    """Where `name` is printed: chapter lines naming n.NAME (or a q_ quantity of it), and the
    figures whose module reads it."""
    from article.numbers.quantities import QUANTITIES

    names = {name} | {f"q_{q}" for q, quantity in QUANTITIES.items() if quantity.value == name}
    pattern = re.compile(r"\bn\.(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    found = []
    for path in sorted(Path(content).glob("*.md")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{path.name}:{number}")
    quoted = re.compile(r"[\"']" + re.escape(name) + r"[\"']")
    for path in sorted(Path(figures).glob("*.py")):
        if quoted.search(path.read_text(encoding="utf-8")):
            # a shared helper (figures/_manim.py) is no figure: named by its file
            found.append(f"figures/{path.name}" if path.stem.startswith("_") else "figure " + path.stem.replace("_", "-"))
    return found


def moved(n: dict, published: dict) -> list[tuple[str, object, object]]:
    """(name, published value, value now) for every name that differs (None: absent)."""
    now = snapshot(n)
    return [(k, published.get(k), now.get(k)) for k in sorted(set(now) | set(published))
            if published.get(k) != now.get(k)]


def report(n: dict, content: Path, figures: Path, published_file: Path = PUBLISHED) -> list[str]:
    """One line per moved quantity: `name: old -> new (where it is printed)`."""
    published = _read(published_file, None)
    if published is None:
        return [f"no {shown(published_file)} yet: `build.py --publish WHY` writes it"]
    lines = []
    for name, old, new in moved(n, published):
        where = places(name, content, figures)
        lines.append(_line(name, old, new, "->") + (f" ({', '.join(where)})" if where else " (printed nowhere)"))
    return lines


def updates(updates_file: Path = UPDATES) -> list[dict]:
    """The dated entries of the Updates appendix, newest first."""
    entries = _read(updates_file, [])
    # by date, and within a day by the order they were published (the file appends)
    return [e for _, e in sorted(enumerate(entries), key=lambda ie: (ie[1]["date"], ie[0]), reverse=True)]


def backup(paths: tuple[Path, ...] = (PUBLISHED, UPDATES)) -> dict:
    """The record files' bytes (None: absent), for `restore` after a failed publication."""
    return {path: path.read_bytes() if path.is_file() else None for path in paths}


def restore(saved: dict) -> None:
    for path, data in saved.items():
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(data)


def publish(n: dict, why: str, content: Path, figures: Path, published_file: Path = PUBLISHED,
            updates_file: Path = UPDATES, today: datetime.date | None = None) -> dict:
    """Record a publication: append the dated entry (why, and each moved quantity with its old
    and new value) to `updates_file`, then rewrite `published_file`. Returns the entry."""
    if not why.strip():
        raise BuildError("--publish needs a reason: one line saying what changed and why")
    published = _read(published_file, {})
    entry = {"date": (today or datetime.date.today()).isoformat(), "why": why.strip(),
             "changes": [_line(name, old, new, "→") for name, old, new in moved(n, published)]}
    entries = _read(updates_file, [])
    entries.append(entry)
    updates_file.parent.mkdir(parents=True, exist_ok=True)
    updates_file.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    published_file.write_text(json.dumps(snapshot(n), indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                              encoding="utf-8")
    return entry
