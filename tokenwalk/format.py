"""Numbers as the reader sees them: one module for the prose (the build's Jinja filters map
onto these functions), the figures and the simulator's view (tokenwalk_app.view, which
runs in the browser too). A quantity printed by the prose and by a figure goes through the
same function, so it prints the same string.

Units are SI (GB = 1e9 bytes, MB = 1e6 bytes). A number and its unit are joined by a
no-break space (U+00A0) so a line never breaks between "21.7" and "GB".
"""

from __future__ import annotations

import re

NBSP = "\u00a0"
# a quote mark opens after the start of the text, a space, a bracket, a dash or a slash; it closes elsewhere
_OPENS_AFTER = r"(^|[\s(\[{\u2013\u2014/])"


def typeset(text: str) -> str:
    """Typewriter quotes as the article's prose sets them (markdown-it's typographer): an
    apostrophe or a closing single quote is ’ ("it’s", "the experts’ products"), an opening
    one ‘ ("‘its’"), double quotes “ and ”. For text the page shows that does not pass
    through the Markdown: the simulator's view, its hints, the figures' step lists."""
    text = re.sub(_OPENS_AFTER + "'", "\\1\u2018", str(text)).replace("'", "\u2019")
    return re.sub(_OPENS_AFTER + '"', "\\1\u201c", text).replace('"', "\u201d")


def _number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"filter '{name}' needs a number, got {type(value).__name__} {value!r}")
    return value


def comma(value, decimals: int | None = None) -> str:
    """Thousands separators: 6550 -> "6,550"; 1234.5 -> "1,234.5"; comma(x, 1) fixes decimals."""
    _number(value, "comma")
    if decimals is not None:
        return f"{value:,.{decimals}f}"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(round(value)):,}"
    return f"{value:,}"


def count(value) -> str:
    """A count (tokens, users) rounded to the nearest whole one, with separators:
    295.7 -> "296"; the prose's `round | int` and a figure's label agree."""
    _number(value, "count")
    return f"{int(round(value)):,}"


def significant(value, digits: int = 3) -> str:
    """A plain number (any unit, printed without it) rounded to `digits` significant figures,
    with thousands separators and no padding zeros: 70537 -> "70,500", 238.7 -> "239",
    0.014339 -> "0.0143"."""
    _number(value, "significant")
    return comma(float(f"{value:.{digits}g}"))


def fixed(value, decimals: int = 1) -> str:
    """Fixed decimals, no separators: fixed(11.66, 1) -> "11.7"."""
    _number(value, "fixed")
    return f"{value:.{decimals}f}"


def _si_bytes(value_bytes, scale: float, unit_name: str, decimals: int, filter_name: str) -> str:
    _number(value_bytes, filter_name)
    return f"{value_bytes / scale:,.{decimals}f}{NBSP}{unit_name}"


def gb(value_bytes, decimals: int = 1) -> str:
    """Bytes as SI gigabytes: 21718480960 -> "21.7 GB"."""
    return _si_bytes(value_bytes, 1e9, "GB", decimals, "gb")


def mb(value_bytes, decimals: int = 0) -> str:
    """Bytes as SI megabytes: 336e6 -> "336 MB"."""
    return _si_bytes(value_bytes, 1e6, "MB", decimals, "mb")


def kb(value_bytes, decimals: int = 0) -> str:
    """Bytes as SI kilobytes: 20480 -> "20 KB"."""
    return _si_bytes(value_bytes, 1e3, "KB", decimals, "kb")


def pct(share, decimals: int = 0) -> str:
    """A share in [0, 1] as a percentage: 0.74 -> "74 %"."""
    _number(share, "pct")
    return f"{share * 100:.{decimals}f}{NBSP}%"


