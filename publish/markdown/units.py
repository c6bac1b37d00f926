"""A number and its unit stay on one line: "20.1 %", "2 µs", "128 GB/s" written with a plain
space in a chapter (or in an Updates entry) get a no-break space, as the number filters'
output already has (`tokenwalk.format`), so a phone never starts a line with "%"."""

from __future__ import annotations

import re

from tokenwalk.format import NBSP

# a digit, one space, then a unit the article writes (SI prefixes of bytes, seconds, FLOP/s, hertz)
_NUMBER_UNIT = re.compile(r"(?<=\d) (?=(?:%|[µmn]?s\b|[KMGT]B(?:/s)?\b|[GT]FLOP/s|tok/s|t/s|[KMG]Hz\b|W\b))")


def _core_units(state) -> None:
    for token in state.tokens:
        for child in token.children or []:
            if child.type == "text":
                child.content = _NUMBER_UNIT.sub(NBSP, child.content)


def units_plugin(md) -> None:
    """Bind numbers to their units in the text of every inline (not in code or math)."""
    md.core.ruler.push("units", _core_units)
