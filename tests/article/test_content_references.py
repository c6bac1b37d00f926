"""Citations: every sidenote that cites a work takes it from data/cited/references.json
through the namespace (n.ref.KEY), so a title is typed once."""

import re
from pathlib import Path

from article.references import references

CONTENT = Path(__file__).resolve().parents[2] / "content"


def test_issue_4_cited_works_are_in_the_references_file():
    refs = references()
    for key, author in (("gpt3", "Brown et al."), ("gqa", "Ainslie et al."), ("deltanet", "Hatamizadeh"),
                        ("geva", "Geva et al."), ("meng", "Meng et al."), ("holtzman", "Holtzman et al."),
                        ("flash", "Dao et al."), ("kaplan", "Kaplan et al."), ("leviathan", "Leviathan")):
        assert author in refs[key], key
        assert re.search(r"\*[^*]+\*", refs[key]), f"{key}: the title is not in italics"


def test_every_ref_the_chapters_use_exists_and_none_is_unused():
    used = set()
    for chapter in CONTENT.glob("*.md"):
        used |= set(re.findall(r"n\.ref\.([a-z0-9_]+)", chapter.read_text(encoding="utf-8")))
    refs = set(references())
    assert used <= refs, f"unknown references: {sorted(used - refs)}"
    assert refs <= used, f"references no chapter cites: {sorted(refs - used)}"