def probability(p: float) -> str:
    """A probability with the digits its size needs: 0.65 -> "65 %", 0.009 -> "0.9 %",
    0.0003 -> "0.03 %", below 0.0001 -> "<0.01 %" (figure 5 and the prose beside it)."""
    _number(p, "probability")
    x = 100 * p
    if x >= 0.95:
        return f"{round(x)}{NBSP}%"
    if x >= 0.095:
        return f"{x:.1f}{NBSP}%"
    if x >= 0.005:
        return f"{x:.2f}{NBSP}%"
    return f"<0.01{NBSP}%"


def unit(value, name: str, decimals: int | None = None) -> str:
    """A number and a unit: unit(4.2, "ms") -> "4.2 ms" (comma-separated, no-break space)."""
    return f"{comma(value, decimals)}{NBSP}{name}"


def ms(seconds: float, digits: int | None = None) -> str:
    """A duration in seconds as milliseconds, without the unit: 0.014, 4.2, 29 (three
    decimals under 0.1 ms, one under 10 ms, none above); `digits` fixes the decimals."""
    value = seconds * 1e3
    if digits is not None:
        return f"{value:.{digits}f}"
    if value < 0.1:
        return f"{value:.3f}"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def seconds(value: float) -> str:
    """Seconds for a reader: 55 s, 74.8 s, 4.21 s, 85 ms, 6.6 ms, 0 s."""
    if value <= 0:
        return "0 s"
    if value >= 100:
        return f"{value:,.0f} s"
    if value >= 1:
        return f"{value:.3g} s"
    milli = value * 1e3
    return f"{milli:.3g} ms" if milli >= 0.01 else "< 0.01 ms"


def seconds_after(first: float, last: float) -> str:
    """`last` printed like `seconds(first)`, for a range read left to right: 86.9 ms -> 87.0 ms,
    not 87 ms. Falls back to `seconds(last)` when the two need different units."""
    head = seconds(first).split(" ")
    if len(head) != 2 or head[1] not in ("s", "ms") or "," in head[0]:
        return seconds(last)
    value = last * (1e3 if head[1] == "ms" else 1)
    decimals = len(head[0].partition(".")[2])
    text = f"{value:.{decimals}f} {head[1]}"
    return text if seconds(last).split(" ")[-1] == head[1] else seconds(last)


def duration(seconds: float, digits: int = 2) -> str:
    """Seconds at `digits` significant figures, in s from one second up and in ms below:
    2.0 -> "2 s", 0.22 -> "220 ms", 0.0042 -> "4.2 ms" (the memory ladder's coarse times)."""
    _number(seconds, "duration")
    value, name = (seconds, "s") if seconds >= 1 else (seconds * 1e3, "ms")
    return f"{significant(value, digits)} {name}"


def bandwidth(gbs: float) -> str:
    """A bandwidth given in GB/s (1e9 bytes a second), in TB/s from 1,000 GB/s, the number as
    given: 128 -> "128 GB/s", 3350 -> "3.35 TB/s"."""
    _number(gbs, "bandwidth")
    return f"{comma(gbs / 1e3)} TB/s" if gbs >= 1000 else f"{comma(gbs)} GB/s"


def count_binary(value: int) -> str:
    """A count in powers of 1,024, three significant figures (how the article rounds a tile's
    operations): 32768 -> "32K", 4194304 -> "4M", 900 -> "900"."""
    _number(value, "count_binary")
    for name, size in (("M", 1024 ** 2), ("K", 1024)):
        if value >= size:
            return f"{significant(value / size)}{name}"
    return comma(value)


def bytes_si(n: float) -> str:
    """Bytes in SI units with three significant digits (GB = 1e9): 21.7 GB, 336 MB, 20.5 KB."""
    n = float(n)
    for name, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {name}"
    return f"{n:.0f} bytes"


def rate(tok_s: float) -> str:
    """Tokens per second: 11.7 tok/s, 1,234 tok/s."""
    return f"{tok_s:.3g} tok/s" if tok_s < 1000 else f"{tok_s:,.0f} tok/s"
