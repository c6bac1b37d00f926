"""One value per quantity: every quantity the page prints in more than one
place prints the same string everywhere.

The places are collected from what the build renders, through the build's own functions:
the chapters (Jinja with `n`, then the Markdown renderer: each `{{ n.q_<name> }}` is a
`<span data-q="<name>">`), figure 29 (request-trace: `<tspan data-q>`), and the simulator's
default view (tokenwalk_app.view: `<span data-walk-key="<walk key>">`, mapped to quantities by
article.numbers.quantities.WALK_KEYS; the "measured" and "assumed" lines of its provenance).
A quantity found in two places with two strings fails, naming both places.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from pathlib import Path

import pytest

from article.numbers import quantities
from publish.markdown import render_chapters
from publish.markdown.state import Article
from tests.support.content import chapter_files, default_numbers
from tests.support.content import render_chapters as render_chapter_sources
from tests.support.context import default_context

SPAN = re.compile(r'<(?:t?span) data-(q|walk-key)="([^"]+)">([^<]*)</t?span>')


def _norm(text: str) -> str:
    """The printed string, with no-break and ordinary spaces read alike (typography only)."""
    return re.sub(r"\s+", " ", html.unescape(text).replace("\u00a0", " ")).strip()


@pytest.fixture(scope="module")
def n():
    return default_numbers()


@pytest.fixture(scope="module")
def places(n, tmp_path_factory) -> dict[str, list[tuple[str, str]]]:
    """quantity -> [(place, string)] over the chapters, figure 29 and the simulator."""
    from figures import request_trace, simulator
    from tokenwalk_app.view import walk_html

    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    sources = render_chapter_sources(n)
    pages = render_chapters(list(sources.items()), Article(figures={}))
    for page in pages:
        for kind, name, text in SPAN.findall(page["html"]):
            assert kind == "q", f"{page['file']}: a data-walk-key span in a chapter"
            found[name].append((Path(page["file"]).name, _norm(text)))

    ctx = default_context()
    svg = request_trace.render(request_trace.inputs(ctx), tmp_path_factory.mktemp("trace"))
    for kind, name, text in SPAN.findall(svg):
        assert kind == "q", "figure 29: a data-walk-key span"
        found[name].append(("figure 29 (request-trace)", _norm(text)))

    sim = simulator.inputs(ctx)
    for kind, key, text in SPAN.findall(walk_html(sim["walk"], sim["explain"])):
        assert kind == "walk-key"
        if key in quantities.WALK_KEYS:
            found[quantities.WALK_KEYS[key]].append((f"simulator ({key})", _norm(text)))
    measured = {"load": "cold_load_s", "prefill": "prefill_tok_s_moe", "decode": "decode_tok_s_moe"}
    for line in sim["explain"]["measured"]:
        what, _, value = line.partition(" ")
        if what in measured:
            found[measured[what]].append(("simulator (measured)", _norm(value.split(" (")[0].split(" on a ")[0])))
    for line in sim["explain"]["assumed"]:
        if line.startswith("decode's reads run at "):
            found["laptop_bandwidth_efficiency"].append(
                ("simulator (assumed)", _norm(line.removeprefix("decode's reads run at ").split(" of ")[0])))
    return dict(found)


def test_every_place_prints_a_quantitys_one_string(n, places):
    wrong = []
    for name, seen in sorted(places.items()):
        assert name in quantities.QUANTITIES, f"{seen[0][0]}: data-q={name!r} is not a quantity of article/numbers/quantities.py"
        want = _norm(quantities.text(name, n))
        wrong += [f"{name}: {where} prints {got!r}, the quantity is {want!r}" for where, got in seen if got != want]
    assert not wrong, "\n".join(wrong)


def test_the_request_times_are_collected_from_all_three_places(places):
    """The collection itself works: the quantities the article repeats are found in the prose,
    figure 29 and the simulator's default view."""
    def where(name):
        return {p.split(" (")[0] if not p.endswith(".md") else "prose" for p, _ in places.get(name, [])}

    for name in ("request_ttft_s", "request_decode_s", "request_step_bytes", "request_step_s", "request_prefill_s",
                 "request_kv_prompt", "request_prompt_tokens", "cold_load_s"):
        assert where(name) >= {"prose", "figure 29", "simulator"}, (name, places.get(name))
    for name in ("request_prefill_tok_s", "request_decode_tok_s", "prefill_tok_s_moe", "decode_tok_s_moe",
                 "laptop_bandwidth_efficiency", "budget_small_kv", "budget_small_free"):
        assert where(name) >= {"prose", "simulator"}, (name, places.get(name))
    assert len(places["laptop_share_moe"]) >= 4 and len(places["qwen_bytes_per_token"]) >= 4


