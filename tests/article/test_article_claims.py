"""Claims as checks (article/claims/, publish/markdown/claims.py): every sentence whose truth
depends on numbers names a condition; the build evaluates each one, and a changed measurement
that makes one false stops the build with one line naming the chapter, the line, the claim and
the numbers, leaving the previous site as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from article.claims import CLAIMS, ClaimError, evaluate, explain
from publish import BuildError
from publish.chapters import chapter_files, render_sources
from publish.markdown import Article, check_claims, render_chapters
from tests.support.build import assert_failed_cleanly, build_fixture, copy_fixture
from tests.support.data_substitute import substitute_data_file

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
MARKER = re.compile(r"\{\?([a-z][a-z0-9_]*)\}")


def _check(numbers: dict) -> int:
    """The build's own steps: the chapters through Jinja and Markdown, then every claim."""
    files = chapter_files(CONTENT)
    article = Article(figures={})
    render_chapters(render_sources(files, numbers), article)
    return check_claims(article.claims, numbers, files)


def _first_line(name: str) -> tuple[str, int]:
    for path in chapter_files(CONTENT):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "{?" + name + "}" in line:
                return f"content/{path.name}", number
    raise AssertionError(f"no chapter names {name}")


def test_every_claim_is_named_in_a_chapter_and_every_marker_is_a_claim():
    named = {name for path in chapter_files(CONTENT) for name in MARKER.findall(path.read_text(encoding="utf-8"))}
    assert named == set(CLAIMS), (sorted(named - set(CLAIMS)), sorted(set(CLAIMS) - named))
    assert len(CLAIMS) >= 150


def test_every_claim_holds_for_the_articles_numbers(numbers):
    assert _check(numbers) == len(CLAIMS)


def test_a_changed_measurement_that_breaks_a_claim_stops_with_one_line(monkeypatch):
    """The laptop's prefill measured at 200 tok/s instead of 93: the timing model's time to
    first token falls to about half a minute, and the lede's "a bit more than a minute" is
    false. The failure names the chapter file, the marker's line, the claim and its numbers."""
    from article.numbers import article_numbers

    def faster(data):
        data["values"]["prefill_tok_s_moe"]["value"] = 200
        return data

    substitute_data_file(monkeypatch, "measurements/laptop.json", faster)
    numbers = article_numbers()
    assert numbers["request_ttft_s"] < 60
    file, line = _first_line("request_ttft_a_bit_over_a_minute")
    with pytest.raises(BuildError) as caught:
        _check(numbers)
    message = str(caught.value)
    assert "\n" not in message
    assert message == (f"{file}:{line}: claim request_ttft_a_bit_over_a_minute is false: 60 < request_ttft_s < 90 "
                       f"(request_ttft_s = {numbers['request_ttft_s']:.4g})")


def test_the_build_stops_on_a_false_claim_and_keeps_the_old_site(tmp_path):
    """End to end, `python build.py`: the fixture article gains a sentence with a claim; a
    namespace whose measured decode speed passes the ceiling makes it false, and the build
    exits 1 with that one line and leaves the previous site/ untouched."""
    src = copy_fixture(tmp_path)
    chapter = src / "content" / "01-intro.md"
    text = chapter.read_text(encoding="utf-8")
    chapter.write_text(text + "\nIt writes below its ceiling.{?closing_decode_below_ceiling}\n", encoding="utf-8")
    line = len(text.splitlines()) + 2
    numbers_file = src / "numbers.json"
    numbers = json.loads(numbers_file.read_text(encoding="utf-8"))
    numbers.update({"decode_tok_s_moe": 11.7, "qwen_ceiling_tok_s": 69.8})
    numbers_file.write_text(json.dumps(numbers), encoding="utf-8")
    out, cache = tmp_path / "site", tmp_path / "cache"
    first = build_fixture(src, out, cache)
    assert first.returncode == 0, first.stderr
    assert "claims: 1 checked against the numbers, all true" in first.stdout
    snapshot = {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
                if p.is_file() and p.parts[-3:-1] != ("pyodide",)}

    numbers["decode_tok_s_moe"] = 80.0
    numbers_file.write_text(json.dumps(numbers), encoding="utf-8")
    result = build_fixture(src, out, cache)
    assert_failed_cleanly(result, out, snapshot, "")
    assert result.stderr.strip().endswith(
        f"content/01-intro.md:{line}: claim closing_decode_below_ceiling is false: decode_tok_s_moe < qwen_ceiling_tok_s "
        "(decode_tok_s_moe = 80, qwen_ceiling_tok_s = 69.8)")


