"""Entry points of the page's interactive figures (run in the reader's browser by Pyodide).

The page's Web Worker imports this module from the core wheel and calls `call(name,
args_json)`, which returns a JSON string; every function below takes and returns
JSON-able values, so the worker never handles Python objects. The same functions run
natively (tests, build), so the page shows exactly what `tokenwalk walk --json` and
`tokenwalk inspect --json` print for the same inputs.

- tokenize_toy(text, paragraph): figure 1's toy BPE (trained on the paragraph) and its counters;
- load_smollm2(vocab) / tokenize_smollm2(text): SmolLM2's own BPE from the compact
  vocabulary file the build writes (`smollm2_vocab_data`, from the GGUF header);
- quantize(weights, bits), draw_weights(seed): figure 10's block; quantize_view(weights,
  bits, bit_widths): the block drawn by tokenwalk_app.quant_view, as the build draws it;
- simulate(settings): `walk_request(...).to_dict()`; explain(settings): which numbers are
  measured, computed or assumed;
- inspect_gguf(data, file_size, name): a GGUF header from the first bytes of a file the
  reader picked (File.slice; the rest of the file is never read);
- load_gguf_tokenizer(data, file_size, name) / tokenize_gguf(text): the tokenizer figure
  with the vocabulary of a GGUF file the reader picked, read the same way.

Units as in the core: seconds, bytes (GB = 1e9), tokens.
"""

from __future__ import annotations

import json
import random

from tokenwalk import format as fmt
from tokenwalk.errors import TokenwalkError
from tokenwalk.specs.schema import MACHINE_DOMAINS, REQUEST_DOMAINS, check_value

# Metadata keys of the compact SmolLM2 vocabulary file (GGUF names, so the core's
# tokenizer_from_metadata reads it unchanged).
VOCAB_KEYS = ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
              "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
              "tokenizer.ggml.eot_token_id")
# Settings a simulator scenario may carry, with their defaults (Request's).
SETTINGS_DEFAULTS = {"num_ctx": None, "kv_type": "f16", "chunk_tokens": 512, "warm": False, "users": 1,
                     "spec_alpha": None, "spec_gamma": None}
CUSTOM_MACHINE = "custom"
# The tokenizer figures cut at most this many characters (a long chapter; the page shows
# every piece as a chip, and the worker is shared with the other figures).
MAX_TOKENIZE_CHARS = 50_000

_toy_cache: dict = {}
_smollm2 = None
_picked = None  # the tokenizer of the GGUF file the reader picked in the tokenizer figure
_gguf_models: dict = {}  # name -> ModelSpec of GGUF headers read in this session


# ----------------------------------------------------------------- tokenizers

def _toy_bpe(paragraph: str, n_merges: int):
    key = (paragraph, n_merges)
    if key not in _toy_cache:
        from tokenwalk.text.bpe import train_bpe

        _toy_cache.clear()  # one paragraph per page
        _toy_cache[key] = train_bpe(paragraph, n_merges)
    return _toy_cache[key]


def _shown(pieces: list, limit: int | None) -> dict:
    """The pieces the page draws (the first `limit`) and the note on the rest, as text."""
    if limit is None or len(pieces) <= int(limit):
        return {"pieces": pieces, "more_text": ""}
    limit = int(limit)
    return {"pieces": pieces[:limit], "more_text": f"… and {fmt.comma(len(pieces) - limit)} more tokens (not drawn)"}


def tokenize_toy(text: str, paragraph: str, n_merges: int, limit: int | None = None) -> dict:
    """Figure 1: `text` cut by the toy BPE trained on `paragraph` with `n_merges` merges
    (the figure's data attributes carry both). Returns pieces (text of each token, the first
    `limit` when given, with more_text saying how many more), counts (characters,
    utf8_bytes, words, tokens, vocabulary) and counts_text (the same, formatted)."""
    from tokenwalk.text.bpe import count_text, unicode_to_bytes

    _check_length(text)
    bpe = _toy_bpe(paragraph, int(n_merges))
    to_byte = unicode_to_bytes()
    pieces = [piece_text(bytes(to_byte[c] for c in symbol)) for symbol in bpe.encode_pieces(text)]
    counts = count_text(text, bpe)
    return {**_shown(pieces, limit), "counts": counts, "counts_text": {k: fmt.comma(v) for k, v in counts.items()}}


def _check_length(text) -> None:
    if isinstance(text, str) and len(text) > MAX_TOKENIZE_CHARS:
        raise TokenwalkError(f"the text has {len(text):,} characters; this figure cuts at most "
                             f"{MAX_TOKENIZE_CHARS:,} (paste a shorter passage)")


