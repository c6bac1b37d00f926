"""Numbers that the rewritten chapters 03 ("One moving column") and 04 ("The model in
memory") need and that the rest of the namespace does not give.

`add(n)` runs at the very end of `article_numbers()`; every name is computed from names
already in `n` or from tokenwalk's own functions over the data files.
"""

from __future__ import annotations

import statistics

from tokenwalk.timing.llama_bench import published_bandwidth_shares


def add(n: dict) -> None:
    """Add this module's names to the namespace `n` (in place)."""
    # "The GGUF file and quantization": how many values a Q4_0 integer can take
    # (the levels run from quant_level_min_4bit to quant_level_max_4bit).
    n["quant_levels_q4"] = n["quant_level_max_4bit"] - n["quant_level_min_4bit"] + 1

    # "Bandwidth and the memory ladder": spec sheets are peaks. The middle half of the
    # published llama-bench decode runs (the same runs as published_share_median) reach
    # between the first and the third quartile of their share of the spec bandwidth.
    shares = [entry["share"] for entry in published_bandwidth_shares()]
    q1, _median, q3 = statistics.quantiles(shares, n=4)
    n["published_share_q1"] = q1
    n["published_share_q3"] = q3
