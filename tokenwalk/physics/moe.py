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


def routed_expert_bytes(model) -> float:
    """Bytes of all the routed experts' tensors of a model (0 for a dense model): the one
    place the article's expert bytes come from.

    From the tensor table where the spec has one (`model.expert_bytes`: the `*_exps`
    tensors of the blocks a token runs, summed by `tokenwalk.specs.model.tensor_counts`).
    Without one, from the sizes: layers × expert_count × 3 matrices of embedding_length ×
    expert_ffn_length at the model's average bits per weight (for Qwen3.6 35B-A3B Q4_K_M
    that would be 32.2 billion weights at 4.89 bits, 19.7 GB; its table gives 19.5); without an expert width, from the file
    and the bytes one token reads: W = shared + E and R = shared + E × used / count give
    E = (W − R) / (1 − used / count). ``model``: a tokenwalk.specs.protocols.Model.
    """
    count, used = model.expert_count, model.expert_used_count
    if count <= 1 or used <= 0:
        return 0.0
    if model.expert_bytes is not None:
        return float(model.expert_bytes)
    if model.expert_ffn_length:
        weights = model.layers * count * 3 * model.embedding_length * model.expert_ffn_length
        return weights * model.bits_per_weight / 8
    if used >= count:
        return 0.0
    per_token = float(model.bytes_read_per_token or model.size_bytes)
    return max(float(model.size_bytes) - per_token, 0.0) / (1.0 - used / count)


def expert_bytes_per_token(model) -> float:
    """Bytes of routed experts one token reads: routed_expert_bytes × used / count (the
    part of `bytes_read_per_token` that depends on the router's choice)."""
    if model.expert_count <= 1:
        return 0.0
    return routed_expert_bytes(model) * model.expert_used_count / model.expert_count


def step_expert_bytes(model, tokens: int) -> float:
    """Bytes of routed experts a step of `tokens` tokens reads: every distinct expert the
    tokens woke, once (expected_distinct_experts of routed_expert_bytes / count each).
    One token: expert_bytes_per_token exactly."""
    if model.expert_count <= 1 or tokens <= 0:
        return 0.0
    if tokens == 1:
        return expert_bytes_per_token(model)
    distinct = expected_distinct_experts(tokens, model.expert_count, model.expert_used_count)
    return routed_expert_bytes(model) * distinct / model.expert_count
