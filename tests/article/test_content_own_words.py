"""The article is written in its own words: no run of ten words in common with the draft.

The draft lives outside the repository (../shared/reference/article-notes.txt); where it is
absent (a fresh clone) the test skips and says why. The chapters are checked after Jinja has
filled in their numbers, so a sentence copied around a `{{ n.* }}` expression still counts.
"""

from __future__ import annotations

import re

import pytest

from tests.support.content import DRAFT, chapter_files, default_numbers, render_chapters, request_files

RUN = 10  # words in a row that may not be shared with the draft

_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")


def words(text: str) -> list[str]:
    """Lower-case words and numbers; Markdown, math and punctuation fall away."""
    text = text.replace("\u00a0", " ").replace("\u2019", "'").lower()
    text = re.sub(r"\[\^[^\]]+\]", " ", text)  # footnote markers
    return _WORD.findall(text)


def shared_runs(text: str, draft_runs: set, run: int = RUN) -> list[str]:
    w = words(text)
    hits, i = [], 0
    while i + run <= len(w):
        if tuple(w[i:i + run]) in draft_runs:
            j = i + run
            while j < len(w) and tuple(w[j - run + 1:j + 1]) in draft_runs:
                j += 1
            hits.append(" ".join(w[i:j]))
            i = j
        else:
            i += 1
    return hits


def prose(text: str) -> str:
    """The chapter's prose: without code blocks (data and code, not sentences), math (a
    formula is a fact, written the one way it is written) and cited titles (footnotes
    cite papers by their exact titles, in *italics*)."""
    text = re.sub(r"^```.*?^```", " ", text, flags=re.M | re.S)
    text = re.sub(r"\$\$.+?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", " ", text)
    return re.sub(r"^(\[\^[^\]]+\]:.*)$", lambda m: re.sub(r"\*[^*]+\*", " ", m.group(1)), text, flags=re.M)


@pytest.fixture(scope="module")
def draft_runs() -> set:
    if not DRAFT.is_file():
        pytest.skip("the author's draft (../shared/reference/article-notes.txt) is not next to this checkout")
    w = words(DRAFT.read_text(encoding="utf-8"))
    return {tuple(w[i:i + RUN]) for i in range(len(w) - RUN + 1)}


def test_words_helper_finds_a_copied_run():
    """The checker itself: a copied run is found, a reworded one is not."""
    draft = "the quick brown fox jumps over the lazy dog and runs away into the woods"
    runs = {tuple(words(draft)[i:i + RUN]) for i in range(len(words(draft)) - RUN + 1)}
    assert shared_runs("Yes: The quick brown fox jumps over the lazy dog and runs, said he.", runs)
    assert not shared_runs("A quick brown fox leapt over a lazy dog and then ran away.", runs)


def test_chapters_share_no_run_of_ten_words_with_the_draft(draft_runs):
    rendered = render_chapters(default_numbers())
    hits = {name: shared_runs(prose(text), draft_runs) for name, text in rendered.items()}
    hits = {k: v for k, v in hits.items() if v}
    assert not hits, "runs of ten words shared with the draft:\n" + "\n".join(
        f"{name}: {run}" for name, runs in hits.items() for run in runs)


def test_request_shares_no_run_of_ten_words_with_the_draft(draft_runs):
    hits = [(p.name, run) for p in request_files() for run in shared_runs(p.read_text(encoding="utf-8"), draft_runs)]
    assert not hits, hits


def test_there_are_seven_chapters():
    """The article's seven parts, each a chapter file, then the Updates appendix."""
    files = chapter_files()
    assert len(files) == 8 and files[-1].name == "08-updates.md"
