"""Figure 20, chunked-prefill: 50 users 4.2 ms (SMs 17 %); + 245 prompt tokens still 4.2 ms;
+ 1,000 about 15 ms; two separate steps 4.2 + 14 = 18.2 ms (18.3 unrounded). Lanes to scale."""

import pytest

from figures import chunked_prefill
from tests.support.schematics_svg import NS, check_alt_and_phone, check_labels, rendered_once
from tokenwalk.physics.chunked_prefill import mixed_step, separate_steps
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model

fig = rendered_once(chunked_prefill)


def test_fig20_numbers(fig):
    n, _, _ = fig
    st = n["steps"]
    assert n["users"] == 50 and n["free_tokens"] == 245 and n["prompt_tokens"] == 1000
    assert round(st["decode"]["step_s"] * 1e3, 1) == 4.2 and round(st["decode"]["sm_busy_share"] * 100) == 17
    assert st["ride"]["step_s"] == st["decode"]["step_s"]
    assert round(st["mixed"]["step_s"] * 1e3) == 15
    sep = st["separate"]
    assert round(sep["decode_s"] * 1e3, 1) == 4.2 and round(sep["prefill_s"] * 1e3) == 14
    # FIGURES.md adds the rounded parts (4.2 + 14 = 18.2); unrounded 4.18 + 14.14 = 18.32
    assert sep["step_s"] * 1e3 == pytest.approx(18.2, abs=0.15)
    assert sep["step_s"] > st["mixed"]["step_s"]


def test_fig20_labels(fig):
    _, _, root = fig
    check_labels(root, ("50 users decoding", "SMs busy 17 %", "50 + 245 prompt tokens", "rides free",
                        "50 + 1,000 prompt tokens", "≈ 15 ms", "4.2 + 14.1 = 18.3 ms", "two trips"))


def test_fig20_lanes_to_scale_on_one_axis(fig):
    """Bars are milliseconds at one shared scale (within 1 %); each mixed step's two SM parts add up to the
    step's compute; the two separate steps' trips add up to two trips."""
    n, _, root = fig
    px_per_ms = float(root.get("data-px-per-ms"))
    model, machine = load_model("dense-7b-fp16"), load_machine("h100-sxm")
    groups = {g.get("data-step"): g for g in root.findall(".//svg:g[@class='step']", NS)}
    assert list(groups) == ["decode", "ride", "mixed", "separate"]

    def width(group, part):
        return sum(float(r.get("width")) for r in group.findall("svg:rect", NS) if r.get("data-part") == part)

    for key, prompt in (("decode", 0), ("ride", n["free_tokens"]), ("mixed", n["prompt_tokens"])):
        truth = mixed_step(model, machine, n["users"], prompt)
        g = groups[key]
        assert width(g, "bus") == pytest.approx(truth.memory_s * 1e3 * px_per_ms, rel=0.01)
        assert width(g, "sm-decode") + width(g, "sm-prompt") == pytest.approx(truth.compute_s * 1e3 * px_per_ms,
                                                                               rel=0.01)
        assert width(g, "bus-lane") == pytest.approx(truth.step_s * 1e3 * px_per_ms, rel=0.01)
    two = separate_steps(model, machine, n["users"], n["prompt_tokens"])
    g = groups["separate"]
    assert width(g, "bus") == pytest.approx((two.decode.memory_s + two.prefill.memory_s) * 1e3 * px_per_ms, rel=0.01)
    assert width(g, "bus-lane") == pytest.approx(two.total_s * 1e3 * px_per_ms, rel=0.01)
    # the 1,000-token step is shorter than the two separate steps, by about one trip
    assert width(groups["mixed"], "bus-lane") < width(g, "bus-lane")


def test_fig20_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(chunked_prefill, n, root,
                        ("dense 7B in fp16", "H100 SXM", "to scale", "50 users", "245 prompt", "1,000 prompt",
                         "18.3 ms"))
