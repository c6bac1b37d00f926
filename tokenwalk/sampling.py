"""Next-token sampling: temperature, top-k, top-p, greedy, and one draw.

Pure Python (standard library only): the build, the tests, the reader's browser and the
engine's sampler all use these functions. Logits are a list of floats, one per
vocabulary entry; probabilities are a list of the same length that sums to 1 (entries
cut by top-k or top-p are 0.0).

Order of a draw (as Hugging Face's warpers): divide by the temperature and softmax, keep
the top k, keep the top-p nucleus, renormalise, draw.
"""

from __future__ import annotations

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
    """Draw one token index from the logits.

    temperature 0 is greedy (no random number is drawn). top_k 0 and top_p 1 disable
    those cuts. rng: a random.Random, for reproducible draws (default: a fresh one).
    """
    if temperature == 0:
        return greedy(logits)
    rng = rng if rng is not None else random.Random()
    probs = distribution(logits, temperature, top_p, top_k)
    # Walk the candidates from the most probable down: with a cut, only a few are non-zero.
    u = rng.random()
    cumulative = 0.0
    last = 0
    for i in _ranked(probs):
        if probs[i] == 0.0:
            break
        cumulative += probs[i]
        last = i
        if u < cumulative:
            return i
    return last  # u fell in the rounding gap at the very end


def toy_sampling(name: str = "sampling_logits") -> dict:
    """The sampling figure's numbers from its toy data file.

    Returns candidates, logits, probs (temperature as text -> list of probabilities),
    the top-p cut at its temperature (kept indices, kept mass, renormalised probs).
    """
    from tokenwalk.toy import load_toy

    data = load_toy(name)
    logits = data["logits"]
    probs = {str(t): softmax_with_temperature(logits, t) for t in data["temperatures"]}
    base = softmax_with_temperature(logits, data["top_p_temperature"])
    kept = top_p_kept(base, data["top_p"])
    return {
        "context": data["context"],
        "candidates": data["candidates"],
        "logits": logits,
        "temperatures": data["temperatures"],
        "probs": probs,
        "top_p": data["top_p"],
        "top_p_temperature": data["top_p_temperature"],
        "top_p_kept": kept,
        "top_p_kept_mass": math.fsum(base[i] for i in kept),
        "top_p_probs": top_p(base, data["top_p"]),
    }
