"""Small counts and lists as prose writes them."""

from __future__ import annotations


def words(k: int) -> str:
    """Small counts in words, as prose writes them."""
    names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
             "eleven", "twelve"]
    return names[k] if 0 <= k < len(names) else f"{k:,}"


def and_list(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
