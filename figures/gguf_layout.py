"""Figure 9, gguf-layout: a GGUF file as four bands, with the metadata keys that matter.

Domain: the header of Qwen3.6 35B-A3B Q4_K_M (the preset's description of the real file:
GGUF v3, 753 tensors, 36 keys, 21,718,480,960 bytes). `inputs_for_model(model)` gives
the same inputs for any model spec that carries a GGUF description (tokenwalk's
model_from_gguf of a header), so a real file (the SmolLM2 test model) renders through the
same code. Band heights are schematic (the tensor data is
nearly the whole file); the figure says so.
"""

from __future__ import annotations

import pathlib

from figures._svg import Svg
from tokenwalk import format as fmt

ID = "gguf-layout"
KIND = "S"
RENDERER = "svg"


# The keys worth a reader's attention, by suffix after "<architecture>.", in the order
# the figure lists them, with what each means. `{...}` fields come from the ModelSpec.
KEY_NOTES = [
    ("general.architecture", "the prefix of every model key"),
    ("block_count", "{block_note}"),
    ("embedding_length", "width of the residual stream"),
    ("feed_forward_length", "width of the MLP"),
    ("attention.head_count", "query heads"),
    ("attention.head_count_kv", "key-value sets (grouped-query attention)"),
    ("attention.key_length", "numbers per key: the head size"),
    ("full_attention_interval", "1 layer in {full_attention_interval} is full attention: "
                                "{kv_layers} keep a KV cache"),
    ("context_length", "longest context, in tokens"),
    ("expert_count", "experts in each layer's MLP"),
    ("expert_used_count", "experts a token runs"),
    ("expert_feed_forward_length", "width of one expert"),
    ("tokenizer.ggml.merges", "the BPE merges, in order"),
]

# Geometry (viewBox units): bands on the left, keys on the right.
WIDTH = 640
LEFT_X, LEFT_W = 10, 262
RIGHT_X = 296
MONO_CHARS = 43         # characters of 13-unit monospace that fit in the right column
LINE = 17


def inputs(ctx) -> dict:
    return inputs_for_model(ctx.scenario.laptop_request.model)


def inputs_for_model(model) -> dict:
    """Inputs from a ModelSpec that carries a GGUF description (`model.gguf`)."""
    g = model.gguf or {}
    arch = model.architecture or ""
    by_key = {m["key"]: m for m in g.get("metadata", [])}
    keys = []
    for suffix, note in KEY_NOTES:
        key = suffix if suffix.startswith(("general.", "tokenizer.")) else f"{arch}.{suffix}"
        if key not in by_key:
            continue
        block_note = f"{model.layers} layers"
        if model.mtp_layers:
            block_note += f" + {model.mtp_layers} for multi-token prediction"
        keys.append({**by_key[key], "note": note.format(block_note=block_note, kv_layers=model.kv_layers,
                                                         full_attention_interval=model.full_attention_interval)})
    types = g.get("tensor_types") or model.tensor_types
    return {
        "title": model.title or model.name,
        "file": g.get("file"),
        "version": g.get("version"),
        "tensor_count": g.get("tensor_count"),
        "kv_count": g.get("kv_count"),
        "file_bytes": g.get("file_bytes", model.size_bytes),
        "alignment": g.get("alignment"),
        "band_bytes": g.get("band_bytes"),
        "data_share": g.get("data_share"),
        "keys": keys,
        "tensors": g.get("tensors", []),
        "tensor_types": {name: (row or {}).get("bits_per_weight", model.tensor_types.get(name, {}).get(
            "bits_per_weight")) for name, row in types.items()},
        "bits_per_weight": g.get("bits_per_weight") or model.bits_per_weight,
    }


def _value(entry: dict) -> str:
    if "count" in entry:
        items = []
        text = f"[{entry['count']} entries]"
        for item in entry.get("head", []):
            candidate = items + [repr(item)]
            trial = f"[{entry['count']} entries: {', '.join(candidate)}, …]"
            if len(trial) > MONO_CHARS - 2:     # a wrapped value is indented
                break
            items = candidate
            text = trial
        return text
    value = entry.get("value")
    if isinstance(value, float):
        return fmt.comma(value)
    return str(value)


def alt(inputs: dict) -> str:
    keys = "; ".join(f"{k['key']} = {_value(k)}" for k in inputs["keys"])
    return (f"A GGUF file ({inputs['title']}, {fmt.bytes_si(inputs['file_bytes'])}) as four bands, top to bottom: "
            f"a header (the bytes GGUF, version {inputs['version']}, {inputs['tensor_count']} tensors, "
            f"{inputs['kv_count']} metadata keys), the metadata, the tensor table (each tensor's name, shape, "
            f"format and offset) and the tensor data, nearly the whole file. Band heights are schematic. "
            f"The metadata keys that matter: {keys}.")


ALT = alt


def render(inputs: dict, out: pathlib.Path) -> str:
    return draw(inputs)


