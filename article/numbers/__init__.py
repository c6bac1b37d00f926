"""The article's number namespace `n`: every number the chapters print, computed by tokenwalk.

`article_numbers()` returns a flat dict, name -> value (numbers raw, in the units their
names say; the chapters format them with the build's filters, which are
tokenwalk.format's functions: `{{ n.qwen_size_gb | fixed(1) }}`). The names are grouped by
what they describe, one module per group; each module owns the name prefixes it lists in
PREFIXES (no prefix of one module begins another's, so a name's prefix says where it is
computed):

    request    request_*, walk, token_count_*, chat_template_* (the request, its tokens, its walk)
    models     qwen_*, gpt3_*, dense27_*, llama70_*, other machines' specs, gguf_*
    measured   the laptop's measurements under their own names, mtp_*, prefix_cache_*
    engine     engine_*                                    (the machine that built the page)
    cited      cited facts, sc_* (the scenario sizes)
    toy        toy_*, attn_*, mask_*, sampling_*, quant_*, bpw_*
    h100       the H100 example: h100_*, d7_*, balance_*, tile_*, batch_*, chunk_*, kv_*
    laptop     the request on the laptop: laptop_*, env_*, budget_*, spec_*, shares
    settings   settings_rows
    fit        fit_unseen_*: the timing model's error on chip families it was not fitted on
    quantities q_*: each quantity printed in more than one place, as its one string (in a span
               that names it), with its provenance: measured, computed or modelled

Each group is a function, `names(src, n) -> dict`, that returns its names: `src` holds the
scenario and the data files every group may read (Sources), `n` only the names of the groups
it lists in NEEDS (reading any other raises KeyError). The groups run in an order derived from
NEEDS, and the merge stops on a name two groups return (NamespaceError, naming both).

Which model and machine each group uses is decided once, in article.scenario; sizes come
from the presets, times from roofline, kv_cache, timing and walk, toy numbers from
article.toys, measurements from tokenwalk/data/measurements/ (laptop.json, the author's
laptop; engine.json, the machine that built the page, absent: `n.engine` is None), cited
facts from article/data/cited/. These modules only pick, combine (a ratio, a difference)
and name.

Conventions: `_gb`, `_mb`, `_kb` are SI (1e9, 1e6, 1e3 bytes); `_bytes` are bytes;
`_s`, `_ms` seconds and milliseconds; `_tok_s` tokens per second; `_b` billions;
`_share` a fraction in [0, 1].

Pure Python (standard library), except the token count, which reads the SmolLM2 GGUF file
named in content/request/request.json once per process (about a second).
"""

from __future__ import annotations

import graphlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from article import _data
from article.numbers import cited, engine, fit, h100, laptop, measured, models, quantities, request, settings, toy
from article.references import references
from tokenwalk.errors import TokenwalkError

# Every group of the namespace, by the name its NEEDS use (the module's own name).
GROUPS = {m.__name__.rsplit(".", 1)[-1]: m
          for m in (request, models, measured, engine, cited, toy, h100, laptop, settings, fit, quantities)}
# `n.ref`, the bibliography, comes from article.references, not from a group.
REFERENCES = "ref"


class NamespaceError(TokenwalkError):
    """Two groups return the same name, or a group needs one that does not exist."""


@dataclass(frozen=True)
class Sources:
    """What every group may read besides other groups' names: the scenario (which model on
    which machine), the cited facts (article/data/cited/article.json's values) and the
    laptop's measurements (tokenwalk/data/measurements/laptop.json's values)."""

    scenario: object
    cited: Mapping
    measurements: Mapping


def sources(request_dir: str | Path | None = None, scenario=None) -> Sources:
    from article.scenario import load_scenario

    sc = scenario if scenario is not None else load_scenario(request_dir)
    return Sources(sc, _data.values("cited/article.json"), _data.values("measurements/laptop.json", root=None))


def run_order() -> list[str]:
    """The groups in an order where each runs after every group it NEEDS."""
    graph = {}
    for name, module in GROUPS.items():
        unknown = [need for need in module.NEEDS if need not in GROUPS]
        if unknown:
            raise NamespaceError(f"{module.__name__}: NEEDS names no group {', '.join(unknown)}")
        graph[name] = module.NEEDS
    try:
        return list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        raise NamespaceError(f"article.numbers: the groups' NEEDS form a cycle: {' -> '.join(error.args[1])}") from None


def group_names(src: Sources) -> dict[str, dict]:
    """Each group's names, by group, each group given only the names of the groups it NEEDS."""
    done: dict[str, dict] = {}
    for name in run_order():
        module = GROUPS[name]
        needed = merge({need: done[need] for need in module.NEEDS})
        done[name] = module.names(src, MappingProxyType(needed))
    return done


def merge(groups: dict[str, dict]) -> dict:
    """One namespace from the groups' names; a name two groups return stops it."""
    n: dict = {}
    owner: dict[str, str] = {}
    for group, names in groups.items():
        for key, value in names.items():
            if key in owner:
                raise NamespaceError(f"article.numbers: n.{key} is returned by two groups, "
                                     f"article.numbers.{owner[key]} and article.numbers.{group}")
            n[key], owner[key] = value, group
    return n


def article_numbers(request_dir: str | Path | None = None, scenario=None) -> dict:
    """The namespace `n` of the article (see the module docstring), for `scenario`
    (default: article.scenario.load_scenario(request_dir))."""
    groups = group_names(sources(request_dir, scenario))
    return merge({**groups, REFERENCES: {"ref": references()}})
