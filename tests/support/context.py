"""The article's context (article.context) for tests that call a figure's inputs(ctx)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def default_context():
    """The context the build makes, computed once per test session (do not mutate)."""
    from article.context import build_context

    return build_context()


def fresh_context():
    """A context computed now (after a test substituted a data file)."""
    from article.context import build_context

    return build_context()
