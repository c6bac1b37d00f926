"""Figure 11, memory-ladder: NVMe 7 GB/s -> 2 s; PCIe 5.0 64 GB/s -> 220 ms; HBM3 80 GB at
3.35 TB/s -> 4.2 ms; L2 50 MB; 228 KB x 132 SMs (14 GB of the dense 7B in fp16)."""

import pytest

from figures import memory_ladder
from tests.support.schematics_svg import NS, check_labels, check_phone_legible, render, rendered_once, words
from tokenwalk.physics.roofline import memory_time_s
from tokenwalk.specs.machine import memory_ladder as ladder
from tokenwalk.specs.model import load_model

fig = rendered_once(memory_ladder)


def test_fig11_times_to_move_14_gb(fig):
    n, _, root = fig
    assert round(n["weights_bytes"] / 1e9) == 14
    moves = {r["role"]: r["move_s"] for r in n["rungs"]}
    assert round(moves["disk"]) == 2
    assert round(moves["host"] * 1e3, -1) == 220
    assert round(moves["vram"] * 1e3, 1) == 4.2
    assert moves["l2"] is None and moves["sm"] is None
    # the figure prints what tokenwalk computed
    model = load_model("dense-7b-fp16")
    drawn = [float(t.get("data-move-s")) for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("data-move-s")]
    expected = [memory_time_s(model.size_bytes, r.bandwidth_gbs) for r in ladder() if r.bandwidth_gbs]
    assert drawn == pytest.approx(expected, rel=1e-5)


def test_fig11_labels(fig):
    _, _, root = fig
    check_labels(root, ("14 GB in 2 s", "7 GB/s", "64 GB/s", "14 GB in 220 ms", "3.35 TB/s", "14 GB in 4.2 ms",
                        "80 GB", "50 MB", "228 KB", "132 SMs", "at every step", "once, at load", "PCIe 5.0"))
    # five rungs, top (disk) to bottom (SM shared memory)
    roles = [g.get("data-role") for g in root.findall(".//svg:g[@class='rung']", NS)]
    assert roles == ["disk", "host", "vram", "l2", "sm"]


def test_fig11_alt_states_the_domain(fig):
    n, _, _ = fig
    alt = memory_ladder.alt(n).replace("\u00a0", " ")  # tokenwalk.format joins number and unit with a no-break space
    for part in ("H100 SXM", "dense 7B in fp16", "14 GB", "2 s", "220 ms", "4.2 ms", "every step"):
        assert part in alt, part


def test_fig11_legible_on_a_phone(fig):
    check_phone_legible(fig[2])


def test_fig11_follows_the_ladder_data(tmp_path):
    """A faster disk changes the figure's first time (the numbers come from the data, not the code)."""
    from tests.support.context import default_context

    rows = default_context().n["ladder"]
    size = load_model("dense-7b-fp16").size_bytes
    faster = [r if r["role"] != "disk" else {**r, "bandwidth_gbs": 14.0, "move_s": memory_time_s(size, 14.0)}
              for r in rows]
    n = memory_ladder.inputs_for(size, faster)
    _, _, root = render(memory_ladder, tmp_path, n)
    assert "14 GB in 1 s" in words(root)
