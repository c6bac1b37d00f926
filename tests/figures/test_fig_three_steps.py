"""Figure 15, three-steps: 1 token 4.2 ms (SMs 0.014 ms); 295 tokens 4.2 ms both; 2,048 tokens 29 ms,
to scale on one time axis (dense 7B fp16, H100 SXM)."""

import pytest

from figures import three_steps
from tests.support.schematics_svg import NS, check_alt_and_phone, check_labels, rects, rendered_once
from tokenwalk.physics.roofline import step_time
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model

fig = rendered_once(three_steps)


def test_fig15_numbers(fig):
    n, _, _ = fig
    one, balance, prefill = n["steps"]
    assert [s["tokens"] for s in n["steps"]] == [1, 295, 2048]
    assert round(one["step_s"] * 1e3, 1) == 4.2 and round(one["compute_s"] * 1e3, 3) == 0.014
    assert round(balance["memory_s"] * 1e3, 1) == round(balance["compute_s"] * 1e3, 1) == 4.2
    assert round(prefill["step_s"] * 1e3) == 29 and prefill["bound"] == "compute"


def test_fig15_labels(fig):
    _, _, root = fig
    check_labels(root, ("1 token (decode)", "295 tokens", "2,048 tokens (prefill)", "0.014 ms · then waits",
                        "step 4.2 ms", "step 29 ms", "4.2 ms · then waits", "29 ms"))


def test_fig15_lanes_to_scale_on_one_axis(fig):
    """Every bar's width is its milliseconds at one shared scale (within 1 %), and each lane
    (busy + waiting) spans its step."""
    n, _, root = fig
    px_per_ms = float(root.get("data-px-per-ms"))
    model, machine = load_model("dense-7b-fp16"), load_machine("h100-sxm")
    for group, s in zip(root.findall(".//svg:g[@class='step']", NS), n["steps"], strict=False):
        truth = step_time(model, machine, s["tokens"])
        parts = {r.get("data-part"): r for r in group.findall("svg:rect", NS)}
        assert float(parts["bus"].get("width")) == pytest.approx(truth.memory_s * 1e3 * px_per_ms, rel=0.01)
        assert float(parts["sm"].get("width")) == pytest.approx(truth.compute_s * 1e3 * px_per_ms, rel=0.01)
        for lane in ("bus", "sm"):
            total = sum(float(parts[p].get("width")) for p in (lane, lane + "-wait") if p in parts)
            assert total == pytest.approx(truth.step_s * 1e3 * px_per_ms, rel=0.01)
    bus_decode = rects(root, part="bus")[0]
    sm_prefill = rects(root, part="sm")[-1]
    assert float(sm_prefill.get("width")) / float(bus_decode.get("width")) == pytest.approx(
        n["steps"][2]["compute_s"] / n["steps"][0]["memory_s"], rel=0.01)


def test_fig15_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(three_steps, n, root,
                        ("dense 7B in fp16", "H100 SXM", "to scale", "1 token: bus 4.2 ms", "2,048 tokens"))
