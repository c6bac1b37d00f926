"""Changing one measurement changes every sentence and table cell that depends on it.

The article's numbers flow data files -> tokenwalk -> content. Here the laptop's measured
decode speed (measurements/laptop.json, decode_tok_s_moe) is doubled in a substituted copy of
the file; the namespace `n` is computed again, and each line of each chapter is rendered with
both namespaces. A line that uses a name whose value moved must read differently; a line that
uses only unmoved names must read the same.
"""

from __future__ import annotations

import re

import jinja2
import pytest

from tests.support.content import chapter_files, default_numbers, jinja_env
from tests.support.data_substitute import substitute_data_file

MEASUREMENT = "decode_tok_s_moe"
LAPTOP_FILE = "measurements/laptop.json"

# Names computed from the laptop's decode speed by this project's own modules: the measured
# speed itself and its printed string, the envelope's answer time, the share of the bandwidth (the
# same as the share of the ceiling) and its string, the
# dense/MoE ratio of the decode section.
MUST_MOVE = ["decode_tok_s_moe", "env_answer_s", "laptop_share_moe", "q_decode_tok_s_moe", "q_laptop_share_moe",
             "dense_vs_moe_speed_ratio"]
# Names the walk computes with the fitted timing model (decode of the request, the trace).
WALK_DEPENDENTS = ["request_decode_s", "request_step_ms", "request_decode_tok_s"]


@pytest.fixture
def moved_numbers(monkeypatch):
    """The namespace with the laptop's decode speed doubled in a copy of laptop.json."""
    from article.numbers import article_numbers

    base = default_numbers()

    def doubled(data: dict) -> dict:
        data["values"][MEASUREMENT]["value"] = 2 * base[MEASUREMENT]
        return data

    substitute_data_file(monkeypatch, LAPTOP_FILE, doubled)
    try:
        yield article_numbers()
    finally:
        monkeypatch.undo()


def moved_names(base: dict, moved: dict) -> set[str]:
    return {k for k in base if base[k] != moved.get(k)}


# A name that moved by less than this share is a second-order effect (the prefill's KV reads
# use the memory efficiency the decode measurement sets: +0.08 % when decode doubles); the
# article prints it to a precision that need not show it, so its lines may read the same.
MATERIAL_SHARE = 0.01


def materially_moved_names(base: dict, moved: dict) -> set[str]:
    out = set()
    for k in moved_names(base, moved):
        a, b = base[k], moved.get(k)
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
        if not numeric or a == 0 or abs(b - a) > MATERIAL_SHARE * abs(a):
            out.add(k)
    return out


def rendered_lines(numbers_a: dict, numbers_b: dict):
    """(file, line number, names used, text with a, text with b) for each renderable line."""
    env = jinja_env()
    for path in chapter_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            names = set(re.findall(r"\bn\.(\w+)", line))
            if not names or "{%" in line or line.count("{{") != line.count("}}"):
                yield path.name, number, names, None, None
                continue
            template = env.from_string(line)
            try:
                yield path.name, number, names, template.render(n=numbers_a), template.render(n=numbers_b)
            except jinja2.UndefinedError:  # a loop variable: the line belongs to a {% for %}
                yield path.name, number, names, None, None


def test_doubling_the_decode_speed_moves_the_names_built_on_it(moved_numbers):
    moved = moved_names(default_numbers(), moved_numbers)
    assert set(MUST_MOVE) <= moved, sorted(set(MUST_MOVE) - moved)
    # and leaves the H100's example, which no laptop measurement touches, alone
    assert not moved & {"d7_step_memory_ms", "balance_tokens_fp16", "kv_bytes_per_token_qwen", "qwen_size_gb"}


def test_every_line_using_a_moved_number_changes_and_no_other(moved_numbers):
    """The decode speed's sentences and table cells (phases, envelope, closing numbers...)."""
    base = default_numbers()
    moved = moved_names(base, moved_numbers)
    material = materially_moved_names(base, moved_numbers)
    unchanged, changed_wrongly, unrendered = [], [], []
    dependent = 0
    for name, number, names, a, b in rendered_lines(base, moved_numbers):
        uses_moved = bool(names & moved)
        if a is None:
            if uses_moved:
                unrendered.append(f"{name}:{number}")
            continue
        if names & material:
            dependent += 1
            if a == b:
                unchanged.append(f"{name}:{number}: {a.strip()[:100]}")
        elif not uses_moved and a != b:
            changed_wrongly.append(f"{name}:{number}: {a.strip()[:100]}")
    assert dependent >= 10, f"only {dependent} lines use the moved numbers: the test would prove little"
    assert not unchanged, "lines that use a moved number but read the same:\n" + "\n".join(unchanged)
    assert not changed_wrongly, "lines that changed without using a moved number:\n" + "\n".join(changed_wrongly)
    assert not unrendered, f"lines using moved numbers inside loops or split expressions: {unrendered}"


def test_the_walk_of_the_request_follows_the_measured_decode_speed(moved_numbers):
    moved = moved_names(default_numbers(), moved_numbers)
    assert set(WALK_DEPENDENTS) <= moved, sorted(set(WALK_DEPENDENTS) - moved)
