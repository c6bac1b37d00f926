"""What the article needs to know about a model: sizes, parameters, and bytes read per token.

A ModelSpec comes from one of three places, all giving the same fields:

- a preset, `tokenwalk/data/models/<name>.json`, each value with its source;
- any JSON file in the same schema (see README: required name, params, size_bytes,
  layers, embedding_length, head_count, head_count_kv, head_dim);
- a GGUF file's header (`model_from_gguf`), where parameters and bytes are summed from
  the tensor table and the sizes come from the metadata.

Units: parameters are counts of weights; bytes are bytes (GB = 1e9 bytes).

The quantity the decode half of the article hangs on is `bytes_read_per_token`: the
bytes of weights one decoded token reads from memory. From a tensor table it is every
tensor the token passes through, with three corrections:
- expert tensors (`*_exps`) count for expert_used_count / expert_count of their bytes
  (a token runs its top-k experts only);
- the token embedding counts one row (a lookup), unless the file has no `output.weight`:
  then the embedding is also the output head and every row is read (SmolLM2: the whole
  Q8_0 table, about 96.6 MB per token in all);
- blocks for multi-token prediction (`nextn_predict_layers`, Qwen3.6's 41st block) are
  left out: an ordinary decoding step does not run them.
A JSON spec may carry the table itself (`tensor_table`: name, shape, ggml type and the
blocks that have each tensor; the Qwen3.6 preset's, rebuilt from its config and
llama.cpp's Q4_K_M rules), counted the same way (1.98 GB for Qwen3.6, its 0.42 GB output
head included). Without a table, it is `bytes_read_per_token` if the file gives it, else
size_bytes × active_params / params (pro rata: what the active weights would take at the
file's average bits, nothing for the output head's own matrix).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

from tokenwalk.errors import GGUFError, SpecError, check_regular_file, printable
from tokenwalk.gguf.ggml_types import GGML_TYPES
from tokenwalk.gguf.header import GGUFHeader, read_gguf_header
from tokenwalk.specs.schema import (
    MODEL_DOMAINS,
    check_domains,
    check_fields,
    check_value,
    preset_names,
    read_json_object,
    read_preset,
)

REQUIRED_FIELDS = {
    "name": "str", "params": "number", "size_bytes": "number", "layers": "int",
    "embedding_length": "int", "head_count": "int", "head_count_kv": "int", "head_dim": "int",
}
OPTIONAL_FIELDS = {
    "title": "str", "architecture": "str", "active_params": "number", "kv_layers": "int",
    "context_length": "int", "vocab_size": "int", "feed_forward_length": "int",
    "expert_count": "int", "expert_used_count": "int", "expert_ffn_length": "int", "expert_bytes": "number",
    "shared_expert_count": "int", "full_attention_interval": "int", "mtp_layers": "int",
    "kv_layers_swa": "int", "sliding_window": "int", "sliding_window_pattern": "int",
    "bytes_read_per_token": "number", "tensor_bytes": "number", "file_type": "str",
    "tied_embeddings": "bool", "sources": "dict", "tensor_types": "dict", "gguf": "dict",
    "tensor_table": "list",
}

_BLOCK = re.compile(r"^blk\.(\d+)\.")


@dataclass
class ModelSpec:
    """A model as the article counts it. Optional sizes are None when unknown.

    params: all weights in the file. active_params: weights one token uses (MoE: the
    shared part + its experts). size_bytes: the file (what is loaded). layers: the
    transformer blocks a token runs (without multi-token-prediction blocks, counted in
    mtp_layers). kv_layers: layers that keep a KV cache (hybrid models: 1 in
    full_attention_interval). Of those, kv_layers_swa attend through a sliding window of
    sliding_window tokens (Gemma 3: 15 of 18, 512 tokens) and kv_layers_full to the whole
    context; layers - kv_layers keep none (DeltaNet). Counts per kind, never a per-layer
    list, so a file claiming millions of layers costs nothing. sliding_window_pattern: one
    layer in N is global (llama.cpp's set_swa_pattern), used when kv_layers_swa is not
    given. expert_bytes: the routed experts' tensors (`*_exps`) in bytes, from the tensor
    table; None when the spec has none (tokenwalk.physics.moe then estimates them from the
    sizes). tied_embeddings: whether the output head is the token embedding table (a GGUF
    file without `output.weight`); None when the spec does not say. tensor_bytes: bytes of
    the tensors alone (no header). sources: field -> where its value comes from.
    tensor_types: per ggml type, tensors, elements, bytes and bits per weight. gguf: a
    description of the GGUF header (see `gguf_header.describe_header`), for the figure of
    the file's layout.
    """

    name: str
    params: float
    size_bytes: float
    layers: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    head_dim: int
    title: str | None = None
    architecture: str | None = None
    active_params: float | None = None
    kv_layers: int | None = None
    context_length: int | None = None
    vocab_size: int | None = None
    feed_forward_length: int | None = None
    expert_count: int = 0
    expert_used_count: int = 0
    expert_ffn_length: int | None = None
    expert_bytes: float | None = None
    shared_expert_count: int = 0
    full_attention_interval: int | None = None
    kv_layers_swa: int | None = None
    sliding_window: int | None = None
    sliding_window_pattern: int | None = None
    mtp_layers: int = 0
    tied_embeddings: bool | None = None
    tensor_bytes: float | None = None
    file_type: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    tensor_types: dict[str, dict] = field(default_factory=dict)
    gguf: dict | None = None
    stored_bytes_read_per_token: float | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.active_params is None:
            self.active_params = self.params
        if self.kv_layers is None:
            if self.full_attention_interval:
                self.kv_layers = full_attention_layers(self.layers, self.full_attention_interval)
            else:
                self.kv_layers = self.layers
        if self.kv_layers_swa is None:
            if self.sliding_window and self.sliding_window_pattern is not None:
                self.kv_layers_swa = layer_kind_counts(
                    self.layers, full_interval=self.full_attention_interval,
                    swa_period=self.sliding_window_pattern)["sliding"]
            else:
                self.kv_layers_swa = 0
        if self.kv_layers_swa and not self.sliding_window:
            raise SpecError(f"{self.name}: {self.kv_layers_swa} sliding-window layers but no sliding_window")
        if not 0 <= self.kv_layers_swa <= self.kv_layers:
            raise SpecError(f"{self.name}: kv_layers_swa ({self.kv_layers_swa}) must be between 0 and "
                            f"kv_layers ({self.kv_layers})")

    @property
    def kv_layers_full(self) -> int:
        """Layers whose KV cache holds the whole context (kv_layers - kv_layers_swa)."""
        return self.kv_layers - self.kv_layers_swa

    @property
    def bits_per_weight(self) -> float:
        """Average bits per weight of the stored tensors (Qwen3.6 Q4_K_M: 4.89)."""
        stored = self.tensor_bytes if self.tensor_bytes else self.size_bytes
        return 8 * stored / self.params

    @property
    def bytes_read_per_token(self) -> float:
        """Bytes of weights one decoded token reads (see the module's docstring)."""
        if self.stored_bytes_read_per_token is not None:
            return self.stored_bytes_read_per_token
        return self.size_bytes * self.active_params / self.params

    @property
    def is_moe(self) -> bool:
        return self.expert_count > 1

    def to_dict(self) -> dict:
        """Every field plus the derived ones (bits_per_weight, bytes_read_per_token)."""
        out = {f.name: getattr(self, f.name) for f in dataclass_fields(self)
               if f.name not in ("stored_bytes_read_per_token", "gguf")}
        out["bits_per_weight"] = self.bits_per_weight
        out["kv_layers_full"] = self.kv_layers_full
        out["bytes_read_per_token"] = self.bytes_read_per_token
        return out


def full_attention_layers(layers: int, interval: int) -> int:
    """Layers with full attention when one in `interval` has it (the last of each group,
    as in Qwen3-Next and Qwen3.6: layers 3, 7, 11, ... of 0..39 → 10). Counted, not looped."""
    return layers // interval


# Sliding-window rules of llama.cpp for files whose header does not say which layers
# slide: architecture -> (period, default window in tokens or None: the header's
# `<arch>.attention.sliding_window`). llama_hparams::set_swa_pattern(period) in
# src/llama-hparams.cpp makes layer il sliding when `il % period < period - 1`, so the last
# layer of each group of `period` attends to the whole context (period 0: every layer
# slides; 1: none). The calls, in each architecture's hparams loader (src/llama-model.cpp,
# since split into src/models/<arch>.cpp as load_swa_pattern / set_swa_pattern):
_SWA_RULES: dict[str, tuple[int, int | None]] = {
    # LLM_ARCH_GEMMA2: `n_swa = 4096; // default value of gemma 2`, then the optional
    # gemma2.attention.sliding_window; set_swa_pattern(2): alternate layers slide.
    "gemma2": (2, 4096),
    # LLM_ARCH_GEMMA3 (src/models/gemma3.cpp: load_swa_pattern(ml, 6)): set_swa_pattern(6),
    # five sliding layers then one global; n_swa from gemma3.attention.sliding_window, and
    # no sliding layers at all when that key is absent or 0.
    "gemma3": (6, None),
    # LLM_ARCH_GEMMA_EMBEDDING: set_swa_pattern(6) (a symmetric window, same cache size).
    "gemma-embedding": (6, None),
    # LLM_ARCH_COHERE2: set_swa_pattern(4), n_swa from cohere2.attention.sliding_window.
    "cohere2": (4, None),
    # LLM_ARCH_LLAMA4: chunked attention, `n_swa = 8192`, set_swa_pattern(4) "3 chunked - 1
    # full", unless llama4.attention.sliding_window = 0.
    "llama4": (4, 8192),
    # LLM_ARCH_OPENAI_MOE (gpt-oss): set_swa_pattern(2), n_swa from the header (128).
    "gpt-oss": (2, None),
}

# A period is looped over once (to combine a sliding pattern with a full-attention
# interval); a header asking for more than this is refused rather than trusted.
_MAX_PERIOD = 1 << 16


def layer_kind_counts(layers: int, *, kv_per_layer: list | None = None, full_interval: int | None = None,
                      swa_flags: list | None = None, swa_period: int | None = None) -> dict[str, int]:
    """How many of `layers` layers keep a full KV cache, a sliding-window one, or none.

    A layer keeps no cache when `kv_per_layer` (KV heads per layer) gives it 0 heads, or when
    `full_interval` is set and it is not the last of its group (DeltaNet layers of Qwen3.6).
    Of the others, a layer slides when `swa_flags` (a per-layer list of booleans, as
    `<arch>.attention.sliding_window_pattern` may be) says so, or by the periodic rule of
    `swa_period` (see _SWA_RULES). Periodic rules are counted arithmetically: a file may
    claim any number of layers; lists are the header's own arrays, already in memory.
    """
    def has_kv(i: int) -> bool:
        if kv_per_layer is not None:
            return i < len(kv_per_layer) and int(kv_per_layer[i]) > 0
        return not full_interval or (i + 1) % full_interval == 0

    def slides(i: int) -> bool:
        if swa_flags is not None:
            return i < len(swa_flags) and bool(swa_flags[i])
        if swa_period is None:
            return False
        return swa_period == 0 or i % swa_period < swa_period - 1

    if kv_per_layer is not None or swa_flags is not None:
        bound = min(layers, max(len(kv_per_layer or ()), len(swa_flags or ())))
        if kv_per_layer is None:
            # the flags cover the first `bound` layers; past them, the periodic rule of has_kv
            period = full_interval or 1
            rest = _periodic_counts(layers, has_kv, lambda i: False, period)
            head = _periodic_counts(bound, has_kv, lambda i: False, period)
            extra_full = rest["full"] - head["full"]
            extra_none = rest["none"] - head["none"]
        else:
            extra_full, extra_none = 0, layers - bound
        counts = {"full": extra_full, "sliding": 0, "none": extra_none}
        for i in range(bound):
            if not has_kv(i):
                counts["none"] += 1
            elif slides(i):
                counts["sliding"] += 1
            else:
                counts["full"] += 1
        return counts
    return _periodic_counts(layers, has_kv, slides,
                            _lcm(full_interval or 1, swa_period or 1))


def _periodic_counts(layers: int, has_kv, slides, period: int = 1) -> dict[str, int]:
    """Counts per kind when the kinds repeat every `period` layers: one period looped over."""
    if period > _MAX_PERIOD:
        raise SpecError(f"a layer pattern that repeats every {period} layers (more than {_MAX_PERIOD})")
    counts = {"full": 0, "sliding": 0, "none": 0}
    whole, rest = divmod(layers, period)
    for i in range(min(period, layers)):
        kind = "none" if not has_kv(i) else "sliding" if slides(i) else "full"
        counts[kind] += whole + (1 if i < rest else 0)
    return counts


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


# ---------------------------------------------------------------- JSON and presets

def model_from_dict(data: dict, label: str) -> ModelSpec:
    """A ModelSpec from a JSON object in the model schema; SpecError names label and field."""
    values = check_fields(data, label, REQUIRED_FIELDS, OPTIONAL_FIELDS, MODEL_DOMAINS)
    stored = values.pop("bytes_read_per_token", None)
    if values["params"] <= 0:
        raise SpecError(f"{label}: field 'params' must be > 0, not {values['params']!r}")
    for name in ("head_count", "head_count_kv", "head_dim", "layers"):
        if values[name] <= 0:
            raise SpecError(f"{label}: field '{name}' must be > 0, not {values[name]!r}")
    if values.get("expert_used_count", 0) > values.get("expert_count", 0):
        raise SpecError(f"{label}: field 'expert_used_count' ({values['expert_used_count']}) "
                        f"exceeds 'expert_count' ({values.get('expert_count', 0)})")
    if values.get("active_params") is not None and values["active_params"] > values["params"]:
        raise SpecError(f"{label}: field 'active_params' exceeds 'params'")
    types = {}
    for type_name, row in values.get("tensor_types", {}).items():
        if type_name not in GGML_TYPES or not isinstance(row, dict):
            raise SpecError(f"{label}: field 'tensor_types': {type_name!r} is not a ggml type "
                            f"({', '.join(GGML_TYPES)}) with an object of counts")
        types[type_name] = {**row, "bits_per_weight": row.get("bits_per_weight", GGML_TYPES[type_name].bits_per_weight)}
    values["tensor_types"] = types
    table = values.pop("tensor_table", None)
    if table is not None:
        # a preset of a file we do not have, with its tensor table: counted as a header's is
        # (table_counts); a value the JSON gives itself is kept
        counts = table_counts(table_tensors(table, label), values["layers"],
                              values.get("expert_count", 0), values.get("expert_used_count", 0))
        if counts["params"] != values["params"]:
            raise SpecError(f"{label}: field 'tensor_table' sums to {counts['params']:,} weights, "
                            f"but 'params' is {values['params']:,}")
        if stored is None:
            stored = counts["bytes_read_per_token"]
        # not tied_embeddings: it also tells the prompt step which embedding flops
        # active_params holds, which the table cannot say (Qwen's "3B active" leaves out the
        # input table); a spec that means it says it
        for name in ("expert_bytes", "tensor_bytes"):
            if values.get(name) is None and counts[name] is not None:
                values[name] = counts[name]
    return ModelSpec(**values, stored_bytes_read_per_token=stored)


@dataclass(frozen=True)
class TableTensor:
    """One tensor of a preset's `tensor_table` (the fields table_counts reads)."""

    name: str
    shape: tuple[int, ...]
    ggml_type: str
    n_elements: int
    n_bytes: int


def table_tensors(rows: list, label: str) -> list[TableTensor]:
    """The tensors a preset's `tensor_table` lists. Each row: name, shape (GGUF order),
    ggml_type, and, for a name with `{i}`, blocks (the block numbers that have it), so one
    row stands for the same tensor in many blocks. SpecError names the row and its field."""
    out = []
    for k, row in enumerate(rows):
        where = f"{label}: field 'tensor_table' row {k}"
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise SpecError(f"{where}: must be an object with a 'name'")
        shape = row.get("shape")
        if (not isinstance(shape, list) or not shape
                or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in shape)):
            raise SpecError(f"{where} ({printable(row['name'])}): 'shape' must be a list of whole numbers > 0, "
                            f"not {printable(repr(shape)[:40])}")
        ggml_type = GGML_TYPES.get(row.get("ggml_type"))
        if ggml_type is None:
            raise SpecError(f"{where} ({printable(row['name'])}): 'ggml_type' must be one of "
                            f"{', '.join(GGML_TYPES)}, not {printable(repr(row.get('ggml_type'))[:40])}")
        n_elements = math.prod(shape)
        if shape[0] % ggml_type.block_size:
            raise SpecError(f"{where} ({printable(row['name'])}): a row of {shape[0]} weights does not fill "
                            f"whole {ggml_type.name} blocks of {ggml_type.block_size}")
        n_bytes = n_elements // ggml_type.block_size * ggml_type.type_size
        blocks = row.get("blocks")
        if "{i}" in row["name"]:
            if not isinstance(blocks, list) or not all(isinstance(b, int) and not isinstance(b, bool)
                                                       and b >= 0 for b in blocks):
                raise SpecError(f"{where} ({printable(row['name'])}): 'blocks' must be a list of block numbers")
            names = [row["name"].replace("{i}", str(b)) for b in blocks]
        else:
            names = [row["name"]]
        out += [TableTensor(name, tuple(shape), ggml_type.name, n_elements, n_bytes) for name in names]
    return out


def model_to_preset(model: ModelSpec) -> dict:
    """The JSON object (model schema) that loads back into the same ModelSpec.

    Used to store a model read from a GGUF file as a preset (smollm2-135m), so the
    core works without the file.
    """
    out = {}
    for f in dataclass_fields(model):
        value = getattr(model, f.name)
        if f.name == "stored_bytes_read_per_token":
            out["bytes_read_per_token"] = model.bytes_read_per_token
        elif f.name == "kv_layers_swa" and not value:
            continue    # no sliding layers: the default, left out as in presets written before it
        elif value is not None and value != {}:
            out[f.name] = value
    return out


def list_model_presets(store=None) -> list[str]:
    """Names of the model presets (tokenwalk/data/models/*.json, or the `store`'s folder's)."""
    return preset_names("models", store)


def load_model(name_or_path, store=None) -> ModelSpec:
    """A ModelSpec from a preset name (of the data `store`, the default one if None), a .gguf
    file or a .json file.

    Raises SpecError (unknown preset, bad JSON, missing field) or GGUFError (a file
    that is not a readable GGUF), each one line naming the file and the field.
    """
    text = os.fspath(name_or_path)
    lower = text.lower()
    if lower.endswith(".json"):
        return model_from_dict(read_json_object(text), text)
    if lower.endswith(".gguf") or os.path.isfile(text):
        return model_from_gguf(read_gguf_header(text))
    presets = list_model_presets(store)
    if text in presets:
        data, label = read_preset("models", text, store)
        return model_from_dict(data, label)
    if os.sep in text or "/" in text:
        check_regular_file(text, SpecError)  # a folder or a FIFO says what it is
        raise SpecError(f"{text}: no such file")
    raise SpecError(f"{text}: not a model preset ({', '.join(presets)}), nor a .gguf or .json file")


# ---------------------------------------------------------------- GGUF

def model_from_gguf(header: GGUFHeader, name: str | None = None) -> ModelSpec:
    """A ModelSpec from a GGUF header: sizes from the metadata, counts from the tensor table.

    Knows the keys llama.cpp writes for llama, qwen2, qwen3, qwen3moe and the hybrid
    qwen35moe / qwen3next (full_attention_interval, nextn_predict_layers), and any
    architecture that uses the same key names.
    """
    src = os.path.basename(header.source)
    arch = header.architecture
    if not isinstance(arch, str) or not arch:
        raise GGUFError(f"{printable(header.source)}: metadata key 'general.architecture' is missing, "
                        f"so the model's keys cannot be found")
    if not header.tensors:
        raise GGUFError(f"{printable(header.source)}: the tensor table is empty (0 tensors): "
                        f"no weights to count")
    if header.n_parameters <= 0:
        raise GGUFError(f"{printable(header.source)}: every tensor has a zero dimension (0 weights in all): "
                        f"no weights to count")
    general_name = header.metadata.get("general.name")
    if isinstance(general_name, bool) or not isinstance(general_name, (str, int, type(None))):
        raise GGUFError(f"{printable(header.source)}: metadata key 'general.name' should be a string, "
                        f"not {type(general_name).__name__}")
    general_name = str(general_name) if general_name is not None and general_name != "" else None
    sources: dict[str, str] = {}

    def key(suffix: str) -> str:
        return f"{arch}.{suffix}"

    def get(suffix: str, field_name: str, required: bool = False, default=None):
        value = header.metadata.get(key(suffix))
        if value is None:
            if required:
                raise GGUFError(f"{header.source}: metadata key '{key(suffix)}' is missing "
                                f"(needed for {field_name})")
            return default
        if not (suffix == "attention.sliding_window_pattern" and isinstance(value, list)):  # per-layer flags
            _check_count(value, header, key(suffix))
        sources[field_name] = f"{src}: {key(suffix)}"
        return value

    block_count = _scalar(get("block_count", "layers", required=True), header, key("block_count"))
    mtp = _scalar(get("nextn_predict_layers", "mtp_layers", default=0), header, key("nextn_predict_layers"))
    layers = block_count - mtp
    if layers <= 0:
        raise GGUFError(f"{header.source}: {key('block_count')} = {block_count} leaves no layers")
    if mtp:
        sources["layers"] = f"{src}: {key('block_count')} - {key('nextn_predict_layers')}"
    # before any per-layer list is read: a header claiming 10^12 layers stops here
    check_value(layers, MODEL_DOMAINS["layers"], f"{printable(header.source)}: layers ({key('block_count')})",
                GGUFError)

    width = _scalar(get("embedding_length", "embedding_length", required=True), header, key("embedding_length"))
    head_count = _max(get("attention.head_count", "head_count", required=True))
    kv = get("attention.head_count_kv", "head_count_kv", default=None)
    interval = get("full_attention_interval", "full_attention_interval", default=None)
    if isinstance(kv, list):
        # Hybrid files may give KV heads per layer, 0 where a layer keeps no KV cache.
        per_layer = [int(x) for x in kv[:layers]]
        kv_layers = sum(1 for x in per_layer if x > 0)
        head_count_kv = max(per_layer) if per_layer else 0
        sources["kv_layers"] = f"{src}: layers with {key('attention.head_count_kv')} > 0"
    else:
        head_count_kv = int(kv) if kv is not None else head_count
        if kv is None:
            sources["head_count_kv"] = f"{src}: no {key('attention.head_count_kv')}, so equal to head_count"
        if interval:
            interval = _scalar(interval, header, key("full_attention_interval"))
            kv_layers = full_attention_layers(layers, interval)
            sources["kv_layers"] = f"{src}: 1 layer in {key('full_attention_interval')}"
        else:
            kv_layers = layers
            sources["kv_layers"] = f"{src}: every layer ({key('block_count')})"
    if head_count <= 0 or head_count_kv <= 0:
        raise GGUFError(f"{header.source}: {key('attention.head_count')} and head_count_kv must be > 0")
    kv_layers_swa, window, swa_period = _sliding_layers(
        header, arch, layers, kv if isinstance(kv, list) else None,
        interval if interval and not isinstance(interval, list) else None, sources, get)
    head_dim = get("attention.key_length", "head_dim", default=None)
    if head_dim is None:
        head_dim = width // head_count
        sources["head_dim"] = f"{src}: {key('embedding_length')} / {key('attention.head_count')}"
    head_dim = _scalar(head_dim, header, key("attention.key_length"))

    expert_count = _scalar(get("expert_count", "expert_count", default=0), header, key("expert_count"))
    expert_used = _scalar(get("expert_used_count", "expert_used_count", default=0), header,
                          key("expert_used_count"))
    if expert_used > expert_count:
        raise GGUFError(f"{header.source}: {key('expert_used_count')} ({expert_used}) exceeds "
                        f"{key('expert_count')} ({expert_count})")

    tokens = header.metadata.get("tokenizer.ggml.tokens")
    vocab = get("vocab_size", "vocab_size", default=None)
    if vocab is None and isinstance(tokens, list):
        vocab = len(tokens)
        sources["vocab_size"] = f"{src}: number of tokenizer.ggml.tokens"

    counts = tensor_counts(header, layers, expert_count, expert_used)
    shexp = get("expert_shared_count", "shared_expert_count", default=None)
    if shexp is None:
        shexp = 1 if counts["has_shared_expert"] else 0
        if shexp:
            sources["shared_expert_count"] = f"{src}: *_shexp tensors in the tensor table"

    size_bytes = header.file_size if header.file_size is not None else header.data_offset + header.tensor_data_bytes
    sources.update({
        "name": f"{src}: general.name" if header.metadata.get("general.name") else f"{src}: file name",
        "architecture": f"{src}: general.architecture",
        "params": f"{src}: sum of the tensor table's element counts",
        "active_params": f"{src}: params - (expert_count - expert_used_count) x params of one expert"
        if expert_count > 1 else f"{src}: dense, all params",
        **({"expert_bytes": f"{src}: sum of the *_exps tensors' bytes (blocks a token runs)"}
           if counts["expert_bytes"] is not None else {}),
        "size_bytes": f"{src}: file size",
        "tensor_bytes": f"{src}: sum of the tensors' bytes (ggml type sizes)",
        "bytes_read_per_token": f"{src}: tensor table (experts x used/count, embedding one row unless "
                                f"tied to the output, multi-token-prediction blocks left out)",
        "tensor_types": f"{src}: tensor table grouped by ggml type",
        "tied_embeddings": f"{src}: " + ("no output.weight in the tensor table, so token_embd is the output head"
                                        if "output.weight" not in {t.name for t in header.tensors}
                                        else "output.weight in the tensor table: the head has its own matrix"),
        "gguf": f"{src}: describe_header() of the file's header",
    })
    for field_name, suffix in (("mtp_layers", "nextn_predict_layers"), ("expert_count", "expert_count"),
                               ("expert_used_count", "expert_used_count"),
                               ("shared_expert_count", "expert_shared_count")):
        sources.setdefault(field_name, f"{src}: no {key(suffix)}, so 0")
    ffn = get("feed_forward_length", "feed_forward_length", default=None)
    context = get("context_length", "context_length", default=None)
    expert_ffn = get("expert_feed_forward_length", "expert_ffn_length", default=None)
    file_type = header.metadata.get("general.file_type")
    # the domains of the model schema, each named by the key it was read from
    check_domains({"layers": layers, "mtp_layers": mtp, "embedding_length": width, "head_count": head_count,
                   "head_count_kv": head_count_kv, "head_dim": head_dim, "kv_layers": kv_layers,
                   "kv_layers_swa": kv_layers_swa, "sliding_window": window, "context_length": context,
                   "vocab_size": vocab, "feed_forward_length": ffn if not isinstance(ffn, list) else _max(ffn),
                   "expert_count": expert_count, "expert_used_count": expert_used,
                   "expert_ffn_length": expert_ffn, "params": counts["params"], "size_bytes": size_bytes,
                   "full_attention_interval": interval if not isinstance(interval, list) else None},
                  MODEL_DOMAINS, lambda name: f"{printable(header.source)}: {name} "
                  f"({printable(sources.get(name, name).removeprefix(src + ': '))})", GGUFError)
    return ModelSpec(
        name=name or general_name or os.path.splitext(src)[0],
        architecture=arch,
        params=counts["params"],
        active_params=counts["active_params"],
        size_bytes=size_bytes,
        tensor_bytes=header.tensor_data_bytes,
        layers=layers,
        mtp_layers=mtp,
        embedding_length=width,
        head_count=head_count,
        head_count_kv=head_count_kv,
        head_dim=head_dim,
        kv_layers=kv_layers,
        context_length=_scalar(context, header, key("context_length")) if context is not None else None,
        vocab_size=int(vocab) if vocab is not None else None,
        feed_forward_length=_max(ffn) if ffn is not None else None,
        expert_count=expert_count,
        expert_used_count=expert_used,
        expert_bytes=counts["expert_bytes"],
        tied_embeddings=counts["tied_embeddings"],
        expert_ffn_length=_scalar(expert_ffn, header, key("expert_feed_forward_length"))
        if expert_ffn is not None else None,
        shared_expert_count=int(shexp),
        full_attention_interval=int(interval) if interval and not isinstance(interval, list) else None,
        kv_layers_swa=kv_layers_swa,
        sliding_window=window,
        sliding_window_pattern=swa_period,
        file_type=_FILE_TYPES.get(file_type) if isinstance(file_type, int) else None,
        sources=sources,
        tensor_types=header.bytes_by_type(),
        gguf=describe_header(header),
        stored_bytes_read_per_token=counts["bytes_read_per_token"],
    )


def _sliding_layers(header: GGUFHeader, arch: str, layers: int, kv_per_layer, interval, sources: dict, get):
    """(kv_layers_swa, sliding_window, period) from the header, else the architecture's rule.

    The header decides where it says: `<arch>.attention.sliding_window` (the window; 0 turns
    sliding off) and `<arch>.attention.sliding_window_pattern`, either a per-layer list of
    booleans (true: the layer slides; Gemma 4's files) or a period. Otherwise the period of
    _SWA_RULES (llama.cpp's rule for the architecture); an architecture without one has no
    sliding layers (llama.cpp ignores a qwen2 or phi3 file's sliding_window, for example).
    """
    src = os.path.basename(header.source)
    rule_period, rule_window = _SWA_RULES.get(arch, (None, None))
    window = get("attention.sliding_window", "sliding_window", default=None)
    if window is None:
        window = rule_window
        if window is not None:
            sources["sliding_window"] = (f"llama.cpp's default for {arch}: {window} tokens "
                                         f"(no {arch}.attention.sliding_window)")
    else:
        window = _scalar(window, header, f"{arch}.attention.sliding_window")
    pattern = get("attention.sliding_window_pattern", "sliding_window_pattern", default=None)
    flags, period = None, None
    if isinstance(pattern, list):
        flags = pattern
    elif pattern is not None:
        period = _scalar(pattern, header, f"{arch}.attention.sliding_window_pattern")
    elif rule_period is not None:
        period = rule_period
        sources["sliding_window_pattern"] = (f"no {arch}.attention.sliding_window_pattern, so llama.cpp's rule for "
                                             f"{arch}: set_swa_pattern({period}) in its hparams loader "
                                             f"(src/llama-model.cpp), one layer in {period} global")
    if not window or window < 0 or (flags is None and period is None):
        if window and flags is None and period is None:
            sources["kv_layers_swa"] = f"{src}: {arch}.attention.sliding_window but no rule for {arch}, so none"
        return 0, (window if window and window > 0 else None), None
    try:
        counts = layer_kind_counts(layers, kv_per_layer=kv_per_layer, full_interval=interval,
                                   swa_flags=flags, swa_period=period)
    except SpecError as err:
        raise GGUFError(f"{header.source}: {arch}.attention.sliding_window_pattern: {err}") from None
    how = ("the per-layer flags of " + f"{arch}.attention.sliding_window_pattern" if flags is not None
           else f"every layer but one in {period} (the last of each group)" if period else "every layer")
    sources["kv_layers_swa"] = f"{src}: layers with a KV cache that slide: {how}"
    return counts["sliding"], window, period


def tensor_counts(header: GGUFHeader, layers: int, expert_count: int, expert_used: int) -> dict:
    """Parameters and bytes from a GGUF header's tensor table (see table_counts)."""
    return table_counts(header.tensors, layers, expert_count, expert_used)


def table_counts(tensors, layers: int, expert_count: int, expert_used: int) -> dict:
    """Parameters and bytes from a tensor table: params, active_params,
    bytes_read_per_token (see the module docstring), expert_bytes (the routed experts of
    the blocks a token runs; None for a dense model), has_shared_expert, tied_embeddings
    (no output.weight: the embedding is the output head) and tensor_bytes.

    ``tensors``: rows with name, shape (GGUF order), n_elements and n_bytes, from a file's
    header or from a preset's `tensor_table` (the same count for both)."""
    tensors = list(tensors)
    params = sum(t.n_elements for t in tensors)
    expert_params = 0
    expert_bytes = 0
    read_bytes = 0.0
    names = {t.name for t in tensors}
    tied = "output.weight" not in names
    shared = False
    for t in tensors:
        block = _BLOCK.match(t.name)
        is_expert = "_exps" in t.name
        if is_expert:
            expert_params += t.n_elements
        if "_shexp" in t.name:
            shared = True
        if block and int(block.group(1)) >= layers:
            continue    # a multi-token-prediction block: not run by an ordinary step
        if is_expert and expert_count > 1:
            expert_bytes += t.n_bytes    # a token reads used / count of them, added below
        elif t.name == "token_embd.weight" and not tied and len(t.shape) == 2 and t.shape[1]:
            read_bytes += t.n_bytes / t.shape[1]    # one row: the token's embedding
        else:
            read_bytes += t.n_bytes
    active = params
    moe = expert_count > 1 and expert_params > 0
    if moe:
        active = params - (expert_count - expert_used) * expert_params // expert_count
        read_bytes += expert_bytes * expert_used / expert_count
    return {"params": params, "active_params": active, "bytes_read_per_token": read_bytes,
            "expert_bytes": expert_bytes if moe else None,
            "has_shared_expert": shared, "tied_embeddings": tied,
            "tensor_bytes": sum(t.n_bytes for t in tensors)}


def describe_header(header: GGUFHeader, array_head: int = 4) -> dict:
    """A JSON-friendly description of a GGUF header for the file-layout figure.

    The four bands with their byte ranges and sizes (and the share of the file that is
    tensor data), every metadata key (arrays as their count and
    first `array_head` items), the tensor table's types, and the first tensors. The
    presets of files we do not have store the same shape with the facts known.
    """
    metadata = []
    for f in header.fields:
        entry: dict[str, Any] = {"key": f.key, "type": f.value_type}
        if f.value_type == "array":
            entry["type"] = f"array[{f.item_type}]"
            entry["count"] = len(f.value)
            entry["head"] = [_short(v) for v in f.value[:array_head]]
        else:
            entry["value"] = _short(f.value)
        metadata.append(entry)
    end = header.file_size if header.file_size is not None else header.data_offset + header.tensor_data_bytes
    return {
        "file": os.path.basename(header.source),
        "version": header.version,
        "tensor_count": header.tensor_count,
        "kv_count": header.kv_count,
        "file_bytes": end,
        "alignment": header.alignment,
        "bands": {
            "header": [0, header.metadata_offset],
            "metadata": [header.metadata_offset, header.tensor_table_offset],
            "tensor_table": [header.tensor_table_offset, header.tensor_table_end],
            "tensor_data": [header.data_offset, end],
        },
        "band_bytes": {
            "header": header.metadata_offset,
            "metadata": header.tensor_table_offset - header.metadata_offset,
            "tensor_table": header.tensor_table_end - header.tensor_table_offset,
            "padding": header.data_offset - header.tensor_table_end,
            "tensor_data": end - header.data_offset,
        },
        "data_share": (end - header.data_offset) / end if end else None,
        "metadata": metadata,
        "tensor_types": header.bytes_by_type(),
        "tensors": [{"name": t.name, "shape": list(t.shape), "ggml_type": t.ggml_type}
                    for t in header.tensors[:array_head]],
        "bits_per_weight": 8 * header.tensor_data_bytes / header.n_parameters if header.n_parameters else None,
    }


def _short(value, limit: int = 120):
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    if isinstance(value, list):
        return f"[{len(value)} items]"
    return value


def _check_count(value, header: GGUFHeader, key: str) -> None:
    """A count or size from the metadata (or a per-layer list of them): whole, finite and
    not negative; else a GGUFError naming the key (NaN, infinities, strings, booleans)."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            what = "a list of whole numbers" if isinstance(value, list) else "a whole number"
            raise GGUFError(f"{printable(header.source)}: metadata key '{printable(key)}' should be {what}, "
                            f"not {printable(repr(item)[:40])} ({type(item).__name__})")
        if isinstance(item, float) and not (math.isfinite(item) and item == int(item)):
            raise GGUFError(f"{printable(header.source)}: metadata key '{printable(key)}' should be a whole "
                            f"number, not {item!r}")
        if item < 0:
            raise GGUFError(f"{printable(header.source)}: metadata key '{printable(key)}' should not be "
                            f"negative, not {item!r}")


def _scalar(value, header: GGUFHeader, key: str) -> int:
    if isinstance(value, list) or isinstance(value, float) and value != int(value):
        raise GGUFError(f"{header.source}: metadata key '{key}' should be one whole number, not {value!r}")
    return int(value)


def _max(value) -> int:
    """A per-layer list (some files give heads or FFN widths per layer) -> its largest value."""
    if isinstance(value, list):
        return int(max(value)) if value else 0
    return int(value)


# llama_ftype (llama.h): general.file_type -> the name people use for the mix.
_FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
               11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
               17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}
