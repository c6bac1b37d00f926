"""One row of attention: dot products, a masked softmax, and the weighted sum of values.

Pure Python (standard library only) so that it runs in the reader's browser. Scores are
plain floats; a masked score is ``-inf`` (``float("-inf")``), whose weight after the
softmax is exactly 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

NEG_INF = float("-inf")


def dot(x: Sequence[float], w: Sequence[float]) -> float:
    """Dot product of two vectors of the same length (unitless)."""
    if len(x) != len(w):
        raise ValueError(f"dot: lengths differ ({len(x)} and {len(w)})")
    return math.fsum(a * b for a, b in zip(x, w, strict=False))


def softmax(scores: Sequence[float]) -> list[float]:
    """Weights in [0, 1] that sum to 1, one per score.

    Stable: the largest finite score is subtracted before exponentiating, so scores in
    the thousands do not overflow. ``-inf`` scores (masked keys) get weight 0. A row that
    is masked entirely has no meaningful softmax and raises ValueError.
    """
    finite = [s for s in scores if s != NEG_INF]
    if not finite:
        raise ValueError("softmax: every score is masked (-inf)")
    if any(math.isnan(s) or s == math.inf for s in finite):
        raise ValueError("softmax: scores must be finite or -inf")
    top = max(finite)
    exps = [0.0 if s == NEG_INF else math.exp(s - top) for s in scores]
    total = math.fsum(exps)
    return [e / total for e in exps]


def causal_mask(scores: Sequence[float], mask_from: int | None) -> list[float]:
    """Scores with every key at index >= mask_from (0-based) set to -inf.

    ``mask_from`` is the index of the first key the query may not see: for the query of
    token t (1-based) in a sequence it is t, i.e. keys 1..t stay visible. None masks nothing.
    """
    if mask_from is None:
        return list(scores)
    return [s if i < mask_from else NEG_INF for i, s in enumerate(scores)]


def attention_row(
    scores: Sequence[float],
    values: Sequence[Sequence[float]] | None = None,
    mask_from: int | None = None,
):
    """The softmax weights of one query's row of scores, optionally applied to values.

    scores: q·k (already scaled by 1/sqrt(d_k) if the caller wants that), one per key;
        ``-inf`` marks a key that is already masked.
    mask_from: 0-based index of the first key hidden by the causal mask (None: no mask).
    values: one value vector per key. Without values, returns the list of weights; with
        values, returns ``(weights, output)`` where output is the weighted sum of the
        values (a vector as long as one value).
    """
    weights = softmax(causal_mask(scores, mask_from))
    if values is None:
        return weights
    if len(values) != len(weights):
        raise ValueError(f"attention_row: {len(weights)} scores but {len(values)} values")
    width = len(values[0]) if values else 0
    output = [math.fsum(w * v[j] for w, v in zip(weights, values, strict=False) if w) for j in range(width)]
    return weights, output


def scaled_scores(query: Sequence[float], keys: Sequence[Sequence[float]]) -> list[float]:
    """q·k / sqrt(d_k) for each key, d_k being the length of the query."""
    scale = 1.0 / math.sqrt(len(query))
    return [dot(query, k) * scale for k in keys]


def causal_weights(score_rows: Sequence[Sequence[float]]) -> list[list[float]]:
    """Softmax weights of a causal score matrix given as its lower triangle.

    Row t (0-based) holds the scores of query t with keys 0..t; the keys after it are
    masked, so each row's softmax runs over its own visible keys only. Adding a row never
    changes the rows above it: that is the causal mask's whole point.
    """
    for t, row in enumerate(score_rows):
        if len(row) != t + 1:
            raise ValueError(f"causal_weights: row {t + 1} has {len(row)} scores, expected {t + 1}")
    return [softmax(row) for row in score_rows]


def softmaxes_per_decode_step(model) -> int:
    """Attention softmaxes in one decode step: one per query head in every layer that
    attends over the cache (GPT-3: 96 layers x 96 heads = 9,216; figure 8)."""
    from tokenwalk.physics.kv_cache import kv_layers

    return kv_layers(model) * int(model.head_count)
