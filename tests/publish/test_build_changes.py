"""The dated record of what changed (publish/changes.py): each build of the article compares its
namespace with the last published one and says what moved and where it is printed; publishing
appends a dated entry that the Updates appendix prints."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from publish import BuildError, changes
from tests.support.content import render_chapters

ROOT = Path(__file__).resolve().parents[2]


def test_the_report_has_one_line_per_moved_quantity(numbers):
    """The repository's published snapshot is a namespace of the article (the golden test pins the
    current one; this one moves only when the article is published): the build's report has a
    line per name that differs, each `name: old -> new (where)`."""
    published = json.loads(changes.PUBLISHED.read_text(encoding="utf-8"))
    assert {"qwen_size_gb", "request_ttft_s", "published_share_median"} <= set(published)
    lines = changes.report(numbers, ROOT / "content", ROOT / "figures")
    assert len(lines) == len(changes.moved(numbers, published))
    assert all(line.endswith(")") and ": " in line for line in lines)


def test_a_changed_number_is_reported_with_where_it_is_printed(numbers):
    published = changes.snapshot(numbers)
    published["laptop_share_dense"] = 0.34125
    del published["laptop_measured_when"]
    lines = {name: (old, new) for name, old, new in changes.moved(numbers, published)}
    assert lines == {"laptop_share_dense": (0.34125, 0.325), "laptop_measured_when": (None, "October 2026")}
    where = changes.places("laptop_share_dense", ROOT / "content", ROOT / "figures")
    assert "06-laptop.md:12" in where and all(":" in w for w in where)
    # a quantity printed through its q_ string is found under its value's name
    assert any(w.startswith("05-prefill-decode.md") for w in changes.places("decode_tok_s_moe", ROOT / "content",
                                                                              ROOT / "figures"))


def test_publishing_appends_a_dated_entry_and_the_appendix_prints_it(numbers, tmp_path):
    published, updates = tmp_path / "numbers.json", tmp_path / "updates.json"
    old = changes.snapshot(numbers)
    old["published_share_median"] = 0.683566
    published.write_text(json.dumps(old), encoding="utf-8")
    entry = changes.publish(numbers, "Shares count what a token reads.", ROOT / "content", ROOT / "figures",
                            published, updates, today=datetime.date(2026, 12, 3))
    line = f"published_share_median: 0.6836 → {numbers['published_share_median']:.4f}"  # the data's median now
    assert entry == {"date": "2026-12-03", "why": "Shares count what a token reads.", "changes": [line]}
    assert json.loads(published.read_text(encoding="utf-8")) == changes.snapshot(numbers)
    second = changes.publish(numbers, "Nothing moved.", ROOT / "content", ROOT / "figures", published, updates,
                             today=datetime.date(2026, 12, 4))
    assert second["changes"] == []
    entries = changes.updates(updates)
    assert [e["date"] for e in entries] == ["2026-12-04", "2026-12-03"]

    from publish.chapters import chapter_files, render_sources
    files = [p for p in chapter_files(ROOT / "content") if p.name == "08-updates.md"]
    text = render_sources(files, numbers, updates=entries)[0][1]
    assert text.index("**2026-12-04.** Nothing moved.") < text.index("**2026-12-03.** Shares count")
    # a reason given without a full stop gets one; one that has it keeps one
    no_stop = render_sources(files, numbers, updates=[dict(entries[1], why="Shares count")])[0][1]
    assert "**2026-12-03.** Shares count.\n" in no_stop and ".." not in text.split("Updates", 1)[1]
    assert f"- `{line}`" in text and "No number moved." in text
    # the names are folded under a count, so a reader sees the dates and reasons first
    assert f"::: details 1 number moved\n- `{line}`\n:::" in text
    from publish.markdown import render_markdown
    html = render_markdown(text)
    assert '<details class="folded">\n<summary>1 number moved</summary>' in html and "<code>published_share_median" in html
    with pytest.raises(BuildError, match="--publish needs a reason"):
        changes.publish(numbers, "  ", ROOT / "content", ROOT / "figures", published, updates)


def test_the_updates_appendix_ends_the_article(numbers):
    chapters = render_chapters(numbers)
    assert list(chapters)[-1] == "08-updates.md"
    entries = changes.updates()
    assert entries and all(e["date"] and e["why"] for e in entries)
