"""Mixture of experts: how many distinct experts a group of tokens wakes in one layer.

Each token's router picks ``expert_used_count`` experts out of ``expert_count``. In one
step (a prompt chunk, or a speculative check of several tokens) every expert that any
token picked must be read from memory once, so the bytes a step reads grow with the
number of *distinct* experts, not with tokens × experts used.

Model: each token picks its experts uniformly at random and independently of the other
tokens. Real routers are not uniform (some experts are popular), which makes the true
count somewhat lower; the uniform count is the first-order estimate the article uses.
"""

from __future__ import annotations


def _check(tokens: int, expert_count: int, expert_used_count: int) -> None:
    if tokens < 0:
        raise ValueError(f"tokens must be >= 0, got {tokens}")
    if expert_count < 1 or not 0 <= expert_used_count <= expert_count:
        raise ValueError(
            f"need 0 <= expert_used_count <= expert_count, got {expert_used_count} of {expert_count}"
        )


def expected_distinct_experts(tokens: int, expert_count: int, expert_used_count: int) -> float:
    """Expected number of distinct experts ``tokens`` tokens wake in one layer.

    E = N × (1 − (1 − k/N)^t) for N experts, k used per token, t tokens: an expert stays
    asleep only if every token's choice of k misses it (probability 1 − k/N each).
    1 token: exactly k. Never more than min(N, t × k).
    """
    _check(tokens, expert_count, expert_used_count)
    miss = 1.0 - expert_used_count / expert_count
    return expert_count * (1.0 - miss**tokens)


def max_distinct_experts(tokens: int, expert_count: int, expert_used_count: int) -> int:
    """The most distinct experts ``tokens`` tokens can wake in one layer: min(N, t × k)."""
    _check(tokens, expert_count, expert_used_count)
    return min(expert_count, tokens * expert_used_count)