def test_an_unknown_claim_or_a_name_the_namespace_lacks_is_one_line(tmp_path):
    chapter = tmp_path / "01-a.md"
    chapter.write_text("# A\n\nTrue enough.{?no_such_claim}\n", encoding="utf-8")
    with pytest.raises(BuildError, match=r"01-a\.md:3: no claim named no_such_claim in article/claims/$"):
        check_claims([(str(chapter), "no_such_claim")], {}, [chapter])
    with pytest.raises(ClaimError, match=r"claim decode_sms_wait_on_bus: n has no d7_decode_compute_ms"):
        evaluate("decode_sms_wait_on_bus", {})


@pytest.mark.parametrize(("condition", "message"), [
    ("__import__('os')", "is not allowed in a claim"),
    ("a.b > 1", "is not allowed in a claim"),
    ("a[b] > 1", "an index must be a whole number"),
])
def test_a_claim_reads_numbers_and_runs_nothing(monkeypatch, condition, message):
    monkeypatch.setitem(CLAIMS, "probe", condition)
    with pytest.raises(ClaimError, match=re.escape(message)):
        evaluate("probe", {"a": [1, 2], "b": 1})


def test_explain_names_every_number_the_condition_read(monkeypatch):
    monkeypatch.setitem(CLAIMS, "probe", "x < y and abs(z) < 1")
    holds, used = evaluate("probe", {"x": 1, "y": 2.0, "z": -0.123456, "unused": 9})
    assert holds and used == {"x": 1, "y": 2.0, "z": -0.123456}
    assert explain("probe", {"x": 1, "y": 2.0, "z": -0.123456}) == "x < y and abs(z) < 1 (x = 1, y = 2, z = -0.1235)"


def _size_check_prose(numbers: dict) -> str:
    files = [p for p in chapter_files(CONTENT) if p.name == "07-numbers.md"]
    text = render_sources(files, numbers)[0][1]
    start = text.index("These columns also test the timing model")
    return " ".join(text[start:text.index("\n\n", start)].split())


def test_the_size_check_paragraph_says_met_or_missed_as_the_measurements_do(monkeypatch):
    """Chapter 7's size-check paragraph (section "the build machine", tokenwalk.timing.size_check):
    with the committed measurements it says what the check found; with Qwen2.5's decode measured
    at half its speed the check misses, and the paragraph says "misses" with the new range, the
    one claim over both branches still holding."""
    from article.numbers import article_numbers
    from tokenwalk.format import pct

    numbers = article_numbers()
    met = numbers["engine_size_met"]
    prose = _size_check_prose(numbers)
    assert ("it lands within" in prose) == met and ("it misses the third's decode speed" in prose) == (not met)
    assert evaluate("size_check_stated", numbers)[0]

    def slower(data):
        data["values"]["decode_tok_s"]["value"] *= 0.8
        return data

    substitute_data_file(monkeypatch, "measurements/engine-qwen2.5-coder-0.5b.json", slower)
    missed = article_numbers()
    assert not missed["engine_size_met"] and missed["engine_size_decode_error_range"][1] > 0.15
    prose = _size_check_prose(missed)
    assert "it misses the third's decode speed" in prose and "it lands within" not in prose
    worst = " ".join(pct(missed["engine_size_decode_error_range"][1]).split())  # as _size_check_prose spaces it
    assert f"to {worst} and its prefill by" in prose
    assert evaluate("size_check_stated", missed)[0]
