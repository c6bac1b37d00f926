"""Figure 17, accounting-execution: 2,048-token prefill of the 7B on an H100: bytes 4.2 ms, ops 29 ms;
per layer max(0.13, 0.9) ms x 32 = 29 ms; both levels to scale on one axis."""

import pytest

from figures import accounting_execution as fig17
from tests.support.schematics_svg import NS, check_alt_and_phone, check_labels, rendered_once
from tokenwalk.physics.roofline import step_time
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model

fig = rendered_once(fig17)


def test_fig17_numbers(fig):
    n, _, _ = fig
    assert n["tokens"] == 2048 and n["layers"] == 32
    assert round(n["memory_ms"], 1) == 4.2 and round(n["compute_ms"]) == 29 and n["step_ms"] == n["compute_ms"]
    assert round(n["layer_memory_ms"], 2) == 0.13 and round(n["layer_compute_ms"], 1) == 0.9
    # the two levels agree: 32 layers of the slower side = the step's slower total
    assert n["layers"] * max(n["layer_memory_ms"], n["layer_compute_ms"]) == pytest.approx(n["step_ms"], rel=0.001)


def test_fig17_labels(fig):
    _, _, root = fig
    check_labels(root, ("14 GB ÷ 3.35 TB/s = 4.2 ms", "2,048 × 14 G ÷ 990 T/s = 29 ms",
                        "step = max(4.2, 29) = 29 ms", "32 layers in a row", "max(0.13, 0.9) ms", "32 × 0.9 = 29 ms",
                        "layer 1", "layer 32"))


def test_fig17_both_levels_to_scale_on_one_axis(fig):
    n, _, root = fig
    px_per_ms = float(root.get("data-px-per-ms"))
    truth = step_time(load_model("dense-7b-fp16"), load_machine("h100-sxm"), 2048)
    rects = list(root.iter("{http://www.w3.org/2000/svg}rect"))

    def widths(part):
        return [float(r.get("width")) for r in rects if r.get("data-part") == part]

    assert widths("bytes")[0] == pytest.approx(truth.memory_s * 1e3 * px_per_ms, rel=0.01)
    assert widths("ops")[0] == pytest.approx(truth.compute_s * 1e3 * px_per_ms, rel=0.01)
    assert len(widths("layer-ops")) == len(widths("layer-bytes")) == 32
    assert sum(widths("layer-ops")) == pytest.approx(truth.compute_s * 1e3 * px_per_ms, rel=0.01)
    assert sum(widths("layer-bytes")) == pytest.approx(truth.memory_s * 1e3 * px_per_ms, rel=0.01)
    # layers run in a row: each starts where the previous one's operations end
    ops = [r for r in rects if r.get("data-part") == "layer-ops"]
    for a, b in zip(ops, ops[1:], strict=False):
        assert float(b.get("x")) == pytest.approx(float(a.get("x")) + float(a.get("width")), abs=0.01)
    assert [g.get("data-level") for g in root.findall(".//svg:g[@class='level']", NS)] == ["accounting", "execution"]


def test_fig17_alt_and_phone(fig):
    n, _, root = fig
    check_alt_and_phone(fig17, n, root,
                        ("2,048 tokens", "dense 7B in fp16", "H100 SXM", "to scale", "4.2 ms", "29 ms", "32 layers"))
