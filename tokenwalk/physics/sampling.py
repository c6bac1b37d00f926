"""Next-token sampling: temperature, top-k, top-p, greedy, and one draw.

Pure Python (standard library only): the build, the tests, the reader's browser and the
engine's sampler all use these functions. Logits are a list of floats, one per
vocabulary entry; probabilities are a list of the same length that sums to 1 (entries
cut by top-k or top-p are 0.0).

Order of a draw (as Hugging Face's warpers): divide by the temperature and softmax, keep
the top k, keep the top-p nucleus, renormalise, draw.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import random
from collections.abc import Sequence


def softmax_with_temperature(logits: Sequence[float], temperature: float = 1.0) -> list[float]:
    """p_i = exp(z_i / T) / sum_j exp(z_j / T).

    temperature: > 0 (unitless). T = 0 is the limit, greedy decoding: all the
    probability on the largest logit (the first one on a tie). Stable for large logits.
    """
    if not logits:
        raise ValueError("softmax_with_temperature: no logits")
    if temperature < 0 or math.isnan(temperature):
        raise ValueError(f"softmax_with_temperature: temperature must be >= 0, got {temperature}")
    if temperature == 0:
        probs = [0.0] * len(logits)
        probs[greedy(logits)] = 1.0
        return probs
    top = max(logits)
    exps = [math.exp((z - top) / temperature) for z in logits]
    total = math.fsum(exps)
    return [e / total for e in exps]


def greedy(logits: Sequence[float]) -> int:
    """Index of the largest logit (the first one on a tie)."""
    best, best_i = -math.inf, 0
    for i, z in enumerate(logits):
        if z > best:
            best, best_i = z, i
    return best_i


def _ranked(probs: Sequence[float]) -> list[int]:
    # Descending probability; ties keep the lower index first, so cuts are deterministic.
    return sorted(range(len(probs)), key=lambda i: (-probs[i], i))


def _keep(probs: Sequence[float], kept: Sequence[int]) -> list[float]:
    total = math.fsum(probs[i] for i in kept)
    out = [0.0] * len(probs)
    for i in kept:
        out[i] = probs[i] / total
    return out


def top_k(probs: Sequence[float], k: int) -> list[float]:
    """Keep the k most probable entries and renormalise (k <= 0 or k >= len: unchanged)."""
    if k <= 0 or k >= len(probs):
        return list(probs)
    return _keep(probs, _ranked(probs)[:k])


def top_p_kept(probs: Sequence[float], p: float) -> list[int]:
    """Indices of the nucleus: the smallest set from the top whose probabilities reach p.

    p in (0, 1]; p >= 1 keeps every entry with a non-zero probability. Returned in
    descending probability.
    """
    if not 0 < p:
        raise ValueError(f"top_p: p must be in (0, 1], got {p}")
    ranked = [i for i in _ranked(probs) if probs[i] > 0]
    if p >= 1:
        return ranked
    kept, mass = [], 0.0
    for i in ranked:
        kept.append(i)
        mass += probs[i]
        if mass >= p - 1e-12:  # tolerance: a nucleus that sums to p exactly must stop there
            break
    return kept


def top_p(probs: Sequence[float], p: float) -> list[float]:
    """Keep the top-p nucleus (see top_p_kept) and renormalise; the others become 0."""
    return _keep(probs, top_p_kept(probs, p))


# Aliases: distribution() and sample() take parameters named top_p and top_k, which
# shadow the functions inside them.
_cut_top_k = top_k
_cut_top_p = top_p


def distribution(
    logits: Sequence[float],
    temperature: float = 1.0,
    top_p: float = 1.0,
    top_k: int = 0,
) -> list[float]:
    """The probabilities a draw uses after temperature, top-k and top-p (sums to 1)."""
    probs = softmax_with_temperature(logits, temperature)
    if top_k:
        probs = _cut_top_k(probs, top_k)
    if top_p < 1:
        probs = _cut_top_p(probs, top_p)
    return probs


def sample(
    logits: Sequence[float],
    temperature: float = 1.0,
    top_p: float = 1.0,
    top_k: int = 0,
    rng: random.Random | None = None,
) -> int:
    """Draw one token index from the logits: the same distribution as distribution().

    temperature 0 is greedy (no random number is drawn). top_k 0 and top_p 1 disable
    those cuts. rng: a random.Random, for reproducible draws (default: a fresh one).
    Fast enough for a real vocabulary (49,152 logits in a few ms): it never sorts the
    whole vocabulary; top-k keeps k candidates with a heap, top-p grows a heap until the
    nucleus is complete, and the draw is a binary search in cumulative weights.
    """
    if temperature == 0:
        return greedy(logits)
    if temperature < 0 or math.isnan(temperature):
        raise ValueError(f"sample: temperature must be >= 0, got {temperature}")
    if not logits:
        raise ValueError("sample: no logits")
    rng = rng if rng is not None else random.Random()
    n = len(logits)
    inv_t = 1.0 / temperature
    if 0 < top_k < n:
        # Softmax then top-k = softmax over the k largest logits alone.
        index = heapq.nlargest(top_k, range(n), key=logits.__getitem__)  # descending, stable
        ranked = True
    else:
        index = range(n)
        ranked = False
    zs = [logits[i] for i in index] if ranked else logits
    top = max(zs)
    weights = [math.exp((z - top) * inv_t) for z in zs]
    if top_p < 1:
        if not 0 < top_p:
            raise ValueError(f"top_p: p must be in (0, 1], got {top_p}")
        total = math.fsum(weights)
        order = range(len(weights)) if ranked else _descending_until(weights, top_p * total)
        # The shortest prefix whose share reaches top_p (same rule as top_p_kept()).
        running = list(itertools.accumulate(weights[j] for j in order))
        end = bisect.bisect_left(running, (top_p - 1e-12) * total) + 1
        kept = order[:end]
        index = [index[j] for j in kept]
        weights = [weights[j] for j in kept]
    cumulative = list(itertools.accumulate(weights))
    j = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    return index[min(j, len(index) - 1)]


def _descending_until(weights: Sequence[float], mass: float) -> list[int]:
    """Indices of the largest weights, descending (ties: lower index first), a prefix
    long enough to reach `mass` (or all of them), without sorting the whole vocabulary.

    Everything at or above a cut-off c outranks everything below it, so once the
    entries >= c hold `mass`, the nucleus is a prefix of those entries sorted. c starts
    at 1 % of the largest weight (the largest is 1 after the shift) and drops 100-fold
    until enough mass is above it.
    """
    cut = 1e-2
    while True:
        above = [i for i, w in enumerate(weights) if w >= cut]
        if cut < 1e-300 or math.fsum(weights[i] for i in above) >= mass * (1 - 1e-12):
            return sorted(above, key=weights.__getitem__, reverse=True)  # stable: ties keep index order
        cut *= 1e-2
