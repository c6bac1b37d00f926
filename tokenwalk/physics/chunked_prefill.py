"""Chunked prefill: a long prompt cut into chunks, one chunk per step.

Thanks to the causal mask a chunk's tokens attend to themselves and to the earlier
chunks' keys and values read from the cache, so the result is the same as one step. A
server mixes a chunk into its users' decode steps (piggybacking): the chunk rides free
until the step's tokens reach the balance point, then the step grows for everyone.
7B fp16 on an H100: 50 users decoding, 4.2 ms (compute units busy 17 %); + 245 prompt
tokens still 4.2 ms; + 1,000 about 15 ms, against 4.2 + 14 = 18.2 ms in two steps.

Units: tokens, seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tokenwalk.physics.batching import max_users_same_step
from tokenwalk.physics.roofline import StepTime, prefill_step, prompt_chunks, step_time


@dataclass(frozen=True)
class ChunkPlan:
    """A prompt cut into chunks, described without a list: `full` chunks of `chunk_tokens`,
    then one chunk of `rest` tokens when the prompt does not divide evenly. What the walk
    sums over, so 10^8 one-token chunks cost no more memory than 13.

    6,550 tokens in chunks of 512: full 12, rest 406, count 13; chunk(12) = (6144, 406).
    """

    prompt_tokens: int
    chunk_tokens: int

    def __post_init__(self):
        if self.chunk_tokens < 1:
            raise ValueError(f"chunk_tokens must be >= 1, got {self.chunk_tokens}")

    @property
    def full(self) -> int:
        """Chunks of exactly chunk_tokens tokens."""
        return max(self.prompt_tokens, 0) // self.chunk_tokens

    @property
    def rest(self) -> int:
        """Tokens of the last, shorter chunk (0 when there is none)."""
        return max(self.prompt_tokens, 0) % self.chunk_tokens

    @property
    def count(self) -> int:
        return self.full + (1 if self.rest else 0)

    def chunk(self, i: int) -> tuple[int, int]:
        """(tokens already cached, tokens in the chunk) of chunk i, as `roofline.prompt_chunks` gives it."""
        if not 0 <= i < self.count:
            raise IndexError(f"chunk {i} of {self.count}")
        before = i * self.chunk_tokens
        return before, min(self.chunk_tokens, self.prompt_tokens - before)


def chunk_sizes(prompt_tokens: int, chunk_tokens: int) -> list[int]:
    """Sizes of the chunks a prompt is cut into (`roofline.prompt_chunks`): full chunks,
    then the rest. 6,550 tokens in chunks of 512 -> 13 chunks (12 of 512 and one of 406).
    A list, for a figure's few chunks; the walk sums over a `ChunkPlan` instead.
    """
    return [n for _before, n in prompt_chunks(prompt_tokens, chunk_tokens)]


def chunk_count(prompt_tokens: int, chunk_tokens: int) -> int:
    """Number of chunks (steps) for a prompt: ceil(prompt / chunk)."""
    return math.ceil(prompt_tokens / chunk_tokens) if prompt_tokens > 0 else 0


def mixed_step(model, machine, decode_users: int, prompt_tokens: int) -> StepTime:
    """One step carrying `decode_users` decode tokens and `prompt_tokens` of a prompt (roofline).

    Weights read once for all of them; attention and KV ignored, as in the article's
    four-step picture.
    """
    return step_time(model, machine, decode_users + prompt_tokens)


def free_ride_tokens(model, machine, decode_users: int) -> int:
    """Prompt tokens that fit into a decode step of `decode_users` without lengthening it.

    The gap between the users and the balance point (295 - 50 = 245 for the 7B fp16 on
    the H100).
    """
    return max(0, max_users_same_step(model, machine) - decode_users)


@dataclass(frozen=True)
class SeparateSteps:
    """A decode step and a prefill step run one after the other (two trips of the weights)."""

    decode: StepTime
    prefill: StepTime

    @property
    def total_s(self) -> float:
        return self.decode.step_s + self.prefill.step_s


def separate_steps(model, machine, decode_users: int, prompt_tokens: int) -> SeparateSteps:
    """The same work as `mixed_step` in two steps: 4.2 + 14 = 18.2 ms for 50 users and 1,000 tokens."""
    return SeparateSteps(step_time(model, machine, decode_users), step_time(model, machine, prompt_tokens))


@dataclass(frozen=True)
class ChunkedPrefill:
    """A prompt prefilled in chunks: the sum of its steps, and the totals of both sides."""

    chunks: tuple
    steps: tuple

    @property
    def time_s(self) -> float:
        return sum(s.step_s for s in self.steps)

    @property
    def memory_s(self) -> float:
        """All the trips of the weights (and KV) together."""
        return sum(s.memory_s for s in self.steps)

    @property
    def compute_s(self) -> float:
        return sum(s.compute_s for s in self.steps)


def chunked_prefill(model, machine, prompt_tokens: int, chunk_tokens: int, *, attention: bool = False,
                    kv_type: str = "f16") -> ChunkedPrefill:
    """Prefill `prompt_tokens` in chunks of `chunk_tokens`, one step each (roofline).

    attention=False follows the article's accounting (weights only): 32,000 tokens of the
    7B in 16 chunks of 2,000 make 16 trips (67 ms) hidden under 450 ms of arithmetic.
    attention=True adds the attention term and the KV reads of earlier chunks.
    """
    chunks = prompt_chunks(prompt_tokens, chunk_tokens)
    steps = [prefill_step(model, machine, n, before, kv_type) if attention else step_time(model, machine, n)
             for before, n in chunks]
    return ChunkedPrefill(tuple(n for _before, n in chunks), tuple(steps))