def test_a_measurement_and_the_models_prediction_are_two_quantities(n):
    """Where the page shows both, they have two names and two kinds: the laptop's measured speeds
    (a 2,900-token prompt) and the timing model's for the article's request."""
    q = quantities.QUANTITIES
    for measured, modelled in (("prefill_tok_s_moe", "request_prefill_tok_s"), ("decode_tok_s_moe", "request_decode_tok_s"),
                               ("env_ttft_s", "request_ttft_s"), ("laptop_share_moe", "laptop_bandwidth_efficiency"),
                               ("qwen_bytes_per_token", "request_step_bytes")):
        assert q[measured].kind != quantities.MODELLED and q[modelled].kind == quantities.MODELLED
        assert quantities.text(measured, n) != quantities.text(modelled, n)
    for name, quantity in q.items():
        assert quantity.kind in (quantities.MEASURED, quantities.COMPUTED, quantities.MODELLED), name
        assert quantity.source, name


def test_the_chapters_print_a_quantity_only_through_its_one_string():
    """A quantity's raw value is never formatted in a chapter on its own (`{{ n.request_ttft_s |
    round }}`); it may enter arithmetic, and it prints as `{{ n.q_<name> }}`."""
    raw = {q.value: name for name, q in quantities.QUANTITIES.items()}
    pattern = re.compile(r"\{\{\s*n\.(" + "|".join(map(re.escape, raw)) + r")\s*(\|[^}]*)?\}\}")
    found = [f"{path.name}:{i}: n.{m.group(1)} (print n.q_{raw[m.group(1)]})"
             for path in chapter_files()
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for m in pattern.finditer(line)]
    assert not found, "\n".join(found)


def test_the_simulators_alt_text_and_live_summary_use_the_same_strings(n):
    from figures import request_trace, simulator
    from tokenwalk_app.view import live_summary

    ctx = default_context()
    sim = simulator.inputs(ctx)
    texts = {"simulator alt": simulator.alt(sim), "live summary": live_summary(sim["walk"]),
             "figure 29 alt": request_trace.alt(request_trace.inputs(ctx))}
    for where, text in texts.items():
        for name in ("request_ttft_s",) + (("request_decode_s",) if where == "figure 29 alt" else
                                            ("request_prefill_tok_s", "request_decode_tok_s")):
            assert _norm(quantities.text(name, n)) in _norm(text), (where, name, text)


def test_figure_22_draws_the_budget_strings_the_prose_prints(n, tmp_path):
    """Figure 22 (memory-budget) labels its bars with the same strings as chapter 6 and its caption
    (the cache and what is left, at both num_ctx)."""
    from figures import memory_budget

    svg = _norm(re.sub(r"<[^>]+>", " ", memory_budget.render(memory_budget.inputs(default_context()), tmp_path)))
    for name in ("budget_small_kv", "budget_small_free", "budget_big_kv", "budget_big_free"):
        assert _norm(quantities.text(name, n)) in svg, (name, quantities.text(name, n))


def test_figure_21_and_its_caption_print_the_same_speeds(n, tmp_path):
    """Figure 21 (kv-growth): the caption's speeds (chapter 5) are the figure's labels."""
    from figures import kv_growth

    page = render_chapter_sources(n)
    caption = next(text for name, text in page.items() if "kv-growth" in text)
    svg = kv_growth.render(kv_growth.inputs(default_context()), tmp_path)
    labels = [_norm(t) for t in re.findall(r'class="num bold"[^>]*>([^<]+)<', svg)]
    speeds = [str(int(round(g["tok_s"]))) for g in n["kv_growth"]]
    assert labels == speeds and ", ".join(speeds) in _norm(caption), (labels, speeds)
