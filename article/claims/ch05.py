"""Claims of content/05-prefill-decode.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
}
