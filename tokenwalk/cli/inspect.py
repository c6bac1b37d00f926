"""`tokenwalk inspect MODEL`: what the article asks of a model file."""

from __future__ import annotations

import os

NAME = "inspect"
HELP = "what a model file holds: layers, heads, experts, parameters, bits per weight, KV and bytes per token"
DESCRIPTION = """\
What the article asks of a model: architecture, layers, query and KV heads, head size,
experts, parameters (total and active per token), bytes, bits per weight per tensor
type, KV cache bytes per token, the bytes of weights a decoded token reads, and the
decode ceiling (memory bandwidth / bytes read per token, empty context) on each machine
preset.

MODEL is a preset name, a .gguf file (only its header is read, never the weights) or a
.json model spec.

examples:
  tokenwalk inspect qwen3.6-35b-a3b
  tokenwalk inspect path/to/model.gguf --json
"""

KV_TYPES = ("f16", "q8_0")


def add_arguments(parser) -> None:
    parser.add_argument("model", metavar="MODEL", help="preset name, .gguf file or .json model spec")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run(args) -> int:
    from tokenwalk.cli import dump_json, printable_strings

    report = inspect_model(args.model)
    if args.json:
        print(dump_json(report))
    else:
        print(format_report(printable_strings(report)))
    return 0


def inspect_model(name_or_path) -> dict:
    """Everything `inspect` prints, as a JSON-friendly dict (units in the key names)."""
    from tokenwalk.physics.kv_cache import (
        kv_at_context,
        kv_bytes_per_token,
        kv_bytes_per_token_per_layer,
        kv_layer_kinds,
    )
    from tokenwalk.physics.roofline import decode_ceiling_tok_s
    from tokenwalk.specs.machine import list_machine_presets, load_machine
    from tokenwalk.specs.model import load_model

    model = load_model(name_or_path)
    info = model.to_dict()
    info.pop("sources", None)
    report = {
        "model": os.fspath(name_or_path),
        **info,
        "kv_bytes_per_token": {kv: kv_bytes_per_token(model, kv) for kv in KV_TYPES},
        "kv_layer_kinds": kv_layer_kinds(model),
        "kv_bytes_per_token_per_layer": {kv: kv_bytes_per_token_per_layer(model, kv) for kv in KV_TYPES},
        "decode_ceiling_tok_s": {},
        "sources": model.sources,
    }
    if model.context_length:
        report["kv_at_context"] = kv_at_context(model, int(model.context_length))
    if model.gguf:
        g = model.gguf
        report["gguf"] = {k: g.get(k) for k in ("file", "version", "tensor_count", "kv_count", "alignment",
                                                "file_bytes")}
    for name in list_machine_presets():
        machine = load_machine(name)
        report["decode_ceiling_tok_s"][name] = {
            "bandwidth_gbs": machine.bandwidth_gbs,
            "tok_s": decode_ceiling_tok_s(model, machine),
            "fits": model.size_bytes <= machine.memory_gb * 1e9,
        }
    return report


def _si(n_bytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}" if n_bytes / scale < 100 else f"{n_bytes / scale:.0f} {unit}"
    return f"{n_bytes:.0f} bytes"


def _count(n: float) -> str:
    for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}" if n / scale < 100 else f"{n / scale:.1f} {unit}"
    return f"{n:.0f}"


