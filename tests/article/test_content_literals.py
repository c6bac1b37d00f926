"""Numbers in the chapters come from tokenwalk, not from literals.

Every number that tokenwalk or a data file can give is written in content/*.md as a
`{{ n.* }}` expression. This test lists the literal numbers left in the chapter sources and
fails on any that is not a year, a citation (footnote definitions name papers, pages and
dates), part of a name (Qwen3.6, RTX 5090, Q4_K_M), inside code (code shows code), or on the
commented allow-list below.
"""

from __future__ import annotations

import re

from tests.support.content import chapter_files

# Literal numbers allowed in the prose, each with its reason. Patterns are matched against the
# text around the number (regular expressions, case-sensitive).
ALLOWED = [
    # Product and model names whose version number stands apart from the name.
    (r"Llama 3\.1", "model name"),
    (r"Ryzen AI 7 PRO 450", "processor name"),
    (r"RTX\s+50[89]0", "graphics card name"),
    (r"PCIe 5\.0", "bus generation (a name)"),
    (r"RDNA 3\.5", "GPU architecture name"),
    # Mathematical constants of formulas, not data: probabilities run from 0 to 1, a
    # multiply-add is 2 operations, K and V make 2 tensors, 8 bits make a byte.
    (r"between 0 and 1", "probabilities"),
    (r"add up to 1\b", "probabilities"),
    (r"[÷/] 8\b", "bits to bytes in a formula"),
    (r"10\^\{9\}", "the SI prefix giga in a formula"),
    (r"\b2 ×", "a multiply and an add; or the key and the value"),
    (r"\(2 × active", "a multiply and an add"),
    (r"\b1e9\b", "nanoseconds to seconds"),
    # Ordinal words of an argument, not measurements.
    (r"[Ll]ayer 2\b", "the induction's second layer"),
    (r"\(\d+\)", "numbered steps of the request's trace"),
]

_NUMBER = re.compile(r"(?<![\w.\-−])[−-]?\d[\d,]*(?:\.\d+)?(?![\w-])")


def strip_allowed_contexts(text: str) -> str:
    """The chapter without what may hold literals: Jinja, code, math constants, footnotes,
    front matter."""
    text = re.sub(r"\A---\n.*?\n---\n", "\n", text, flags=re.S)  # front matter
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", text, flags=re.S)  # Jinja
    text = re.sub(r"^```.*?^```", " ", text, flags=re.M | re.S)  # code blocks
    text = re.sub(r"`[^`\n]+`", " ", text)  # inline code (names of tensors, flags)
    text = re.sub(r"^\[\^[^\]]+\]:.*$", " ", text, flags=re.M)  # footnotes: citations
    return text


def strip_math_constants(text: str) -> str:
    """In math, 0, 1 and 2 are constants of formulas (1 − α, k + 1, two tensors K and V)."""
    def clean(m):
        return re.sub(r"(?<![\w.])[012](?![\w.])", " ", m.group(0))
    text = re.sub(r"\$\$.+?\$\$", clean, text, flags=re.S)
    return re.sub(r"\$[^$\n]+\$", clean, text)


def literal_numbers(text: str) -> list[str]:
    """Literal numbers left in a chapter's source, with a little context each."""
    text = strip_math_constants(strip_allowed_contexts(text))
    for pattern, _why in ALLOWED:
        text = re.sub(pattern, " ", text)
    found = []
    for m in _NUMBER.finditer(text):
        value = m.group(0).replace(",", "").replace("−", "-")
        if re.fullmatch(r"(19|20)\d\d", value):  # a year
            continue
        if value in ("0", "1"):  # zero and one as words of counting (one token, layer 0)
            continue
        start, end = max(0, m.start() - 30), min(len(text), m.end() + 30)
        found.append(f"{m.group(0)!r} in ...{' '.join(text[start:end].split())}...")
    return found


def test_literal_finder_flags_a_number_and_spares_expressions():
    """The finder itself: a bare number is flagged; Jinja, names, years, code and notes are not."""
    assert literal_numbers("The laptop writes 11.7 tokens a second.")
    assert literal_numbers("It reserves 5.4 GB.")
    assert not literal_numbers("It writes {{ n.decode_tok_s_moe }} tokens a second.")
    assert not literal_numbers("Qwen3.6 35B-A3B in Q4_K_M on an H100, RTX 5090, since 2017.")
    assert not literal_numbers("```python\nx = 42\n```\n[^a]: Brown et al., 2020, table 2.1.")


def test_chapters_have_no_literal_numbers():
    """Every number of content/*.md is a {{ n.* }} expression or on the allow-list."""
    hits = {p.name: literal_numbers(p.read_text(encoding="utf-8")) for p in chapter_files()}
    hits = {k: v for k, v in hits.items() if v}
    assert not hits, "literal numbers in the chapters:\n" + "\n".join(
        f"{name}: {h}" for name, found in hits.items() for h in found)
