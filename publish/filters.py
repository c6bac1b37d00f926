"""Jinja filters for numbers written into the text (`{{ n.kv_bytes | mb }}`): a mapping
onto tokenwalk.format, the one formatting module the figures and the simulator's view use
too, so the prose and a figure print a quantity the same way."""

from __future__ import annotations

from tokenwalk import format as fmt

FILTERS = {"comma": fmt.comma, "count": fmt.count, "fixed": fmt.fixed, "gb": fmt.gb, "mb": fmt.mb,
           "kb": fmt.kb, "pct": fmt.pct, "unit": fmt.unit}
comma, fixed, gb, mb, kb, pct, unit = fmt.comma, fmt.fixed, fmt.gb, fmt.mb, fmt.kb, fmt.pct, fmt.unit