def draw(inputs: dict) -> str:
    """The SVG (a string) for figure inputs from `inputs()` or `inputs_for_model()`."""
    keys = inputs["keys"]
    more = (inputs["kv_count"] or 0) - len(keys)
    wrapped = [len(f"{k['key']} = {_value(k)}") > MONO_CHARS for k in keys]
    list_h = 26 + (len(keys) + sum(wrapped)) * LINE + len(keys) * (LINE + 6) + (LINE if more > 0 else 0)
    top = 58
    table_h = 38 + LINE * (1 + 2 * len(inputs["tensors"]))
    header_h, meta_h = 66, 112
    bands_h = max(list_h, header_h + meta_h + table_h + 150)
    height = top + bands_h + 34
    svg = Svg(WIDTH, height, id_prefix="fig-gguf-layout",
              title=f"The layout of a GGUF file: {inputs['title']}", desc=alt(inputs))
    svg.text(LEFT_X, 22, f"GGUF file, {fmt.bytes_si(inputs['file_bytes'])}", "title")
    subtitle = inputs["title"] + (f" · {inputs['file']}" if inputs.get("file") else "")
    svg.text(LEFT_X, 42, subtitle, "note")

    # Schematic band heights: the tensor data gets what the three small bands leave.
    data_h = bands_h - header_h - meta_h - table_h
    y = top
    bands = svg.group("gguf-bands")
    sizes = inputs.get("band_bytes") or {}

    def band(h, cls, title, size_key, lines):
        nonlocal y
        g = svg.group("gguf-band", parent=bands, data_band=size_key)
        # a pale fill of the band's colour and a solid edge, so black text stays readable
        svg.rect(LEFT_X, y, LEFT_W, h - 4, cls, parent=g, rx=4, fill_opacity=0.22)
        svg.rect(LEFT_X, y, 5, h - 4, cls, parent=g)
        svg.text(LEFT_X + 10, y + 20, title, "bold", parent=g)
        if size_key in sizes:
            svg.text(LEFT_X + LEFT_W - 10, y + 20, fmt.bytes_si(sizes[size_key]), "num note", anchor="end", parent=g)
        for i, (text, cls_text) in enumerate(lines):
            svg.text(LEFT_X + 10, y + 20 + (i + 1) * LINE, text, cls_text, parent=g)
        top_y = y
        y += h
        return top_y

    band(header_h, "system", "header", "header",
         [(f"“GGUF”, version {inputs['version']}", "small"),
          (f"{inputs['tensor_count']} tensors, {inputs['kv_count']} metadata keys", "small")])
    meta_y = band(meta_h, "accent", "metadata", "metadata",
                  [("key, type, value for every key:", "small"),
                   ("architecture, layers, heads,", "small"),
                   ("context, tokenizer, chat template", "small")])
    table_lines = [("per tensor: name, shape, format, offset", "small")]
    for t in inputs["tensors"]:
        table_lines.append((t["name"], "mono small"))
        detail = []
        if t.get("shape"):
            detail.append(" × ".join(str(d) for d in t["shape"]))
        if t.get("ggml_type"):
            detail.append(t["ggml_type"])
        if t.get("note"):
            detail.append(t["note"])
        table_lines.append(("   " + " · ".join(detail), "note"))
    band(table_h, "kv", "tensor table", "tensor_table", table_lines)
    types = "  ".join(f"{name} {fmt.comma(bits)}" for name, bits in inputs["tensor_types"].items() if bits)
    data_lines = [("the weights themselves", "small")]
    if inputs.get("alignment"):
        data_lines.append((f"starting on a multiple of {inputs['alignment']} bytes", "small"))
    data_lines += [("bits per weight by format:", "small"), (types, "mono small"),
                   (f"average {fmt.fixed(inputs['bits_per_weight'], 2)} bits per weight", "small")]
    band(data_h, "weights", "tensor data", "tensor_data", data_lines)
    share = inputs.get("data_share")
    scale_note = ("band heights are schematic: the tensor data is "
                  + (f"{fmt.pct(share, 1)} of the file" if share else "almost all of the file"))
    svg.text(LEFT_X, top + bands_h + 20, scale_note, "note")

    # The keys, beside the metadata band, with a bracket back to it.
    kx, ky = RIGHT_X, top + 4
    svg.text(kx, ky + 12, "the metadata keys that matter", "bold")
    ky += 22
    start = ky
    listing = svg.group("gguf-keys")
    for k in keys:
        row = svg.group("gguf-key", parent=listing, data_key=k["key"])
        line = f"{k['key']} = {_value(k)}"
        if len(line) > MONO_CHARS:
            svg.text(kx, ky + 13, f"{k['key']} =", "mono small", parent=row)
            ky += LINE
            svg.text(kx + 16, ky + 13, _value(k), "mono small", parent=row)
        else:
            svg.text(kx, ky + 13, line, "mono small", parent=row)
        ky += LINE
        svg.text(kx + 16, ky + 12, k["note"], "note", parent=row)
        ky += LINE + 6
    if more > 0:
        svg.text(kx, ky + 12, f"… and {more} more keys", "note")
    svg.path(f"M{LEFT_X + LEFT_W} {meta_y + meta_h / 2 - 2} H{kx - 12} "
             f"M{kx - 8} {start} H{kx - 12} V{ky - 6} H{kx - 8}", "stroke-muted")
    return svg.to_string()
