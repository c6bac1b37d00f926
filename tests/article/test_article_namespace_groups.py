"""The namespace's groups (article/numbers/): each returns its own names, under prefixes no
other group owns; a name two groups return stops the merge; a group reads only the groups it
names in NEEDS, and the order they run in follows from NEEDS alone."""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations

import pytest

from article import numbers as namespace
from article.numbers import NamespaceError

OWNERS = {**{name: module.PREFIXES for name, module in namespace.GROUPS.items()},
          namespace.REFERENCES: (namespace.REFERENCES,)}


@lru_cache(maxsize=1)
def _groups() -> dict[str, dict]:
    return namespace.group_names(namespace.sources())


def test_no_prefix_of_one_group_begins_another_groups():
    clashes = [(a, pa, b, pb) for (a, pas), (b, pbs) in permutations(OWNERS.items(), 2)
               for pa in pas for pb in pbs if pb.startswith(pa)]
    assert clashes == []


def test_each_group_returns_names_under_its_own_prefixes_only():
    stray = {group: sorted(k for k in names if not k.startswith(OWNERS[group]))
             for group, names in _groups().items()}
    assert {g: s for g, s in stray.items() if s} == {}


def test_every_name_of_n_has_exactly_one_owner(numbers):
    owners = {key: [g for g, prefixes in OWNERS.items() if key.startswith(prefixes)] for key in numbers}
    assert {k: o for k, o in owners.items() if len(o) != 1} == {}
    # and the request's names, once written by two groups, are the request group's alone
    assert {k for k, o in owners.items() if k.startswith("request_")} <= set(_groups()["request"])
    prefill = next(s for s in numbers["walk"]["stages"] if s["name"] == "prefill")
    whole_chunks = -(-numbers["request_prompt_tokens"] // numbers["request_chunk_tokens"])
    assert numbers["request_prefill_chunks"] == prefill["chunk_count"] == whole_chunks == 13


def test_the_merge_stops_on_a_name_two_groups_return():
    with pytest.raises(NamespaceError) as error:
        namespace.merge({"laptop": {"laptop_memory_gb": 64}, "models": {"laptop_memory_gb": 64}})
    assert str(error.value) == ("article.numbers: n.laptop_memory_gb is returned by two groups, "
                                "article.numbers.laptop and article.numbers.models")


def test_a_group_sees_only_the_groups_it_needs(monkeypatch):
    """The laptop group reads the request's prompt tokens: without `request` in its NEEDS, the
    name is not there (KeyError), whatever order the groups happened to run in."""
    monkeypatch.setattr(namespace.laptop, "NEEDS", ("measured",))
    with pytest.raises(KeyError, match="request_"):
        namespace.group_names(namespace.sources())


def test_the_order_follows_the_needs():
    order = namespace.run_order()
    assert sorted(order) == sorted(namespace.GROUPS)
    late = [(g, need) for g, m in namespace.GROUPS.items() for need in m.NEEDS if order.index(need) > order.index(g)]
    assert late == []
    assert order.index("request") < order.index("toy") < order.index("quantities")


def test_a_cycle_or_an_unknown_group_in_needs_is_named(monkeypatch):
    monkeypatch.setattr(namespace.request, "NEEDS", ("laptop",))
    with pytest.raises(NamespaceError, match="the groups' NEEDS form a cycle: .*request"):
        namespace.run_order()
    monkeypatch.setattr(namespace.request, "NEEDS", ("walks",))
    with pytest.raises(NamespaceError, match="article.numbers.request: NEEDS names no group walks"):
        namespace.run_order()
