"""Claims of content/07-numbers.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
}
