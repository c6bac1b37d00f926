"""The works the article cites (article/data/cited/references.json), formatted as its
sidenotes print them: authors, *title* (Markdown italics), venue and year. Content writes
``{{ n.ref.gqa }}``, so a title is kept once, in a data file, not retyped in chapters."""

from __future__ import annotations

from article import _data


def references() -> dict[str, str]:
    """key -> the formatted citation (a Markdown string)."""
    return dict(_data.read("cited/references.json")["references"])
