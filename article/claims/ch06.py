"""Claims of content/06-laptop.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
}
