"""The author's laptop measurements (tokenwalk/data/measurements/laptop.json), as measured,
under their own names, plus mtp_*, prefix_cache_* ranges (when they were measured is the
laptop group's laptop_measured_when)."""

from __future__ import annotations

from collections import ChainMap

# the file's keys, as measured, and the ranges made of them
PREFIXES = ("cold_load_", "decode_tok_s_", "prefill_tok_s_", "prefill_prompt_", "mtp_", "ollama_default_",
            "prefix_cache_", "system_and_apps_", "system_apps_")
NEEDS: tuple[str, ...] = ()
GB = 1e9


def names(src, n) -> dict:
    """The author's laptop measurements (data/measurements/laptop.json), as measured."""
    meas = src.measurements
    out: dict = {}
    n = ChainMap(out, n)
    for key, value in meas.items():
        n[key] = value
    n["system_apps_gb"] = meas["system_and_apps_bytes"] / GB
    n["mtp_on_t07_tok_s_low"] = min(meas["mtp_on_t07_tok_s"])
    n["mtp_on_t07_tok_s_high"] = max(meas["mtp_on_t07_tok_s"])
    n["prefix_cache_tok_s_low"] = min(meas["prefix_cache_tok_s"])
    n["prefix_cache_tok_s_high"] = max(meas["prefix_cache_tok_s"])
    n["mtp_t_low"], n["mtp_t_high"] = min(meas["mtp_temperatures"]), max(meas["mtp_temperatures"])
    n["mtp_t0_gain_share"] = meas["mtp_on_t0_tok_s"] / meas["mtp_off_t0_tok_s"] - 1
    return out
