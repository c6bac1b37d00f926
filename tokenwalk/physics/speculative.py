"""Speculative decoding: tokens per round, and what a round costs in bytes read.

A draft model writes ``gamma`` tokens ahead; the target model checks them in one pass
and keeps them from the left up to the first one it rejects, where it writes its own.
With acceptance rate alpha (probability that a draft token is accepted, assumed the same
and independent for every token), a round yields on average

    E[tokens per round] = (1 − alpha^(gamma+1)) / (1 − alpha)

(Leviathan, Kalman and Matias, 2023). Decode is bound by memory, so the cost model here
counts bytes read: one draft step reads the draft's weights; the check reads the target's
weights once for all gamma + 1 positions, except that an MoE target reads every distinct
expert the checked tokens woke (see tokenwalk.physics.moe), which can be several times the
experts of one token.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tokenwalk.physics.moe import expected_distinct_experts, expert_bytes_per_token


def expected_tokens_per_round(alpha: float, gamma: int) -> float:
    """Expected tokens one round yields: (1 − α^(γ+1)) / (1 − α); γ + 1 when α = 1.

    alpha: acceptance rate in [0, 1]; gamma: draft tokens per round (>= 0).
    """
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    if alpha == 1:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def verify_bytes(
    step_bytes: float,
    tokens: int,
    expert_bytes_per_token: float = 0.0,
    expert_count: int = 0,
    expert_used_count: int = 0,
) -> float:
    """Bytes the target reads to check ``tokens`` tokens in one pass.

    step_bytes: bytes one ordinary decode step (one token) reads.
    expert_bytes_per_token: the part of step_bytes that is routed experts (every layer's
        expert_used_count experts); 0 for a dense model, whose check reads step_bytes
        whatever the number of tokens.
    """
    if not expert_bytes_per_token:
        return float(step_bytes)
    shared = step_bytes - expert_bytes_per_token
    per_expert = expert_bytes_per_token / expert_used_count
    return shared + per_expert * expected_distinct_experts(tokens, expert_count, expert_used_count)


@dataclass(frozen=True)
class RoundCost:
    """One speculative round against plain decoding, in bytes read (memory-bound decode)."""

    tokens_per_round: float  # expected tokens one round yields
    step_bytes: float  # plain decode: bytes read per token
    draft_bytes: float  # gamma draft steps
    verify_bytes: float  # the target's check of gamma + 1 positions
    round_bytes: float  # draft + verify
    bytes_per_token: float  # round_bytes / tokens_per_round
    speedup: float  # step_bytes / bytes_per_token (> 1: speculation pays)

    def to_dict(self) -> dict:
        return asdict(self)


def round_cost(
    alpha: float,
    gamma: int,
    step_bytes: float,
    draft_step_bytes: float,
    expert_bytes_per_token: float = 0.0,
    expert_count: int = 0,
    expert_used_count: int = 0,
) -> RoundCost:
    """Bytes per generated token with and without a draft (first-order, memory-bound).

    The check covers gamma + 1 positions (the draft's gamma and the bonus token).
    """
    tokens = expected_tokens_per_round(alpha, gamma)
    draft = gamma * draft_step_bytes
    check = verify_bytes(step_bytes, gamma + 1, expert_bytes_per_token, expert_count, expert_used_count)
    per_token = (draft + check) / tokens
    return RoundCost(tokens, step_bytes, draft, check, draft + check, per_token, step_bytes / per_token)


def model_round_cost(model, alpha: float, gamma: int, draft_params: float) -> RoundCost:
    """Speculative round vs plain decoding for a model (a ModelSpec), in bytes read.

    ``alpha`` the acceptance rate, ``gamma`` the draft tokens per round, ``draft_params``
    the draft model's size, stored at the target's average bits per weight. Plain decoding reads
    model.bytes_read_per_token per token; the check of gamma + 1 tokens reads the shared
    weights once and every distinct expert the tokens woke (the experts' bytes from
    tokenwalk.physics.moe, as `roofline.weights_bytes_read` counts them).
    """
    draft_step_bytes = draft_params * model.bits_per_weight / 8
    return round_cost(alpha, gamma, model.bytes_read_per_token, draft_step_bytes,
                      expert_bytes_per_token(model), model.expert_count, model.expert_used_count)
