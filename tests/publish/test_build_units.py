"""Small parts of the build: number filters, slugs, id scoping, MathML conversion."""

from __future__ import annotations

import pytest

from publish import filters
from publish.markdown import slugify
from publish.registry import scope_ids, with_alt

NB = "\u00a0"


def test_filters_format_numbers_with_si_units():
    assert filters.comma(6550) == "6,550"
    assert filters.comma(1234.5) == "1,234.5"
    assert filters.comma(1234.5678, 1) == "1,234.6"
    assert filters.comma(12.0) == "12"
    assert filters.fixed(11.66, 1) == "11.7"
    assert filters.gb(21_718_480_960) == f"21.7{NB}GB"  # SI: 1 GB = 1e9 bytes
    assert filters.mb(336_000_000) == f"336{NB}MB"
    assert filters.kb(20_480) == f"20{NB}KB"
    assert filters.pct(0.74) == f"74{NB}%"
    assert filters.unit(4.2, "ms") == f"4.2{NB}ms"


def test_filters_refuse_non_numbers():
    with pytest.raises(TypeError, match="filter 'gb' needs a number"):
        filters.gb("21.7")


def test_slugify():
    assert slugify("The laptop and its memory") == "the-laptop-and-its-memory"
    assert slugify("Prefill: 93 tok/s — fast?") == "prefill-93-tok-s-fast"
    assert slugify("???") == "section"


def test_scope_ids_renames_only_colliding_ids_and_their_references():
    seen = set()
    svg = ('<svg aria-labelledby="fig-title fig-desc"><title id="fig-title"/><desc id="fig-desc"/>'
           '<use href="#fig-title"/></svg>')
    assert scope_ids(svg, "one", seen) == svg
    second = scope_ids(svg, "two", seen)
    assert 'id="two--fig-title"' in second and 'aria-labelledby="two--fig-title two--fig-desc"' in second
    assert 'href="#two--fig-title"' in second


def test_with_alt_adds_alt_only_where_missing():
    assert with_alt('<img src="a.png">', "A plot") == '<img alt="A plot" src="a.png">'
    assert with_alt('<img alt="kept" src="a.png">', "A plot") == '<img alt="kept" src="a.png">'


def test_math_core_handles_the_article_constructs():
    from math_core import LatexToMathML
    convert = LatexToMathML(fancy_error=False).convert_with_local_state
    mathml = convert(r"\operatorname{softmax}\left(\frac{q \cdot k}{\sqrt{128}}\right) \le \max(a, b) "
                     r"\approx \text{4.2 ms}_{x}^{2}", displaystyle=True)
    for element in ("<mfrac>", "<msqrt>", "<mtext>4.2\u00a0ms</mtext>", "<mi>softmax</mi>", "<mi>max</mi>",
                    "≤", "≈"):
        assert element in mathml


def test_repeated_svg_styles_appear_once():
    from publish.registry import drop_repeated_styles
    seen = set()
    a = '<svg><style>.bus{fill:blue}</style><rect class="bus"/></svg>'
    assert drop_repeated_styles(a, seen) == a
    assert drop_repeated_styles(a, seen) == '<svg><rect class="bus"/></svg>'
    other = '<svg><style>.kv{fill:red}</style></svg>'
    assert drop_repeated_styles(other, seen) == other
