"""Figure 14, overlap: bus and SM lanes, tile batch by batch, decode 4.2 ms vs prefill 29 ms, to scale."""

import pytest

from figures import overlap
from tests.support.schematics_svg import NS, check_alt_and_phone, rendered_once, words
from tokenwalk.physics.roofline import step_time
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model

fig = rendered_once(overlap)


def test_fig14_decode_42_ms_prefill_29_ms(fig):
    n, _, root = fig
    assert round(n["decode"]["step_s"] * 1e3, 1) == 4.2 and n["decode"]["bound"] == "memory"
    assert round(n["prefill"]["step_s"] * 1e3) == 29 and n["prefill"]["bound"] == "compute"
    text = words(root)
    assert "the sum of the trips: 4.2 ms" in text and "the sum of the arithmetic: 29 ms" in text
    assert "decode, 1 token" in text and "prefill, 2,048 tokens" in text


def _lane(group, part):
    return [r for r in group.findall("svg:rect", NS) if r.get("data-part") == part]


def test_fig14_lanes_to_scale_on_one_axis(fig):
    """Each lane's busy bars add up to its side's time at one shared scale (within 1 %)."""
    n, _, root = fig
    px_per_ms = float(root.get("data-px-per-ms"))
    model, machine = load_model("dense-7b-fp16"), load_machine("h100-sxm")
    panels = root.findall(".//svg:g[@class='panel']", NS)
    assert [p.get("data-phase") for p in panels] == ["decode", "prefill"]
    for panel in panels:
        truth = step_time(model, machine, int(panel.get("data-tokens")))
        bus, sm = _lane(panel, "bus"), _lane(panel, "sm")
        assert len(bus) == len(sm) == n["batches"]
        assert sum(float(r.get("width")) for r in bus) == pytest.approx(truth.memory_s * 1e3 * px_per_ms, rel=0.01)
        assert sum(float(r.get("width")) for r in sm) == pytest.approx(truth.compute_s * 1e3 * px_per_ms, rel=0.01)


def test_fig14_the_slow_side_never_waits(fig):
    """Decode: trips back to back; prefill: computations back to back after the first trip."""
    _, _, root = fig
    decode, prefill = root.findall(".//svg:g[@class='panel']", NS)
    for lane in (_lane(decode, "bus"), _lane(prefill, "sm")):
        for a, b in zip(lane, lane[1:], strict=False):
            assert float(b.get("x")) == pytest.approx(float(a.get("x")) + float(a.get("width")), abs=0.01)
    # the SMs never compute a batch before it has arrived
    for panel in (decode, prefill):
        for b, s in zip(_lane(panel, "bus"), _lane(panel, "sm"), strict=False):
            assert float(s.get("x")) >= float(b.get("x")) + float(b.get("width")) - 0.01


def test_fig14_double_buffering_layout():
    bus, sm = overlap.double_buffered(1.0, 3.0, 4)
    assert bus == [0.0, 1.0, 4.0, 7.0] and sm == [1.0, 4.0, 7.0, 10.0]
    bus, sm = overlap.double_buffered(3.0, 1.0, 3)
    assert bus == [0.0, 3.0, 6.0] and sm == [3.0, 6.0, 9.0]


def test_fig14_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(overlap, n, root,
                        ("H100 SXM", "dense 7B in fp16", "to scale", "Decode, 1 token", "2,048 tokens", "4.2 ms",
                         "29 ms"))
