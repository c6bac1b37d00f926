"""Figure 24, lifecycle: a model's five states in Ollama on the laptop.

Pull (once, network time), load (disk to memory: the measured cold load of Qwen3.6,
data/measurements/laptop.json), serve (prefill and decode), idle (holding its memory),
unload (after keep_alive, Ollama's default from its documentation, data/cited/article.json).
A request during idle goes straight back to serving; the first request after an unload
pays the whole load again. The two question rhythms under the states are the article's
scenarios (data/cited/article.json): one shorter than keep_alive, one longer.
"""

from __future__ import annotations

import pathlib

ID = "lifecycle"
KIND = "S"
RENDERER = "svg"

NOTE = {"style": "font-size:13px"}


def alt(inputs: dict) -> str:
    a = inputs
    return (f"Ollama's five states for {a['model_title']} ({a['weights_bytes'] / 1e9:.1f} GB) on the laptop: "
            f"1 pull, once, network time; 2 load, {a['cold_load_s']:g} s cold from disk to memory; 3 serve, prefill "
            f"and decode; 4 idle, the model holds its memory; 5 unload after keep_alive, {a['keep_alive_min']:g} "
            f"minutes by default. A request while idle is served at once; the first request after an unload "
            f"loads the model again, {a['cold_load_s']:g} s. A question every {a['gap_short_min']:g} minutes finds "
            f"the model loaded; one every {a['gap_long_min']:g} minutes waits {a['cold_load_s']:g} s each time.")


def inputs() -> dict:
    from tokenwalk.data_refs import read_data_json, resolve
    from tokenwalk.model_spec import load_model

    load = read_data_json("measurements/laptop.json")["values"]["cold_load_s"]
    model = load_model(load["model"])
    scenario = read_data_json("cited/article.json")["scenarios"]["values"]
    return {
        "model": model.name,
        "model_title": "Qwen3.6 35B-A3B" if model.name == "qwen3.6-35b-a3b" else model.name,
        "weights_bytes": model.size_bytes,
        "cold_load_s": load["value"],
        "keep_alive_min": resolve({"from": "cited/article.json", "key": "ollama_keep_alive_default_min"}),
        "gap_short_min": scenario["keep_alive_gap_short_min"]["value"],
        "gap_long_min": scenario["keep_alive_gap_long_min"]["value"],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._svg import Svg

    a = inputs
    load_s, keep = f"{a['cold_load_s']:g} s", f"{a['keep_alive_min']:g} min"
    states = [
        ("pull", "1 · pull", ("once,", "network time"), "muted"),
        ("load", "2 · load", (f"{load_s} cold,", "disk → memory"), "accent"),
        ("serve", "3 · serve", ("prefill", "and decode"), "compute"),
        ("idle", "4 · idle", ("holds", "its memory"), "bus"),
        ("unload", "5 · unload", ("after", "keep_alive,", f"{keep} default"), "system"),
    ]
    width, box_w, gap, x_start = 640, 116, 10, 10
    box_y, box_h = 74, 100
    height = 330
    svg = Svg(width, height, title="A model's life in Ollama", desc=alt(a), id_prefix=ID)
    svg.text(x_start, 20, f"{a['model_title']} in Ollama on the laptop ({a['weights_bytes'] / 1e9:.1f} GB)",
             "label bold")
    centres = []
    for i, (key, name, lines, cls) in enumerate(states):
        x = x_start + i * (box_w + gap)
        centres.append(x + box_w / 2)
        g = svg.group("state", **{"data-state": key})
        svg.rect(x, box_y, box_w, box_h, cls, parent=g, rx=8, fill_opacity=0.16)
        svg.rect(x, box_y, box_w, box_h, f"stroke-{cls}" if cls != "system" else "stroke-muted", parent=g, rx=8,
                 stroke_width=2)
        svg.text(x + box_w / 2, box_y + 26, name, "label bold", anchor="middle", parent=g)
        for k, line in enumerate(lines):
            svg.text(x + box_w / 2, box_y + 50 + 18 * k, line, "note", anchor="middle", parent=g, **NOTE)
        if i:
            # The arrow from the previous state.
            ya = box_y + box_h / 2
            svg.line(x - gap + 1, ya, x - 3, ya, "stroke-fg", stroke_width=1.5)
            svg.path(f"M{x - 2} {ya} l-6 -4 v8 Z", "fg")
    # idle -> serve: a request within keep_alive.
    s, i_ = centres[2], centres[3]
    svg.path(f"M{i_} {box_y - 2} C{i_} {box_y - 34} {s} {box_y - 34} {s} {box_y - 8}", "stroke-fg",
             stroke_width=1.5)
    svg.path(f"M{s} {box_y - 2} l-4 -7 h8 Z", "fg")
    svg.text((s + i_) / 2, box_y - 32, "new request", "note", anchor="middle", **NOTE)
    # unload -> load: the next request pays the load again.
    u, l_ = centres[4], centres[1]
    yb = box_y + box_h
    svg.path(f"M{u} {yb + 2} C{u} {yb + 56} {l_} {yb + 56} {l_} {yb + 8}", "stroke-accent", stroke_width=1.8,
             stroke_dasharray="6 4")
    svg.path(f"M{l_} {yb + 2} l-4 7 h8 Z", "accent")
    svg.text((u + l_) / 2, yb + 62, f"the next request loads it again: {load_s}", "label", anchor="middle",
             **{"data-cold-load-s": f"{a['cold_load_s']:g}"})
    # The two rhythms of the article.
    y = yb + 104
    for k, gap_min in enumerate((a["gap_short_min"], a["gap_long_min"])):
        stays = gap_min < a["keep_alive_min"]
        verdict = "always loaded" if stays else f"each question first waits {load_s}"
        svg.text(x_start, y + 24 * k, f"a question every {gap_min:g} min:", "label", **{"data-gap-min": f"{gap_min:g}"})
        svg.text(x_start + 200, y + 24 * k, verdict, "label bold" if not stays else "label")
    return svg.to_string()
