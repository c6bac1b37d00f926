"""Jinja filters for numbers written into the text: `{{ n.kv_bytes | mb }}`.

Units are SI (GB = 1e9 bytes, MB = 1e6 bytes). A number and its unit are joined by a
no-break space (U+00A0) so a line never breaks between "21.7" and "GB".
"""

from __future__ import annotations

NBSP = "\u00a0"


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


def unit(value, name: str, decimals: int | None = None) -> str:
    """A number and a unit: unit(4.2, "ms") -> "4.2 ms" (comma-separated, no-break space)."""
    return f"{comma(value, decimals)}{NBSP}{name}"


FILTERS = {"comma": comma, "fixed": fixed, "gb": gb, "mb": mb, "kb": kb, "pct": pct, "unit": unit}