def piece_text(data: bytes) -> str:
    """A token's bytes as text; a token that cuts a character in two shows its bytes
    as \\xNN (é cut into two tokens reads \\xc3 and \\xa9)."""
    return data.decode("utf-8", errors="backslashreplace")


def smollm2_vocab_data(metadata: dict) -> dict:
    """The tokenizer part of a GGUF metadata dict (what the page needs to cut text as the
    model does), for the build to write as a JSON file."""
    missing = [k for k in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges") if k not in metadata]
    if missing:
        raise TokenwalkError(f"GGUF metadata: {missing[0]} is missing; no BPE vocabulary to ship")
    return {k: metadata[k] for k in VOCAB_KEYS if k in metadata}


def vocab_file_data(path) -> dict:
    """smollm2_vocab_data of the GGUF file at `path` (only its header is read): the vocabulary
    the build ships beside the tokenizer figure."""
    from tokenwalk.gguf.header import read_gguf_header

    return smollm2_vocab_data(dict(read_gguf_header(path).metadata))


def form_choices() -> dict:
    """What the simulator's form offers: the model presets (name, title), the machine presets
    and the measured build machine when there is one (name, title, GB/s, FP16 TFLOP/s, GB),
    and the machine fields' choices (backends, vendors, device classes, memory kinds) and hints."""
    from tokenwalk.specs.machine import (
        BACKENDS,
        DEVICE_CLASSES,
        FIELD_HINTS,
        MEASURED_MACHINE,
        MEMORY_KINDS,
        VENDORS,
        has_measured_machine,
        list_machine_presets,
        load_machine,
    )
    from tokenwalk.specs.model import list_model_presets, load_model

    models = [{"name": m, "title": load_model(m).title or m} for m in list_model_presets()]
    machines = []
    # "this machine": the build machine as `tokenwalk measure` measured it, when it was measured
    for name in list_machine_presets() + ([MEASURED_MACHINE] if has_measured_machine() else []):
        spec = load_machine(name)
        machines.append({"name": name, "title": spec.title or name, "bandwidth_gbs": spec.bandwidth_gbs,
                         "fp16_tflops": spec.fp16_tflops, "memory_gb": spec.memory_gb})
    return {"models": models, "machines": machines, "backends": list(BACKENDS), "vendors": list(VENDORS),
            "device_classes": list(DEVICE_CLASSES), "memory_kinds": list(MEMORY_KINDS), "hints": dict(FIELD_HINTS)}


def load_smollm2(vocab) -> dict:
    """Build SmolLM2's tokenizer from the vocabulary file's JSON (text or dict).
    Returns its vocabulary size."""
    global _smollm2
    from tokenwalk.text.tokenizer import tokenizer_from_metadata

    data = json.loads(vocab) if isinstance(vocab, (str, bytes)) else vocab
    _smollm2 = tokenizer_from_metadata(data, source="smollm2 vocabulary")
    return {"vocabulary": _smollm2.vocab_size}


def _cut(tok, text: str, limit: int | None) -> dict:
    """`text` cut by `tok` as typed text (special markers not parsed, no BOS): the ids
    `tokenwalk tokenize --no-special --no-bos` prints, and their pieces (see piece_text)."""
    _check_length(text)
    ids = tok.encode(text, parse_special=False)
    pieces = [piece_text(tok.token_bytes(i)) for i in ids]
    return {**_shown(pieces, limit), "ids": ids, "tokens": len(ids), "vocabulary": tok.vocab_size,
            "tokens_text": fmt.comma(len(ids)), "vocabulary_text": fmt.comma(tok.vocab_size)}


def tokenize_smollm2(text: str, limit: int | None = None) -> dict:
    """`text` cut by SmolLM2's own BPE (typed text: special markers are not parsed).
    Returns pieces (each token's text, see piece_text; the first `limit` when given, with
    more_text), ids, tokens and vocabulary, and tokens_text and vocabulary_text formatted."""
    if _smollm2 is None:
        raise TokenwalkError("SmolLM2 tokenizer: its vocabulary is not loaded (load_smollm2 first)")
    return _cut(_smollm2, text, limit)


def load_gguf_tokenizer(data, file_size: int, name: str) -> dict:
    """The tokenizer of a GGUF file the reader picked, from the first bytes of the file
    (`data`, bytes or a Pyodide buffer with to_bytes()): {"need_bytes": n} when the header
    goes on past `data` (read a larger slice and call again), else {"name": the file's name,
    trimmed; "model": tokenizer.ggml.model; "pre": tokenizer.ggml.pre or null; "vocabulary",
    "vocabulary_text"}. The tokenizer is kept for tokenize_gguf. A vocabulary this core does
    not build (WordPiece, Unigram...) is a TokenwalkError of one line naming the file."""
    global _picked
    from tokenwalk.text.tokenizer import tokenizer_from_metadata

    header = _header_or_need(data, file_size, name)
    if isinstance(header, dict):
        return header
    shown = shown_file_name(name)
    metadata = dict(header.metadata)
    tok = tokenizer_from_metadata(metadata, source=shown)
    _picked = tok
    pre = metadata.get("tokenizer.ggml.pre")
    return {"name": shown, "model": metadata.get("tokenizer.ggml.model"), "pre": pre if isinstance(pre, str) else None,
            "vocabulary": tok.vocab_size, "vocabulary_text": fmt.comma(tok.vocab_size)}


def tokenize_gguf(text: str, limit: int | None = None) -> dict:
    """`text` cut by the picked file's tokenizer (load_gguf_tokenizer), as tokenize_smollm2."""
    if _picked is None:
        raise TokenwalkError("no GGUF file's vocabulary is loaded (pick a file first)")
    return _cut(_picked, text, limit)


# ----------------------------------------------------------------- quantizer

def quantize(weights: list, bits: int) -> dict:
    """Figure 10: one block quantized at `bits` bits (QuantizedBlock.to_dict()) and the
    real formats' bits per weight (Q8_0 8.5, Q4_0 4.5, ...)."""
    from tokenwalk.physics.quantization import FORMAT_BITS_PER_WEIGHT, quantize_block

    if not isinstance(weights, list) or not all(isinstance(w, (int, float)) for w in weights):
        raise TokenwalkError("quantize: weights must be a list of numbers")
    out = quantize_block([float(w) for w in weights], int(bits)).to_dict()
    out["formats"] = dict(FORMAT_BITS_PER_WEIGHT)
    return out


def quantize_view(weights: list, bits: int, bit_widths: list) -> dict:
    """Figure 10, live: the block at `bits` drawn as the build draws it (quant_view's SVG,
    with the mean error at each of `bit_widths`), the live summary's HTML, and the numbers
    the page keeps (mean_error_share, bits_per_weight as text)."""
    from tokenwalk_app import quant_view

    widths = [int(b) for b in bit_widths]
    if int(bits) not in widths:
        widths.append(int(bits))
    blocks = {str(b): quantize(weights, b) for b in widths}
    q = blocks[str(int(bits))]
    formats = q["formats"]
    return {"bits": q["bits"], "mean_error_share": q["mean_error_share"],
            "bits_per_weight": quant_view.fmt_bits(q["bits_per_weight"]),
            "svg": quant_view.block_svg(q, blocks, formats, desc=quant_view.describe(q, blocks),
                                        min_width_px=quant_view.MIN_WIDTH_PX, id_prefix="tw-quant-live"),
            "summary_html": quant_view.summary_html(q)}


def draw_weights(seed: int, n: int = 32, sd: float = 0.0065, large: float = 0.0412) -> list:
    """A new toy block like figure 10's: `n` weights from a normal distribution (standard
    deviation `sd`), rounded to 4 decimals, one of them (at a random place, random sign)
    replaced by a large weight of magnitude `large`."""
    rng = random.Random(seed)
    weights = [round(rng.gauss(0.0, sd), 4) for _ in range(n)]
    weights[rng.randrange(n)] = large if rng.random() < 0.5 else -large
    return [0.0 if w == 0 else w for w in weights]


# ----------------------------------------------------------------- simulator

def _model(name: str):
    if name.startswith(GGUF_KEY_PREFIX):
        if name not in _gguf_models:
            raise TokenwalkError("simulator: that GGUF file is not read on this page any more (pick it again)")
        return _gguf_models[name]
    from tokenwalk.specs.model import list_model_presets, load_model

    if name not in list_model_presets():
        raise TokenwalkError(f"simulator: model {name!r} is neither a preset nor a GGUF file read on this page")
    return load_model(name)


def _machine(settings: dict):
    from tokenwalk.specs.machine import load_machine, machine_from_dict

    name = settings.get("machine")
    if name == CUSTOM_MACHINE or isinstance(name, dict):
        spec = dict(name) if isinstance(name, dict) else {
            "bandwidth_gbs": settings.get("bandwidth_gbs"), "fp16_tflops": settings.get("fp16_tflops"),
            "memory_gb": settings.get("memory_gb")}
        for key in (*CHOICE_FIELDS, *CUSTOM_OPTIONAL):  # the timing model's row and trend: the fit's when not given
            if not isinstance(name, dict) and settings.get(key):
                spec[key] = settings[key]
        spec.setdefault("name", CUSTOM_MACHINE)
        return machine_from_dict(spec, "custom machine")
    return load_machine(str(name))


# The simulator's form: which fields are whole numbers, which numbers, and how a message names them.
WHOLE_FIELDS = ("prompt_tokens", "output_tokens", "chunk_tokens", "users", "num_ctx", "spec_gamma", "architecture_year")
NUMBER_FIELDS = ("spec_alpha", "bandwidth_gbs", "fp16_tflops", "memory_gb")
CUSTOM_FIELDS = ("bandwidth_gbs", "fp16_tflops", "memory_gb", "architecture_year")  # only for machine "custom"
CUSTOM_OPTIONAL = ("architecture_year",)  # left out of the settings when empty
OPTIONAL_FIELDS = ("num_ctx", "spec_alpha", "spec_gamma")
CHOICE_FIELDS = ("backend", "vendor", "device_class", "memory_type")  # a custom machine's, each optional (empty: not given)
FIELD_LABELS = {"prompt_tokens": "prompt tokens", "output_tokens": "output tokens", "chunk_tokens": "chunk",
                "users": "users", "num_ctx": "context (num_ctx)", "spec_gamma": "draft tokens (gamma)",
                "spec_alpha": "acceptance rate (alpha)", "bandwidth_gbs": "bandwidth (GB/s)",
                "fp16_tflops": "FP16 TFLOPS", "memory_gb": "memory (GB)", "backend": "backend",
                "vendor": "chip maker", "device_class": "kind of device", "memory_type": "memory type",
                "architecture_year": "year of the chip family"}
_TRUE = (True, 1, "1", "true", "on", "yes")


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def _number(name: str, value, whole: bool):
    """A form value (text as typed, or a JSON number) as an int (whole) or a finite float."""
    label = FIELD_LABELS.get(name, name)
    need = "a whole number" if whole else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TokenwalkError(f"{label}: {need} is needed, not {type(value).__name__}")
    if isinstance(value, int):
        return value if whole else float(value)
    text = value.strip().replace("_", "") if isinstance(value, str) else None
    try:
        number = value if text is None else (int(text) if whole and text.lstrip("+-").isdigit() else float(text))
    except ValueError:
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise TokenwalkError(f"{label}: {need} is needed, not {shown!r}") from None
    if isinstance(number, int):
        return number
    if number != number or number in (float("inf"), float("-inf")):
        raise TokenwalkError(f"{label}: {need} is needed, not {number}")
    if whole:
        if not number.is_integer():
            raise TokenwalkError(f"{label}: {need} is needed, not {number:g}")
        return int(number)
    return number


def settings_from_form(form: dict) -> dict:
    """The simulator's settings from its form or a shared link: the one place they are
    parsed and checked (the page sends the fields as typed). Numbers may come as text
    ("300", "1e3", "") or as JSON numbers; an empty optional field is None; `spec`
    (absent: on when spec_alpha is given) switches speculative decoding; the machine
    "custom" needs bandwidth_gbs, fp16_tflops and memory_gb, and may say its backend, vendor,
    device_class, memory_type and architecture_year (each kept only when given). Every problem is one
    line naming the field (TokenwalkError); the ranges are the schemas' domains
    (`tokenwalk.specs.schema`: REQUEST_DOMAINS, MACHINE_DOMAINS), as on the command line.
    Returns the settings simulate() takes, JSON-able (the page writes them to its URL)."""
    if not isinstance(form, dict):
        raise TokenwalkError("simulator: settings must be an object")
    settings = {}
    for key in ("model", "machine"):
        value = form.get(key)
        if not isinstance(value, str) or not value.strip():
            raise TokenwalkError(f"simulator: pick a {key}")
        settings[key] = value.strip()
    kv_type = form.get("kv_type")
    settings["kv_type"] = kv_type.strip() if not _blank(kv_type) and isinstance(kv_type, str) else "f16"
    settings["warm"] = form.get("warm", False) in _TRUE
    spec = form.get("spec")
    spec = not _blank(form.get("spec_alpha")) if spec is None else spec in _TRUE
    custom = settings["machine"] == CUSTOM_MACHINE
    if custom:
        settings.update(_choices(form))
    runs = form.get("runs")
    if not _blank(runs):
        # llama-bench's output as pasted, or a link's runs: kept as the link carries them
        from tokenwalk.timing.own_runs import read_runs

        settings["runs"] = [run.compact() for run in read_runs(runs, RUNS_LABEL)[0]]
    for name in ("prompt_tokens", "output_tokens", "chunk_tokens", "users", "num_ctx", "spec_alpha", "spec_gamma",
                 *CUSTOM_FIELDS):
        if name in ("spec_alpha", "spec_gamma") and not spec:
            settings[name] = None
            continue
        if name in CUSTOM_FIELDS and not custom:
            continue
        value = form.get(name)
        if _blank(value) and name in CUSTOM_OPTIONAL:
            continue
        if isinstance(value, str) and value.strip().lower() == AUTO and name in OPTIONAL_FIELDS \
                and not name.startswith("spec_"):
            value = None  # a link's explicit "auto": the same as the field left empty
        if _blank(value):
            if name.startswith("spec_") or (name not in OPTIONAL_FIELDS and name not in SETTINGS_DEFAULTS):
                raise TokenwalkError(f"{FIELD_LABELS[name]}: a value is needed")
            settings[name] = SETTINGS_DEFAULTS.get(name)
            continue
        # the domains of the request and machine schemas, the same as the command line's
        settings[name] = check_value(_number(name, value, whole=name in WHOLE_FIELDS),
                                     REQUEST_DOMAINS.get(name) or MACHINE_DOMAINS[name], FIELD_LABELS[name],
                                     TokenwalkError)
    return settings


# What an empty optional field of the form resolves to, written in a link as itself: the
# walk reserves prompt + output tokens (Request.num_ctx None), and "auto" reads back as None.
AUTO = "auto"


def link_from_settings(settings: dict) -> dict:
    """The page's address for a walk: every field the walk used, as text the form takes back
    (settings_from_form reads it to the same settings). An empty num_ctx is written "auto",
    a custom machine's empty choices and year as "", speculative decoding off leaves out
    spec_alpha and spec_gamma (the form unchecks it); so a link never falls back on the
    form's own defaults, which differ (num_ctx 16,384 in the article's request)."""
    link = {}
    for key, value in settings.items():
        if key in ("spec_alpha", "spec_gamma") and value is None:
            continue
        if value is None:
            value = AUTO if key in OPTIONAL_FIELDS else ""
        if key == "runs":
            link[key] = json.dumps(value, separators=(",", ":"))
            continue
        link[key] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    if settings.get("machine") == CUSTOM_MACHINE:
        for key in (*CHOICE_FIELDS, *CUSTOM_OPTIONAL):
            link.setdefault(key, "")
    return link


def _choices(form: dict) -> dict:
    """A custom machine's backend, chip maker, kind of device and memory type from the form: each
    one of its choices (`tokenwalk.specs.machine.BACKENDS`, `VENDORS`, `DEVICE_CLASSES`,
    `MEMORY_KINDS`, case as listed); an empty one is left out, so a link without them reads as before."""
    from tokenwalk.specs.machine import BACKENDS, DEVICE_CLASSES, MEMORY_KINDS, VENDORS

    out = {}
    for name, allowed in (("backend", BACKENDS), ("vendor", VENDORS), ("device_class", DEVICE_CLASSES),
                          ("memory_type", MEMORY_KINDS)):
        value = form.get(name)
        if _blank(value):
            continue
        by_lower = {a.lower(): a for a in allowed}
        if not isinstance(value, str) or value.strip().lower() not in by_lower:
            shown = value if isinstance(value, str) and len(value) <= 20 else str(value)[:20] + "…"
            raise TokenwalkError(f"{FIELD_LABELS[name]}: one of {', '.join(allowed)} or empty, not {shown!r}")
        out[name] = by_lower[value.strip().lower()]
    return out


def request_from_settings(settings: dict):
    """The Request of a simulator scenario (keys as Request's fields)."""
    from tokenwalk.walk import Request

    values = {k: settings.get(k, default) for k, default in SETTINGS_DEFAULTS.items()}
    if values["spec_alpha"] is None or values["spec_gamma"] is None:
        values["spec_alpha"] = values["spec_gamma"] = None
    return Request(prompt_tokens=settings["prompt_tokens"], output_tokens=settings["output_tokens"], **values)


def simulate(settings: dict) -> dict:
    """Walk one scenario: exactly `tokenwalk walk --json` for the same inputs.

    settings: model (preset name or the name of a GGUF file read by inspect_gguf),
    machine (preset name, or "custom" with bandwidth_gbs, fp16_tflops, memory_gb and
    optionally backend, vendor, device_class, memory_type, architecture_year),
    prompt_tokens, output_tokens and optionally num_ctx, kv_type, chunk_tokens, warm,
    users, spec_alpha, spec_gamma, and runs (llama-bench's output, or a link's runs: the
    machine is then timed on them, as by `tokenwalk walk --runs`).
    """
    return _walk(settings_from_form(settings))[0]


RUNS_LABEL = "your llama-bench runs"


def _walk(settings: dict) -> tuple[dict, dict | None]:
    """(the walk's dict, the calibration on the reader's runs as a dict, or None) of parsed settings."""
    from tokenwalk.walk import walk_request

    machine, runs, model = _machine(settings), None, _model(settings["model"])
    if settings.get("runs"):
        machine, runs = _calibrated(machine, settings["runs"], model, settings["prompt_tokens"])
    return walk_request(model, machine, request_from_settings(settings)).to_dict(), runs


def _calibrated(machine, compact: list, model, context_tokens: float):
    """`machine` calibrated on the reader's runs (`tokenwalk.timing.own_runs`), each matched to
    a preset or a GGUF file read on this page, and the table of runs for the page; with whether
    the walk's `model` (at `context_tokens` cached) reads less per launch than every model the
    decode was solved on."""
    from tokenwalk.timing import model as timing_model
    from tokenwalk.timing import own_runs

    calibration, runs, models = own_runs.calibrate_on_presets(machine, own_runs.from_compact(compact, RUNS_LABEL),
                                                              _gguf_models, label=RUNS_LABEL)
    out = calibration.to_dict()
    for row, run in zip(out["rows"], runs, strict=True):
        row["params"], row["size_bytes"] = run.params, run.size_bytes
        row["title"] = (models[run.model].title or run.model) if run.model else None
    out["machine"] = machine.name
    out["bandwidth_gbs"], out["fp16_tflops"] = machine.bandwidth_gbs, machine.fp16_tflops
    out["compute_figure"] = timing_model.compute_figure_name(machine)  # what fp16_tflops is, as the panel says it
    out["walk_model_below_runs"] = calibration.below_its_runs(model, context_tokens)
    return calibration.machine, out


def _measured_lines(machine: str, model: str) -> list[str]:
    """What was measured of ``model`` on ``machine``: the measurement files under
    tokenwalk/data/measurements/ that name the machine (their "machine" and "measured_by")."""
    from importlib import resources

    from tokenwalk.data_refs import read_data_json

    labels = (("cold_load_s", "load {v} s"), ("prefill_tok_s_moe", "prefill {v} tok/s"),
              ("decode_tok_s_moe", "decode {v} tok/s"), ("decode_tok_s_dense", "decode {v} tok/s"))
    lines = []
    try:
        files = sorted(p.name for p in resources.files("tokenwalk").joinpath("data", "measurements").iterdir()
                       if p.name.endswith(".json"))
    except OSError:
        return lines
    for name in files:
        try:
            data = read_data_json(f"measurements/{name}")
        except TokenwalkError:
            continue
        if data.get("machine") != machine:
            continue
        values = data.get("values", {})
        for key, label in labels:
            entry = values.get(key, {})
            if entry.get("model") == model:
                # a speed measured on another prompt than the walk's says on which (the article
                # prints the measurement and the walk's prediction side by side)
                prompt = (values.get("prefill_prompt_tokens") or {}).get("value") if key != "cold_load_s" else None
                on = f" on a {prompt:,}-token prompt" if isinstance(prompt, int) else ""
                lines.append(label.format(v=entry["value"]) + on + f" ({data.get('measured_by', name)})")
    return lines


def explain(walk: dict) -> dict:
    """Which of a walk's numbers are measured, computed or assumed (short sentences)."""
    measured = _measured_lines(walk["machine"], walk["model"])
    eff = walk.get("efficiency", {})
    load = next((s for s in walk["stages"] if s["name"] == "load"), None)
    # The decode entry is the reads' efficiency, not the share of the bus a step uses on
    # average: each step also pays a fixed cost per kernel launch (tokenwalk.timing.model).
    say = {"decode": "decode's reads run at {v} % of the memory bandwidth, plus a fixed cost per kernel launch",
           # the fitted efficiency of prefill's arithmetic, attention's included: not the share
           # of the peak that measured tok/s x 2 x active parameters makes (the article prints both)
           # of full-width products: a mixture of experts' narrow ones are priced apart (prefill_shape)
           "prefill": "prefill's full-width products, attention's included, run at {v} % of {of} (a fitted "
                      "efficiency; a mixture of experts' narrow expert products cost more, as its prefill row says)",
           "load": "load reaches {v} % of the disk's speed"}
    # the load's efficiency is said once, below, with the rate it gives and where it comes from
    assumed = [say.get(phase, phase + " reaches {v} % of the peak").format(v=f"{100 * e['value']:.1f}",
                                                                       of=e.get("of", "the FP16 peak"))
               + f" ({e['from']})" for phase, e in eff.items() if not (phase == "load" and load is not None)]
    if load is not None:
        # the rate the load was timed at, and why: the machine's measured cold load or the disk's spec
        assumed.append(f"the weights load at {fmt.significant(load['effective_gbs'], 2)} GB/s ({load['why']})")
    assumed.append(f"the system and other apps use {walk['memory']['system_bytes'] / 1e9:g} GB")
    return {
        "measured": measured,
        "computed": ["every stage's time, bytes and bound; load, time to first token, prefill and decode "
                     "tok/s; the KV cache and the memory budget (tokenwalk's roofline and timing model)"],
        "assumed": assumed,
    }


def simulate_view(settings: dict) -> dict:
    """simulate() plus the result panel's HTML (tokenwalk_app.view) for the page:
    {"walk": the walk's dict, "explain": explain(walk), "html": markup, "summary": one
    sentence for the live region, "settings": the settings as parsed (settings_from_form),
    "link": the page's address for them (link_from_settings), "runs": the reader's runs
    beside their predictions (`_calibrated`) or None}. `settings` may be the form's fields as typed."""
    from tokenwalk_app.view import live_summary, walk_html

    settings = settings_from_form(settings)
    walk, runs = _walk(settings)
    why = explain(walk)
    return {"walk": walk, "explain": why, "html": walk_html(walk, why, runs), "summary": live_summary(walk),
            "settings": settings, "link": link_from_settings(settings), "runs": runs}


# ----------------------------------------------------------------- GGUF header

# An uploaded file is offered under "file:" + its trimmed name: a key no preset, no other
# option of the picker ("gguf") and no number can be, so a file never replaces a preset.
GGUF_KEY_PREFIX = "file:"
MAX_SHOWN_NAME = 80
# Files kept read in one visit (each a ModelSpec with its header's description).
MAX_GGUF_MODELS = 16


def _header_or_need(data, file_size, name):
    """The GGUF header in `data` (bytes or a Pyodide buffer with to_bytes()), or
    {"need_bytes": n} when it goes on past `data`."""
    from tokenwalk.gguf.header import GGUFNeedMoreBytes, read_gguf_header_bytes

    if hasattr(data, "to_bytes"):
        data = data.to_bytes()
    try:
        return read_gguf_header_bytes(data, file_size=int(file_size), name=str(name))
    except GGUFNeedMoreBytes as need:
        return {"need_bytes": int(need.needed_bytes)}


def shown_file_name(name) -> str:
    """A file name as the page shows it: control and bidirectional characters escaped
    (`errors.printable`), blanks trimmed, at most MAX_SHOWN_NAME characters."""
    from tokenwalk.errors import printable

    text = printable(str(name)).strip() or "unnamed.gguf"
    return text if len(text) <= MAX_SHOWN_NAME else text[:MAX_SHOWN_NAME - 1] + "…"


def gguf_key(name) -> str:
    """The picker's option value of an uploaded file (see GGUF_KEY_PREFIX)."""
    return GGUF_KEY_PREFIX + shown_file_name(name)


def kv_summary(model) -> str:
    """One line on the model's KV cache by kind of layer, for the GGUF picker: what a token
    costs in the layers that keep the whole context, what the sliding layers keep, and the
    cache at the model's own context (as llama.cpp allocates it)."""
    from tokenwalk import format as fmt
    from tokenwalk.physics.kv_cache import kv_at_context, kv_bytes_per_token_per_layer, kv_layer_kinds

    kinds = kv_layer_kinds(model)
    per_layer = kv_bytes_per_token_per_layer(model, "f16")
    parts = []
    if kinds["full"]:
        parts.append(f"{kinds['full']:,} layers keep every token ({fmt.comma(kinds['full'] * per_layer)} bytes a token)")
    if kinds["sliding"]:
        parts.append(f"{kinds['sliding']:,} keep the last {kinds['window']:,} tokens")
    if kinds["none"]:
        parts.append(f"{kinds['none']:,} keep none")
    line = "KV cache (f16): " + ", ".join(parts)
    if model.context_length:
        at = kv_at_context(model, int(model.context_length))
        line += (f"; {fmt.bytes_si(at['allocated_bytes']['total'])} at its context of "
                 f"{int(model.context_length):,} tokens")
    return line


def inspect_gguf(data, file_size: int, name: str) -> dict:
    """Read a GGUF header from the first bytes of a file (`data`, bytes or a Pyodide
    buffer with to_bytes()), `file_size` the whole file's size, `name` its file name.

    Returns {"need_bytes": n} when the header goes on past `data` (read a larger slice
    and call again), else what `tokenwalk inspect --json` reports of the model
    (architecture, layers, heads, params, active_params, size_bytes, kv_bytes_per_token
    per cache type, kv_layer_kinds, kv_at_context, ...) with "key" (the picker's option
    value, `gguf_key`), "name" (the reader's file name, trimmed: the model is named by
    the file, never by its general.name), "general_name" and "kv_summary"; remembers the
    model under its key for simulate(). Raises TokenwalkError (one line) for a file that
    is not a GGUF model.
    """
    from tokenwalk.physics.kv_cache import kv_at_context, kv_bytes_per_token, kv_layer_kinds
    from tokenwalk.specs.model import model_from_gguf

    header = _header_or_need(data, file_size, name)
    if isinstance(header, dict):
        return header
    shown = shown_file_name(name)
    model = model_from_gguf(header, name=shown)
    key = gguf_key(name)
    _gguf_models.pop(key, None)
    _gguf_models[key] = model
    while len(_gguf_models) > MAX_GGUF_MODELS:  # the oldest file goes; picking it again reads it again
        _gguf_models.pop(next(iter(_gguf_models)))
    info = model.to_dict()
    info.pop("sources", None)
    general = header.metadata.get("general.name")
    info["key"] = key
    info["general_name"] = shown_file_name(general) if isinstance(general, (str, int)) and general != "" else None
    info["kv_bytes_per_token"] = {kv: kv_bytes_per_token(model, kv) for kv in ("f16", "q8_0")}
    info["kv_layer_kinds"] = kv_layer_kinds(model)      # the same as `tokenwalk inspect` prints
    if model.context_length:
        info["kv_at_context"] = kv_at_context(model, int(model.context_length))
    info["kv_summary"] = kv_summary(model)
    info["header_bytes_read"] = header.header_bytes_read
    info["text"] = {"params": f"{fmt.comma(info['params'])} parameters",
                    "kv": info["kv_summary"],
                    "read": f"{fmt.comma(header.header_bytes_read)} bytes of {fmt.comma(int(file_size))} read"}
    return info


# ----------------------------------------------------------------- the worker's door

FUNCTIONS = {f.__name__: f for f in (tokenize_toy, load_smollm2, tokenize_smollm2, tokenize_gguf, quantize, draw_weights,
                                     simulate, explain, simulate_view, quantize_view)}


def call(name: str, args_json: str) -> str:
    """Call FUNCTIONS[name](*args) with JSON arguments; returns JSON: {"ok": result} or
    {"error": one line} (a TokenwalkError's message, or the exception's type and text)."""
    try:
        fn = FUNCTIONS[name]
        result = fn(*json.loads(args_json))
        return json.dumps({"ok": result}, allow_nan=False)
    except KeyError as error:
        if name not in FUNCTIONS:
            return json.dumps({"error": f"unknown function {name!r}"})
        return json.dumps({"error": f"{type(error).__name__}: {error}"})
    except TokenwalkError as error:
        return json.dumps({"error": str(error)})
    except (ValueError, TypeError) as error:
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


# the functions that take a file's first bytes (a buffer, not JSON)
GGUF_FUNCTIONS = {f.__name__: f for f in (inspect_gguf, load_gguf_tokenizer)}


def call_gguf(data, file_size: int, name: str, fn: str = "inspect_gguf") -> str:
    """GGUF_FUNCTIONS[fn] (inspect_gguf by default) for the worker (the bytes come as a
    buffer, not JSON); JSON like call()."""
    try:
        if fn not in GGUF_FUNCTIONS:
            return json.dumps({"error": f"unknown function {fn!r}"})
        return json.dumps({"ok": GGUF_FUNCTIONS[fn](data, file_size, name)}, allow_nan=False)
    except TokenwalkError as error:
        return json.dumps({"error": str(error)})
    except (ValueError, TypeError, KeyError) as error:
        return json.dumps({"error": f"{name}: {type(error).__name__}: {error}"})
