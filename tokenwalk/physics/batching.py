"""Batching: several users' decode steps share one trip of the weights.

One conversation puts one token in each step; a server puts one token of each of its
users in the same step. The weights cross the bus once for all of them, so up to the
balance point the step does not get longer (apart from each user's own KV cache) and the
server writes `users` times more tokens per second, while each user still waits one step
per token. 7B fp16 on an H100, 64 users: a 4.2 ms step, 0.9 ms of it compute, about
15,000 tokens a second, compute units busy 22 % of the step.

Units: seconds, tokens per second, shares in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk.physics.roofline import (
    StepTime,
    compute_time_s,
    decode_step,
    flops_per_token,
    memory_time_s,
    weights_bytes_read,
)


@dataclass(frozen=True)
class BatchStep:
    """One decode step shared by `users` users (roofline, spec-sheet maxima)."""

    users: int
    step: StepTime

    @property
    def step_s(self) -> float:
        return self.step.step_s

    @property
    def compute_s(self) -> float:
        return self.step.compute_s

    @property
    def memory_s(self) -> float:
        return self.step.memory_s

    @property
    def sm_busy_share(self) -> float:
        """Share of the step the compute units work."""
        return self.step.sm_busy_share

    @property
    def server_tok_s(self) -> float:
        """Tokens per second the machine writes, all users together."""
        return self.users / self.step_s

    @property
    def user_tok_s(self) -> float:
        """Tokens per second each user sees: one token per step."""
        return 1.0 / self.step_s


def batch_decode_step(model, machine, users: int, context_tokens: int = 0, kv_type: str = "f16") -> BatchStep:
    """The decode step of `users` users, each `context_tokens` deep, on the roofline."""
    if users < 1:
        raise ValueError(f"users must be >= 1, got {users}")
    return BatchStep(users, decode_step(model, machine, context_tokens, users, kv_type))


def max_users_same_step(model, machine) -> int:
    """Most users one step can carry before compute outlasts the weights' trip (empty caches).

    For a dense model this is the balance point in tokens (7B fp16 on the H100: 295); for
    a mixture of experts the trip itself grows as more tokens wake more experts.
    """
    per_token_s = compute_time_s(flops_per_token(model), machine.fp16_tflops)
    users = 1
    # Memory time never decreases with users, so the first crossing is found by doubling
    # and bisection without assuming a dense model.
    def fits(n):
        return n * per_token_s <= memory_time_s(weights_bytes_read(model, n), machine.bandwidth_gbs)

    if not fits(1):
        return 0
    high = 2
    while fits(high):
        users, high = high, high * 2
    low = users
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return low
