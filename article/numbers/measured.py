"""The author's laptop measurements (tokenwalk/data/measurements/laptop.json), as measured,
under their own names, plus mtp_*, prefix_cache_* ranges."""

from __future__ import annotations

from tokenwalk import data_refs

GB = 1e9


def group(n: dict, meas: dict) -> None:
    """The author's laptop measurements (data/measurements/laptop.json), as measured."""
    for key, value in meas.items():
        n[key] = value
    # when the laptop was measured, printed where the measurements are introduced
    n["laptop_measured_when"] = data_refs.read_data_json("measurements/laptop.json")["when"]
    n["system_apps_gb"] = meas["system_and_apps_bytes"] / GB
    n["mtp_on_t07_tok_s_low"] = min(meas["mtp_on_t07_tok_s"])
    n["mtp_on_t07_tok_s_high"] = max(meas["mtp_on_t07_tok_s"])
    n["prefix_cache_tok_s_low"] = min(meas["prefix_cache_tok_s"])
    n["prefix_cache_tok_s_high"] = max(meas["prefix_cache_tok_s"])
    n["mtp_t_low"], n["mtp_t_high"] = min(meas["mtp_temperatures"]), max(meas["mtp_temperatures"])
    n["mtp_t0_gain_share"] = meas["mtp_on_t0_tok_s"] / meas["mtp_off_t0_tok_s"] - 1
