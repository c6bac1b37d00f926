"""Figure 11, memory-ladder: one H100 SXM server as a ladder of memories, dense 7B in fp16.

Rungs from the top: NVMe SSD, host RAM, HBM3, L2 cache, SM shared memory
(`tokenwalk.specs.machine.memory_ladder`). Between two rungs, the link's bandwidth and the
time to move the whole model (14 GB) across it (`tokenwalk.physics.roofline.memory_time_s`): the
two upper links are paid once, at load; the HBM bus at every step; the two on-chip rungs
never hold the model whole. Box widths only suggest "larger above"; they are not to scale.
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "memory-ladder"
KIND = "S"
RENDERER = "svg"

# When a link is crossed, by the role of the rung above it (memory_ladder's `role`).
WHEN = {"disk": "once, at load", "host": "once, at load", "vram": "at every step"}
# The link's name when the rung's name does not carry one ("host RAM over PCIe 5.0 x16").
LINK = {"disk": "SSD read", "vram": "memory bus"}

NOTE = {"style": "font-size:13px"}
WIDTH = 440  # narrow, so its text reads on a phone
MAX_CSS_PX = 520  # and stops growing on a wide column


_time = fmt.duration  # two significant digits in s or ms: 2 s, 220 ms, 4.2 ms
_bandwidth = fmt.bandwidth  # 128 GB/s, 3.35 TB/s


def _split(name: str) -> tuple[str, str | None]:
    """'host RAM over PCIe 5.0 x16' -> ('host RAM', 'PCIe 5.0 x16')."""
    memory, _, via = name.partition(" over ")
    return memory, (via or None)


def alt(inputs: dict) -> str:
    parts = []
    for rung in inputs["rungs"]:
        memory, via = _split(rung["name"])
        text = f"{memory} ({rung['capacity_label']})"
        if rung["move_s"] is not None:
            link = via or LINK.get(rung["role"], "link")
            text += (f", then {link} at {_bandwidth(rung['bandwidth_gbs'])}: {_time(rung['move_s'])}, "
                     f"{WHEN.get(rung['role'], '')}")
        parts.append(text)
    return (f"The memory ladder of one server with an H100 SXM, from the disk down to the SMs, with the time "
            f"to move the whole dense 7B in fp16 ({fmt.gb(inputs['weights_bytes'], 0)}) across each link: " + "; ".join(parts)
            + ". The two on-chip rungs never hold the whole model.")


def inputs_for(weights_bytes: float, ladder: list[dict]) -> dict:
    """The figure's inputs from the model's bytes and the namespace's `ladder` rows."""
    return {
        "weights_bytes": weights_bytes,
        "rungs": [{"name": r["name"], "role": r["role"], "bandwidth_gbs": r["bandwidth_gbs"],
                   "capacity_label": r["capacity"], "count": r["count"], "move_s": r["move_s"]} for r in ladder],
    }


def inputs(ctx) -> dict:
    """Each rung and the time to move the H100 example's weights across its link (n.ladder)."""
    return inputs_for(ctx.n["d7_size_gb"] * 1e9, ctx.n["ladder"])


def render(inputs: dict, out: pathlib.Path) -> str:
    """A narrow drawing (440 units, capped at MAX_CSS_PX): rungs on the left, each link's
    bandwidth and time on the right, so the text reads at about 11 px on a 360 px phone."""
    from figures._svg import Svg

    rungs = inputs["rungs"]
    width, box_h, gap, top = WIDTH, 46, 66, 4
    centre, link_x = 100, 214
    widths = [192 - 8 * i for i in range(len(rungs))]  # narrower going down: larger above, not to scale
    height = top + len(rungs) * box_h + (len(rungs) - 1) * gap + 6
    svg = Svg(width, height, title="The memory ladder of an H100 server", desc=alt(inputs), id_prefix=ID)
    svg.root.set("style", f"max-width:{MAX_CSS_PX}px;margin:0 auto")
    for i, rung in enumerate(rungs):
        y = top + i * (box_h + gap)
        memory, via = _split(rung["name"])
        w = widths[i]
        g = svg.group("rung", **{"data-role": rung["role"]})
        vram = rung["role"] == "vram"
        svg.rect(centre - w / 2, y, w, box_h, "free", parent=g, rx=6)
        svg.rect(centre - w / 2, y, w, box_h, "stroke-bus" if vram else "stroke-muted", parent=g, rx=6,
                 stroke_width=2.5 if vram else 1)
        svg.text(centre, y + 19, memory, "label bold", anchor="middle", parent=g)
        detail = rung["capacity_label"] + (" · the weights" if vram else "")
        svg.text(centre, y + 37, detail, "note", anchor="middle", parent=g, **NOTE)
        if i == len(rungs) - 1:
            continue
        # The link below this rung.
        y0, y1 = y + box_h, y + box_h + gap
        link = svg.group("link", **{"data-role": rung["role"]})
        if rung["move_s"] is not None:
            every_step = WHEN.get(rung["role"]) == "at every step"
            cls = "stroke-bus" if every_step else "stroke-muted"
            svg.line(centre, y0 + 4, centre, y1 - 10, cls, parent=link, stroke_width=4 if every_step else 2)
            svg.path(f"M{centre - 7} {y1 - 12} L{centre} {y1 - 3} L{centre + 7} {y1 - 12} Z",
                     "bus" if every_step else "muted", parent=link)
            name = via or LINK.get(rung["role"], "link")
            svg.text(link_x, y0 + 17, f"{name} · {_bandwidth(rung['bandwidth_gbs'])}", "label", parent=link)
            svg.text(link_x, y0 + 36, f"{fmt.gb(inputs['weights_bytes'], 0)} in {_time(rung['move_s'])}", "label num bold", parent=link,
                     **{"data-move-s": f"{rung['move_s']:.6g}"})
            svg.text(link_x, y0 + 54, WHEN.get(rung["role"], ""), "note", parent=link, **NOTE)
        else:
            svg.line(centre, y0 + 4, centre, y1 - 4, "stroke-grid", parent=link, stroke_width=2,
                     stroke_dasharray="3 4")
            svg.text(link_x, y0 + 26, "on chip: tiles pass through,", "note", parent=link, **NOTE)
            svg.text(link_x, y0 + 44, "never the whole model", "note", parent=link, **NOTE)
        if rung["role"] == "host":
            # Where a file becomes a model in service.
            ym = (y0 + y1) / 2 + 4
            svg.line(2, ym, link_x - 14, ym, "stroke-accent", stroke_width=1.5, stroke_dasharray="6 4")
            svg.text(4, ym - 6, "loaded ↓", "note", **NOTE)
    return svg.to_string()
