"""settings_rows: the settings table (article/data/cited/article.json's settings)."""

from __future__ import annotations

from article import _data


def group(n: dict) -> None:
    data = _data.read("cited/article.json")["settings"]
    rows = []
    for row in data["rows"]:
        value = row["value"]
        if isinstance(value, dict) and "from_request" in value:
            value = str(n["request_" + value["from_request"]])
        rows.append({"name": row["name"], "value": value, "why": row["why"].format_map(n)})
    n["settings_rows"] = rows
