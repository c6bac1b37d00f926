"""The format functions the figures print through (tokenwalk.format): each as the figures
printed its numbers before they were routed there, and each refuses what is not a number."""

from __future__ import annotations

import pytest

from tokenwalk import format as fmt


@pytest.mark.parametrize(("value", "digits", "want"), [
    (70537, 3, "70,500"), (238.7, 3, "239"), (0.014339, 3, "0.0143"), (4.0, 3, "4"), (1234.5, 2, "1,200"),
])
def test_significant_rounds_to_its_digits_and_groups_thousands(value, digits, want):
    assert fmt.significant(value, digits) == want


@pytest.mark.parametrize(("seconds", "want"), [
    (2.0, "2 s"), (1.96, "2 s"), (0.22, "220 ms"), (0.0042, "4.2 ms"), (14.2, "14 s"),
])
def test_duration_keeps_two_significant_digits_in_s_or_ms(seconds, want):
    assert fmt.duration(seconds) == want


@pytest.mark.parametrize(("gbs", "want"), [(128, "128 GB/s"), (128.0, "128 GB/s"), (3350, "3.35 TB/s"),
                                           (64.5, "64.5 GB/s"), (1000, "1 TB/s")])
def test_bandwidth_switches_to_tb_s_at_a_thousand_gb_s(gbs, want):
    assert fmt.bandwidth(gbs) == want


@pytest.mark.parametrize(("ops", "want"), [(32768, "32K"), (4194304, "4M"), (2 * 128 * 128 * 295, "9.22M"),
                                           (900, "900")])
def test_count_binary_counts_in_powers_of_1024(ops, want):
    assert fmt.count_binary(ops) == want


@pytest.mark.parametrize("name", ["significant", "duration", "bandwidth", "count_binary"])
def test_a_non_number_is_refused_by_name(name):
    with pytest.raises(TypeError, match=f"filter '{name}' needs a number, got str '12'"):
        getattr(fmt, name)("12")
