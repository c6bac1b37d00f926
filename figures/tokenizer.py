"""Figure 1, tokenizer (static rendering): a byte-level BPE trained on one clinical
paragraph cuts the default sentence; five counters.

Domain: tokenwalk.text.bpe trained with the settings of tokenwalk/data/toy/tokenizer.json on
the paragraph content/request/tokenizer-paragraph.txt. The interactive layer (another
module) enhances the returned container: its data attributes carry the counts, the
settings and the training paragraph, so the browser can retrain the same tokenizer with
the same core and cut whatever the reader types. Beside it, the figure writes the compact
vocabulary of the request's tokenizer model (SmolLM2: tokens, types, merges) that the
interactive layer cuts the same text with, `figures/tokenizer/<model>-vocab.json`.
"""

from __future__ import annotations

import hashlib
import html
import json
import pathlib
import re

from article.toys import toy_tokenizer
from figures._svg import Svg, nested_wide_style
from tokenwalk import format as fmt

ID = "tokenizer"
KIND = "I"
RENDERER = "svg"

WIDTH = 640
CHAR_W = 8.7  # monospace advance at 14 px, with a margin
CHIP_H = 28
ROOT = pathlib.Path(__file__).resolve().parents[1]  # the request names its model file from here
HASH_BYTES = 4 << 20  # the key reads the file's head: SmolLM2's header (1.8 MB) lies well inside
COUNTERS = [("characters", "characters"), ("utf8_bytes", "UTF-8 bytes"), ("words", "words"),
            ("tokens", "tokens"), ("vocabulary", "vocabulary")]


def _vocab_source(model_file: str, name: str) -> dict:
    """The request's tokenizer model: its file, its name and a digest of its head (so a new
    file changes the figure's key); "missing" when the file is absent (toy tokenizer only)."""
    path = ROOT / model_file
    if not path.is_file():
        return {"file": model_file, "name": name, "missing": True}
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read(HASH_BYTES)).hexdigest()[:16]
    return {"file": model_file, "name": name, "head_sha256": digest}


def inputs(ctx) -> dict:
    request = ctx.scenario.request
    paragraph = request.tokenizer_paragraph
    return {**toy_tokenizer(paragraph), "paragraph": paragraph,
            "vocab": _vocab_source(request.tokenizer_model_file, request.tokenizer_model_name)}


def vocab_file_name(name: str) -> str:
    """'SmolLM2-135M-Instruct' -> 'smollm2-135m-instruct-vocab.json'."""
    return (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model") + "-vocab.json"


def write_vocab(source: dict, out: pathlib.Path) -> str:
    """The tokenizer model's vocabulary, token types and merges as compact JSON in `out`;
    its page-relative URL, or '' if the model file is missing."""
    if source.get("missing"):
        return ""
    from tokenwalk_app.entry import vocab_file_data

    data = vocab_file_data(ROOT / source["file"])
    data["name"] = source.get("name", "")
    file_name = vocab_file_name(source.get("name", ""))
    (out / file_name).write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return f"figures/{ID}/{file_name}"


def show_piece(piece: str) -> str:
    """A piece as the figure prints it: a leading space as '·', a newline as '↵'."""
    return piece.replace(" ", "·").replace("\n", "↵").replace("\t", "→")


def alt(inputs: dict) -> str:
    c = inputs["counts"]
    return (f"A byte-level BPE tokenizer trained on one clinical paragraph ({inputs['n_merges']} merges "
            f"on top of {inputs['base_symbols']} byte symbols) cuts '{inputs['sentence']}' into "
            f"{c['tokens']} pieces: " + " | ".join(show_piece(p) for p in inputs["pieces"])
            + f". {c['characters']} characters, {c['utf8_bytes']} UTF-8 bytes, {c['words']} words, "
            f"{c['tokens']} tokens, vocabulary {c['vocabulary']}.")


ALT = alt


def _layout(pieces: list[str], width: float) -> list[tuple[float, int, float]]:
    """x, line and chip width of each piece, wrapping at `width`."""
    out, x, line = [], 10.0, 0
    for p in pieces:
        w = len(show_piece(p)) * CHAR_W + 12
        if x + w > width - 10:
            x, line = 10.0, line + 1
        out.append((x, line, w))
        x += w + 4
    return out


def render(inputs: dict, out: pathlib.Path) -> str:
    pieces, c = inputs["pieces"], inputs["counts"]
    chips = _layout(pieces, WIDTH)
    lines = chips[-1][1] + 1 if chips else 1
    top = 40
    counters_y = top + lines * (CHIP_H + 8) + 16
    height = counters_y + 108
    svg = Svg(WIDTH, height, id_prefix="fig-tokenizer",
              title="A byte-level BPE tokenizer cuts a sentence into pieces", desc=alt(inputs))
    svg.text(10, 22, f"“{inputs['sentence']}”", "title")
    g = svg.group("token-pieces")
    for k, (piece, (x, line, w)) in enumerate(zip(pieces, chips, strict=False)):
        y = top + line * (CHIP_H + 8)
        svg.rect(x, y, w, CHIP_H, "highlight" if k % 2 == 0 else "free", parent=g, rx=4,
                 style="stroke:var(--fig-grid,#d9d9de)")
        svg.text(x + 6, y + CHIP_H / 2 + 5, show_piece(piece), "mono", parent=g, data_index=k)
    box_w = (WIDTH - 20) / len(COUNTERS)
    for k, (key, label) in enumerate(COUNTERS):
        x = 10 + k * box_w
        svg.rect(x + 2, counters_y, box_w - 4, 72, "free", rx=6)
        svg.text(x + box_w / 2, counters_y + 26, label, None, anchor="middle")
        svg.text(x + box_w / 2, counters_y + 56, fmt.comma(c[key]), "num bold", anchor="middle",
                 style="font-size:24px", data_counter=key)
    svg.text(10, counters_y + 98, f"vocabulary = {inputs['base_symbols']} byte symbols of the paragraph "
                                  f"+ {inputs['n_merges']} merges; · is a space")
    attrs = {
        "class": "tw-interactive tw-tokenizer",
        "data-figure": ID,
        "data-sentence": inputs["sentence"],
        "data-n-merges": str(inputs["n_merges"]),
        "data-base-symbols": str(inputs["base_symbols"]),
        "data-vocab": write_vocab(inputs["vocab"], out),
        "data-vocab-name": inputs["vocab"].get("name", ""),
        "data-paragraph": inputs["paragraph"],
        "data-pieces": json.dumps(inputs["pieces"], ensure_ascii=False),
        **{f"data-{key.replace('_', '-')}": str(c[key]) for key, _ in COUNTERS},
    }
    # Nested in this <div>, the SVG misses the page's phone rule for wide drawings: it keeps a legible
    # width itself and the <div> scrolls sideways (no effect where the column is wider).
    wide = nested_wide_style(WIDTH)
    if wide:
        svg.root.set("style", wide)
        attrs["style"] = "overflow-x:auto"
    attr_text = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    # Said in the figure's own markup (reader views, text browsers); the interactive layer's CSS
    # hides .tw-nojs once JavaScript runs.
    note = ("This is the example sentence, cut once. The interactive version, where you type your own "
            "text, needs JavaScript.")
    return f'<div {attr_text}>{svg.to_string()}<p class="tw-nojs">{note}</p></div>'
