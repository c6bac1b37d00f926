"""settings_rows: the settings table (article/data/cited/article.json's settings)."""

from __future__ import annotations

from article import _data

PREFIXES = ("settings_",)
NEEDS = ("request", "measured")  # a row's value may be the request's; its reason may quote any of these


def names(src, n) -> dict:
    data = _data.read("cited/article.json")["settings"]
    rows = []
    for row in data["rows"]:
        value = row["value"]
        if isinstance(value, dict) and "from_request" in value:
            value = str(n["request_" + value["from_request"]])
        rows.append({"name": row["name"], "value": value, "why": row["why"].format_map(n)})
    return {"settings_rows": rows}
