"""tokenwalk.format.typeset: the quotes of text that does not pass through the Markdown."""

from __future__ import annotations

import pytest

from tokenwalk import format as fmt


@pytest.mark.parametrize("plain, typeset", [
    ("the author's laptop", "the author’s laptop"),
    ("a mixture of experts' narrow products", "a mixture of experts’ narrow products"),
    ("the query of 'its' (token 7)", "the query of ‘its’ (token 7)"),
    ("('warfarin', 74 %)", "(‘warfarin’, 74 %)"),
    ('a "quoted" word and "another"', "a “quoted” word and “another”"),
    ("no quotes at all", "no quotes at all"),
])
def test_typeset_sets_quotes_as_the_prose_does(plain, typeset):
    """Text that bypasses the Markdown (the simulator's view and hints, figure step lists) gets
    the quotes markdown-it's typographer gives the chapters."""
    assert fmt.typeset(plain) == typeset


def test_typeset_agrees_with_the_chapters_typographer():
    from publish.markdown import render_markdown
    sentence = "The experts' products, 'its' query and the author's \"laptop\"."
    assert render_markdown(sentence) == f"<p>{fmt.typeset(sentence)}</p>\n"
