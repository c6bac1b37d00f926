"""Section "Tokens and embeddings": with RoPE the attention score depends on
what the two tokens are, and only its positional part depends on the offset between them alone.

The check rotates toy 2-D queries and keys by angles proportional to their positions (RoPE's
rule for one pair of coordinates) and compares scores; then it reads the chapter's sentence."""

from __future__ import annotations

import math
import re

from tests.support.content import default_numbers, render_chapters


def _rotate(v, position, theta=0.1):
    a = position * theta
    return (v[0] * math.cos(a) - v[1] * math.sin(a), v[0] * math.sin(a) + v[1] * math.cos(a))


def _score(q, m, k, n):
    qr, kr = _rotate(q, m), _rotate(k, n)
    return qr[0] * kr[0] + qr[1] * kr[1]


def test_rope_score_depends_on_offset_and_on_content():
    q, k, other_k = (0.9, 0.2), (0.5, -1.0), (-0.3, 0.8)
    # Same contents, same offset (3), different places in the text: same score.
    assert math.isclose(_score(q, 2, k, 5), _score(q, 40, k, 43), abs_tol=1e-12)
    # Same offset, different key content: a different score, so the offset alone does not set it.
    assert not math.isclose(_score(q, 2, k, 5), _score(q, 2, other_k, 5), abs_tol=1e-6)
    # Same contents, different offset: a different score (the positional part moved).
    assert not math.isclose(_score(q, 2, k, 5), _score(q, 2, k, 9), abs_tol=1e-6)


def test_chapter_says_content_counts_and_only_the_positional_part_follows_the_offset():
    text = " ".join(render_chapters(default_numbers())["02-whole-matrices.md"].split())
    assert "depends only on how far apart" not in text
    rope = text[text.index("*RoPE*"):]
    rope = rope[:rope.index("## Attention")]
    assert re.search(r"still depends on what both tokens are", rope)
    assert re.search(r"positional part depend only on the offset", rope)
