"""Figure 24, lifecycle: a model's five states in Ollama on the laptop.

Pull (once, network time), load (disk to memory: the measured cold load of Qwen3.6,
data/measurements/laptop.json, as the namespace's `cold_load_s`), serve (prefill and decode), idle (holding its memory),
unload (after keep_alive, Ollama's default from its documentation, data/cited/article.json).
A request during idle goes straight back to serving; the first request after an unload
pays the whole load again. The two question rhythms under the states are the article's
scenarios (data/cited/article.json): one shorter than keep_alive, one longer.
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "lifecycle"
KIND = "S"
RENDERER = "svg"

NOTE = {"style": "font-size:13px"}
WIDTH = 440  # states stacked: narrow, so the text reads on a phone
MAX_CSS_PX = 520  # and stops growing on a wide column


def alt(inputs: dict) -> str:
    a = inputs
    load, keep = fmt.seconds(a["cold_load_s"]), fmt.comma(a["keep_alive_min"])
    return (f"Ollama's five states for {a['model_title']} ({fmt.gb(a['weights_bytes'])}) on the laptop: "
            f"1 pull, once, network time; 2 load, {load} cold from disk to memory; 3 serve, prefill "
            f"and decode; 4 idle, the model holds its memory; 5 unload after keep_alive, {keep} "
            f"minutes by default. A request while idle is served at once; the first request after an unload "
            f"loads the model again, {load}. A question every {fmt.comma(a['gap_short_min'])} minutes finds "
            f"the model loaded; one every {fmt.comma(a['gap_long_min'])} minutes waits {load} each time.")


def inputs(ctx) -> dict:
    n = ctx.n
    return {
        "model": n["request_model"],
        "model_title": n["request_model_title"],
        "weights_bytes": n["qwen_size_bytes"],
        "cold_load_s": n["cold_load_s"],
        "keep_alive_min": n["ollama_keep_alive_default_min"],
        "gap_short_min": n["sc_keep_alive_gap_short_min"],
        "gap_long_min": n["sc_keep_alive_gap_long_min"],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    """The states top to bottom in a narrow drawing (440 units, capped at MAX_CSS_PX), the two
    ways back on either side, so the text reads at about 11 px on a 360 px phone."""
    from figures._svg import Svg

    a = inputs
    # the load as the prose prints it (n.q_cold_load_s: tokenwalk.format.seconds)
    load_s, keep = fmt.seconds(a["cold_load_s"]), f"{fmt.comma(a['keep_alive_min'])} min"
    states = [
        ("pull", "1 · pull", "once, network time", "muted"),
        ("load", "2 · load", f"{load_s} cold, disk → memory", "accent"),
        ("serve", "3 · serve", "prefill and decode", "compute"),
        ("idle", "4 · idle", "holds its memory", "bus"),
        ("unload", "5 · unload", f"after keep_alive ({keep} default)", "system"),
    ]
    width, box_x, box_w, box_h, gap, top = WIDTH, 128, 224, 50, 22, 54
    height = top + len(states) * (box_h + gap) + 50
    svg = Svg(width, height, title="A model's life in Ollama", desc=alt(a), id_prefix=ID)
    svg.root.set("style", f"max-width:{MAX_CSS_PX}px;margin:0 auto")
    svg.text(4, 18, f"{a['model_title']} in Ollama", "label bold")
    svg.text(4, 38, f"on the laptop ({fmt.gb(a['weights_bytes'])} of weights)", "label")
    ys = []
    cx = box_x + box_w / 2
    for i, (key, name, line, cls) in enumerate(states):
        y = top + i * (box_h + gap)
        ys.append(y)
        g = svg.group("state", **{"data-state": key})
        svg.rect(box_x, y, box_w, box_h, cls, parent=g, rx=8, fill_opacity=0.16)
        svg.rect(box_x, y, box_w, box_h, f"stroke-{cls}" if cls != "system" else "stroke-muted", parent=g, rx=8,
                 stroke_width=2)
        svg.text(cx, y + 21, name, "label bold", anchor="middle", parent=g)
        svg.text(cx, y + 40, line, "label", anchor="middle", parent=g, **NOTE)
        if i:
            # The arrow down from the previous state.
            svg.line(cx, y - gap + 1, cx, y - 4, "stroke-fg", stroke_width=1.5)
            svg.path(f"M{cx} {y - 1} l-4 -7 h8 Z", "fg")
    right, left = box_x + box_w, box_x
    # idle -> serve, on the right: a request within keep_alive.
    yi, ys_ = ys[3] + box_h / 2, ys[2] + box_h / 2
    svg.path(f"M{right + 2} {yi} C{right + 36} {yi} {right + 36} {ys_} {right + 8} {ys_}", "stroke-fg",
             stroke_width=1.5)
    svg.path(f"M{right + 2} {ys_} l7 -4 v8 Z", "fg")
    svg.text(right + 34, (yi + ys_) / 2 - 4, "new", "note", **NOTE)
    svg.text(right + 34, (yi + ys_) / 2 + 13, "request", "note", **NOTE)
    # unload -> load, on the left: the next request pays the load again.
    yu, yl = ys[4] + box_h / 2, ys[1] + box_h / 2
    svg.path(f"M{left - 2} {yu} C{left - 44} {yu} {left - 44} {yl} {left - 8} {yl}", "stroke-accent",
             stroke_width=1.8, stroke_dasharray="6 4")
    svg.path(f"M{left - 2} {yl} l-7 -4 v8 Z", "accent")
    mid = (yu + yl) / 2
    label = svg.text(4, mid - 27, "the next", "label", **{"data-cold-load-s": f"{a['cold_load_s']:g}"}, **NOTE)
    for word in ("request", "loads again:", f"{load_s}"):
        svg._add("tspan", {"x": 4, "dy": 18}, label, word)
    # The two rhythms of the article.
    y = top + len(states) * (box_h + gap) + 14
    for k, gap_min in enumerate((a["gap_short_min"], a["gap_long_min"])):
        stays = gap_min < a["keep_alive_min"]
        verdict = "always loaded" if stays else f"each question waits {load_s} first"
        svg.text(4, y + 24 * k, f"a question every {fmt.comma(gap_min)} min:", "label",
                 **{"data-gap-min": f"{gap_min:g}"})
        svg.text(192, y + 24 * k, verdict, "label bold" if not stays else "label")
    return svg.to_string()
