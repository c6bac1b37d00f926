"""Next-token sampling (figure 5, sampling; section 'Next-token sampling')."""

import math
import random
from collections import Counter

import pytest

from article.toys import toy_sampling
from tokenwalk.physics.sampling import (
    distribution,
    greedy,
    sample,
    softmax_with_temperature,
    top_k,
    top_p,
    top_p_kept,
)


@pytest.fixture(scope="module")
def fig():
    return toy_sampling()


def pct(x, digits=0):
    return round(100 * x, digits)


def test_fig5_logits_run_from_dose_6_1_to_banana_minus_1_5(fig):
    """Figure 5: seven candidates, dose 6.1 ... banana -1.5, in descending order."""
    assert len(fig["candidates"]) == 7
    assert (fig["candidates"][0], fig["logits"][0]) == ("dose", 6.1)
    assert (fig["candidates"][-1], fig["logits"][-1]) == ("banana", -1.5)
    assert fig["logits"] == sorted(fig["logits"], reverse=True)


def test_fig5_t1_dose_65_inr_20_levels_10_banana_0_03(fig):
    """Figure 5 at T = 1: dose 65 %, INR 20 %, levels 10 %, banana 0.03 %."""
    p = fig["probs"]["1.0"]
    assert [pct(x) for x in p[:3]] == [65, 20, 10]
    assert pct(p[6], 2) == 0.03


def test_fig5_t05_dose_90(fig):
    """Figure 5 at T = 0.5: the favourite takes 90 %."""
    assert pct(fig["probs"]["0.5"][0]) == 90


def test_fig5_t2_dose_42_banana_almost_1(fig):
    """Figure 5 at T = 2: dose 42 %, banana climbs to almost 1 %."""
    p = fig["probs"]["2.0"]
    assert pct(p[0]) == 42
    assert 0.8 <= pct(p[6], 2) < 1.0
    assert round(pct(p[6])) == 1


def test_fig5_order_never_changes_with_temperature(fig):
    """Section 'Next-token sampling': temperature reshapes, the order never changes."""
    for t in ("0.5", "1.0", "2.0"):
        p = fig["probs"][t]
        assert p == sorted(p, reverse=True)


def test_fig5_top_p_09_keeps_dose_inr_levels_95(fig):
    """Figure 5: top-p 0.9 at T = 1 keeps dose, INR and levels, which hold 95 %."""
    assert [fig["candidates"][i] for i in fig["top_p_kept"]] == ["dose", "INR", "levels"]
    assert pct(fig["top_p_kept_mass"]) == 95


def test_top_p_leaves_the_survivors_ratios_alone(fig):
    p = fig["probs"]["1.0"]
    q = fig["top_p_probs"]
    assert q[0] / q[1] == pytest.approx(p[0] / p[1])
    assert q[3:] == [0.0] * 4
    assert math.fsum(q) == pytest.approx(1.0)


def test_temperature_zero_is_greedy():
    assert softmax_with_temperature([1.0, 3.0, 2.0], 0) == [0.0, 1.0, 0.0]
    assert greedy([1.0, 3.0, 3.0]) == 1
    assert sample([1.0, 3.0, 2.0], temperature=0) == 1


def test_negative_temperature_is_an_error():
    with pytest.raises(ValueError, match="temperature"):
        softmax_with_temperature([1.0], -1)


def test_softmax_with_temperature_is_stable():
    p = softmax_with_temperature([10000.0, 9999.0], 1.0)
    assert p[0] == pytest.approx(1 / (1 + math.exp(-1)))


def test_top_k_keeps_k_and_renormalises():
    q = top_k([0.5, 0.1, 0.3, 0.1], 2)
    assert q == pytest.approx([0.625, 0.0, 0.375, 0.0])
    assert top_k([0.5, 0.5], 0) == [0.5, 0.5]


def test_top_p_exact_boundary_stops_there():
    assert top_p_kept([0.5, 0.4, 0.1], 0.9) == [0, 1]
    assert top_p([0.5, 0.4, 0.1], 1.0) == [0.5, 0.4, 0.1]


def test_distribution_applies_every_cut():
    q = distribution([3.0, 2.0, 1.0, 0.0], temperature=1.0, top_k=3, top_p=0.5)
    assert q[0] == 1.0 and sum(q) == 1.0


def test_sample_is_reproducible_with_a_seeded_rng():
    logits = [0.1 * i for i in range(50)]
    a = [sample(logits, 1.0, rng=random.Random(7)) for _ in range(3)]
    b = [sample(logits, 1.0, rng=random.Random(7)) for _ in range(3)]
    assert a == b


def test_sample_frequencies_follow_the_probabilities(fig):
    """Figure 5 at T = 1: 20,000 draws land on dose about 65 % of the time."""
    rng = random.Random(1)
    counts = Counter(sample(fig["logits"], 1.0, rng=rng) for _ in range(20000))
    assert counts[0] / 20000 == pytest.approx(fig["probs"]["1.0"][0], abs=0.015)
    assert counts[1] / 20000 == pytest.approx(fig["probs"]["1.0"][1], abs=0.015)


def test_sample_never_leaves_the_nucleus(fig):
    rng = random.Random(2)
    drawn = {sample(fig["logits"], 1.0, top_p=0.9, rng=rng) for _ in range(3000)}
    assert drawn == {0, 1, 2}


def test_sample_with_top_k_1_is_greedy():
    rng = random.Random(3)
    assert {sample([0.0, 5.0, 4.9], 2.0, top_k=1, rng=rng) for _ in range(200)} == {1}


def test_sample_draws_only_from_the_nucleus_that_top_p_kept_gives():
    """The fast draw in sample() and the reference cut top_p_kept() agree on the nucleus."""
    rng = random.Random(11)
    for _ in range(60):
        logits = [round(rng.gauss(0, 2), 1) for _ in range(rng.randrange(2, 60))]
        p = rng.choice([0.3, 0.5, 0.9, 0.95])
        t = rng.choice([0.5, 1.0, 2.0])
        k = rng.choice([0, 5])
        allowed = {i for i, x in enumerate(distribution(logits, t, top_p=p, top_k=k)) if x > 0}
        drawn = {sample(logits, t, top_p=p, top_k=k, rng=rng) for _ in range(200)}
        assert drawn <= allowed


def test_sample_handles_a_real_vocabulary_size():
    """49,152 logits (SmolLM2's vocabulary): every option combination returns a valid index."""
    rng = random.Random(4)
    logits = [rng.gauss(0, 3) for _ in range(49152)]
    for kw in ({}, {"top_p": 0.9}, {"top_k": 20}, {"top_p": 0.95, "top_k": 20}, {"temperature": 0}):
        assert 0 <= sample(logits, rng=rng, **kw) < 49152
