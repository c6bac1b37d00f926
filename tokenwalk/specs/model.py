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
from tokenwalk.gguf.ggml_types import GGML_TYPES, LLAMA_FTYPES
from tokenwalk.gguf.header import GGUFHeader, read_gguf_header
from tokenwalk.gguf.hparams import full_attention_layers, layer_kind_counts, read_hparams
from tokenwalk.specs.recalled import check_recalled
from tokenwalk.specs.schema import (
    MODEL_DOMAINS,
    check_domains,
    check_fields,
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
    "tensor_table": "list", "recalled": "list",
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
    recalled: tuple[str, ...] = ()  # fields whose values were written from memory (tokenwalk.specs.recalled)
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


# ---------------------------------------------------------------- JSON and presets

def model_from_dict(data: dict, label: str) -> ModelSpec:
    """A ModelSpec from a JSON object in the model schema; SpecError names label and field."""
    values = check_fields(data, label, REQUIRED_FIELDS, OPTIONAL_FIELDS, MODEL_DOMAINS)
    values["recalled"] = check_recalled(data, label)
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
        elif f.name == "recalled":
            if value:  # a model read from a file has nothing recalled: no empty list written
                out[f.name] = list(value)
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
    """A ModelSpec from a GGUF header: sizes from the metadata as `tokenwalk.gguf.hparams`
    reads them (the engine reads the same), counts from the tensor table."""
    src = os.path.basename(header.source)
    hp = read_hparams(header.metadata, header.source)  # the metadata's meaning, read once for specs and engine
    arch = hp.architecture
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
    sources = dict(hp.sources)

    def key(suffix: str) -> str:
        return f"{arch}.{suffix}"

    counts = tensor_counts(header, hp.layers, hp.expert_count, hp.expert_used_count)
    shexp = hp.expert_shared_count
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
        if hp.expert_count > 1 else f"{src}: dense, all params",
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
    file_type = header.metadata.get("general.file_type")
    # the domains of the model schema, each named by the key it was read from
    check_domains({"layers": hp.layers, "mtp_layers": hp.mtp_layers, "embedding_length": hp.embedding_length,
                   "head_count": hp.head_count, "head_count_kv": hp.head_count_kv, "head_dim": hp.head_dim,
                   "kv_layers": hp.kv_layers, "kv_layers_swa": hp.kv_layers_swa, "sliding_window": hp.sliding_window,
                   "context_length": hp.context_length, "vocab_size": hp.vocab_size,
                   "feed_forward_length": hp.feed_forward_length, "expert_count": hp.expert_count,
                   "expert_used_count": hp.expert_used_count, "expert_ffn_length": hp.expert_ffn_length,
                   "params": counts["params"], "size_bytes": size_bytes,
                   "full_attention_interval": hp.full_attention_interval},
                  MODEL_DOMAINS, lambda name: f"{printable(header.source)}: {name} "
                  f"({printable(sources.get(name, name).removeprefix(src + ': '))})", GGUFError)
    return ModelSpec(
        name=name or general_name or os.path.splitext(src)[0],
        architecture=arch,
        params=counts["params"],
        active_params=counts["active_params"],
        size_bytes=size_bytes,
        tensor_bytes=header.tensor_data_bytes,
        layers=hp.layers,
        mtp_layers=hp.mtp_layers,
        embedding_length=hp.embedding_length,
        head_count=hp.head_count,
        head_count_kv=hp.head_count_kv,
        head_dim=hp.head_dim,
        kv_layers=hp.kv_layers,
        context_length=hp.context_length,
        vocab_size=hp.vocab_size,
        feed_forward_length=hp.feed_forward_length,
        expert_count=hp.expert_count,
        expert_used_count=hp.expert_used_count,
        expert_bytes=counts["expert_bytes"],
        tied_embeddings=counts["tied_embeddings"],
        expert_ffn_length=hp.expert_ffn_length,
        shared_expert_count=int(shexp),
        full_attention_interval=hp.full_attention_interval,
        kv_layers_swa=hp.kv_layers_swa,
        sliding_window=hp.sliding_window,
        sliding_window_pattern=hp.sliding_window_pattern,
        file_type=LLAMA_FTYPES.get(file_type) if isinstance(file_type, int) else None,
        sources=sources,
        tensor_types=header.bytes_by_type(),
        gguf=describe_header(header),
        stored_bytes_read_per_token=counts["bytes_read_per_token"],
    )


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