def format_report(r: dict) -> str:
    rows: list[tuple[str, str]] = []
    title = r.get("title") or r["name"]
    head = f"{title}"
    if str(r["model"]).lower().endswith((".gguf", ".json")):
        head = f"{os.path.basename(r['model'])}: {title}"
    if r.get("gguf") and r["gguf"].get("tensor_count") is not None:
        g = r["gguf"]
        head += f"  (GGUF v{g['version']}, {g['tensor_count']} tensors, {g['kv_count']} metadata keys)"
    rows.append(("architecture", r.get("architecture") or "not given"))
    layers = f"{r['layers']}"
    if r.get("mtp_layers"):
        layers += f" (+{r['mtp_layers']} multi-token-prediction block)"
    if r["kv_layers"] != r["layers"]:
        interval = r.get("full_attention_interval")
        layers += f"; {r['kv_layers']} keep a KV cache" + (f" (1 in {interval})" if interval else "")
    kinds = r.get("kv_layer_kinds") or {}
    if kinds.get("sliding"):
        layers += (f"; {kinds['sliding']} attend through a sliding window of {kinds['window']:,} tokens, "
                   f"{kinds['full']} to the whole context")
    rows.append(("layers", layers))
    rows.append(("width", f"{r['embedding_length']:,}"))
    group = r["head_count"] // r["head_count_kv"] if r["head_count_kv"] else 0
    heads = f"{r['head_count']} query, {r['head_count_kv']} KV"
    heads += f" ({group} query heads per KV head)" if group > 1 else " (no grouping)"
    rows.append(("heads", heads))
    rows.append(("head size", f"{r['head_dim']}"))
    if r.get("context_length"):
        rows.append(("context", f"{r['context_length']:,} tokens"))
    if r.get("vocab_size"):
        rows.append(("vocabulary", f"{r['vocab_size']:,} tokens"))
    if r.get("expert_count", 0) > 1:
        experts = f"{r['expert_count']}, {r['expert_used_count']} used per token"
        if r.get("expert_ffn_length"):
            experts += f", FFN width {r['expert_ffn_length']}"
        if r.get("shared_expert_count"):
            experts += f", {r['shared_expert_count']} shared"
        rows.append(("experts", experts))
    else:
        rows.append(("experts", "none (dense)"))
    rows.append(("parameters", f"{r['params']:,.0f} ({_count(r['params'])}); "
                               f"active per token {_count(r['active_params'])}"))
    size = f"{r['size_bytes']:,.0f} bytes ({_si(r['size_bytes'])})"
    if r.get("tensor_bytes"):
        size += f"; tensors {_si(r['tensor_bytes'])}"
    rows.append(("size", size))
    rows.append(("bits per weight", f"{r['bits_per_weight']:.2f} on average"))
    lines = [head] + [f"  {k:<22}{v}" for k, v in rows]
    types = r.get("tensor_types") or {}
    for name, t in types.items():
        parts = [f"{name:<6}", f"{t['bits_per_weight']:<7g}bits"]
        if "tensors" in t:
            plural = "" if t["tensors"] == 1 else "s"
            parts += [f"{t['tensors']:>4} tensor{plural:<1}", f"{_count(t['n_elements']):>8} weights",
                      f"{_si(t['n_bytes']):>8}"]
        lines.append(f"  {'':<22}" + "  ".join(parts))
    kv = r["kv_bytes_per_token"]
    lines.append(f"  {'KV cache per token':<22}" + ", ".join(f"{k}: {v:,.0f} bytes ({_si(v)})" for k, v in kv.items()))
    per_layer = (r.get("kv_bytes_per_token_per_layer") or {}).get("f16")
    if kinds and per_layer is not None:
        parts = [f"{kinds[k]} {label} x {per_layer:,.0f} bytes a token" for k, label in
                 (("full", "full"), ("sliding", f"sliding ({kinds['window'] or 0:,}-token window)"))
                 if kinds.get(k)]
        if kinds.get("none"):
            parts.append(f"{kinds['none']} with none")
        lines.append(f"  {'KV by layer kind':<22}f16: " + "; ".join(parts))
    at = r.get("kv_at_context")
    if at:
        def _kinds(form):
            return " + ".join(f"{k} {_si(v)}" for k, v in at[form].items() if k != "total" and v)
        cells = ", ".join(f"{k} {v:,}" for k, v in at["cells_per_layer"]["allocated"].items())
        label = f"KV at {at['tokens']:,} tokens"
        lines.append(f"  {label:<22}f16: {_si(at['allocated_bytes']['total'])}"
                     f" as llama.cpp allocates it ({_kinds('allocated_bytes')}; cells a layer: {cells}, "
                     f"n_ubatch {at['n_ubatch']}); {_si(at['needed_bytes']['total'])} needed by the attention")
    lines.append(f"  {'read per token':<22}{_si(r['bytes_read_per_token'])} of weights per decoded token")
    lines.append("  decode ceiling (bandwidth / bytes read per token, empty context, spec-sheet maxima):")
    for name, c in r["decode_ceiling_tok_s"].items():
        fits = "" if c["fits"] else "  (does not fit in its memory)"
        lines.append(f"    {name:<14}{c['bandwidth_gbs']:>7,.0f} GB/s  {c['tok_s']:>8,.1f} tok/s{fits}")
    return "\n".join(lines)
