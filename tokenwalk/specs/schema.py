"""Reading the JSON spec files (models, machines): one object, typed fields, a source for each;
and the domain of every value a model, a machine or a request may hold.

Shared by `model_spec` and `machine_spec`. Every problem is a SpecError of one line that
names the file and the field.

The domains (MODEL_DOMAINS, MACHINE_DOMAINS, REQUEST_DOMAINS) are the one statement of
which numbers tokenwalk accepts: whole or not, the least and the largest value. The
maxima are far past any real model or machine (the largest have a few hundred layers,
a few trillion weights, 8 TB/s and a few PFLOP/s) yet small enough that no sum, product
or JSON number of the walk overflows; the minima keep a bandwidth or a compute rate from
being so small that a time is infinite. A JSON spec, a GGUF header, the command line's
options and the page's form are all checked against them (`check_value`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from tokenwalk import data_refs
from tokenwalk.errors import SpecError, TokenwalkError

# Field kinds: "int" (a whole number; 4096 or 4096.0), "number", "str", "dict", "list", "bool".
_KINDS = {"int": "a whole number", "number": "a number", "str": "a string", "dict": "an object",
          "list": "a list", "bool": "true or false"}


def read_json_object(path, label: str | None = None) -> dict:
    """The JSON object in the file at `path` (`data_refs.read_json`); SpecError if missing,
    unreadable or not an object."""
    label = label or os.fspath(path)
    return _object(data_refs.read_json(path, label, missing="cannot open: no such file", error=SpecError), label)


def _object(data, label: str) -> dict:
    if not isinstance(data, dict):
        raise SpecError(f"{label}: expected a JSON object {{...}}, found {type(data).__name__}")
    return data


# ----------------------------------------------------------------- domains

# The longest context (and prompt, answer, chunk) tokenwalk walks: 10^9 tokens, a hundred
# times the longest context a released model advertises (Llama 4 Scout, 10 million).
MAX_CONTEXT_TOKENS = 1_000_000_000
# Layers of a model: the deepest released models have under 200.
MAX_LAYERS = 100_000
# Conversations decoded together: a server batches hundreds.
MAX_USERS = 100_000
# Draft tokens per speculative round: published set-ups draft 1 to 16.
MAX_DRAFT_TOKENS = 1_024


@dataclass(frozen=True)
class Domain:
    """Where a value may lie: from `low` to `high` (both included unless `low_open` /
    `high_open`), a whole number when `whole`. `unit` is printed after the bounds."""

    low: float
    high: float
    whole: bool = False
    low_open: bool = False
    high_open: bool = False
    unit: str = ""

    def describe(self) -> str:
        """'a whole number from 1 to 100,000' / 'a number from 0.001 to 100,000 GB/s'."""
        what = "a whole number" if self.whole else "a number"
        span = f"from {_shown(self.low)} to {_shown(self.high)}" + (f" {self.unit}" if self.unit else "")
        left_out = [_shown(b) for b, out in ((self.low, self.low_open), (self.high, self.high_open)) if out]
        return f"{what} {span}" + (f" ({' and '.join(left_out)} excluded)" if left_out else "")

    def problem(self, value) -> str | None:
        """Why `value` is not in the domain ('must be ...'), or None when it is."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be {self.describe()}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be {self.describe()}"
        if self.whole and isinstance(value, float) and not value.is_integer():
            return f"must be {self.describe()}"
        below = value <= self.low if self.low_open else value < self.low
        above = value >= self.high if self.high_open else value > self.high
        return f"must be {self.describe()}" if below or above else None


def _shown(bound: float) -> str:
    if bound == int(bound) and abs(bound) <= 1e9:
        return f"{int(bound):,}"
    return f"{bound:g}"


def shown_value(value) -> str:
    """A value as an error line shows it: short, one line (a 400-digit integer by its length)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def check_value(value, domain: Domain, what: str, error: type[Exception] = SpecError):
    """`value` if it lies in `domain` (an int when the domain is whole), else `error`:
    '{what} must be a whole number from 1 to 1,000,000,000, not 0'."""
    why = domain.problem(value)
    if why is not None:
        raise error(f"{what} {why}, not {shown_value(value)}")
    return int(value) if domain.whole else value


def check_domains(values: dict, domains: dict, where, error: type[Exception] = SpecError) -> None:
    """Every value of `values` that `domains` names, checked (None: not given). `where(name)`
    says how a message names the field."""
    for name, domain in domains.items():
        value = values.get(name)
        if value is not None:
            check_value(value, domain, where(name), error)


def _whole(low, high, unit=""):
    return Domain(low, high, whole=True, unit=unit)


def _number(low, high, unit=""):
    return Domain(low, high, unit=unit)


REQUEST_DOMAINS = {
    "prompt_tokens": _whole(1, MAX_CONTEXT_TOKENS),
    "output_tokens": _whole(0, MAX_CONTEXT_TOKENS),
    "num_ctx": _whole(1, MAX_CONTEXT_TOKENS),
    "chunk_tokens": _whole(1, MAX_CONTEXT_TOKENS),
    "users": _whole(1, MAX_USERS),
    "spec_alpha": Domain(0, 1, high_open=True),
    "spec_gamma": _whole(1, MAX_DRAFT_TOKENS),
}

# `tokenwalk generate` and `tokenwalk measure`: what the engine is asked to do. A context
# beyond the model's own is refused separately, once the file's header is read.
GENERATION_DOMAINS = {
    "max_tokens": _whole(1, MAX_CONTEXT_TOKENS),
    "output_tokens": _whole(1, MAX_CONTEXT_TOKENS),
    "ctx_tokens": _whole(1, MAX_CONTEXT_TOKENS),
    "chunk_tokens": _whole(1, MAX_CONTEXT_TOKENS),
    # 0 is greedy; past 100 every distribution is as flat as it gets
    "temperature": _number(0, 100),
    "top_k": _whole(0, 100_000_000),
    "top_p": Domain(0, 1, low_open=True),
    "seed": _whole(0, 2**32 - 1),
}

MACHINE_DOMAINS = {
    # the fastest memories: 8 TB/s (B200); the slowest anything reads at: 1 MB/s
    "bandwidth_gbs": _number(0.001, 100_000, "GB/s"),
    # dense FP16 of one chip: a few PFLOP/s at most; this-machine's is a CPU's achieved rate
    "fp16_tflops": _number(1e-6, 100_000, "TFLOP/s"),
    "memory_gb": _number(0.001, 100_000, "GB"),
    "disk_gbs": _number(0.001, 100_000, "GB/s"),
    "clock_ghz": _number(0.001, 100, "GHz"),
    "compute_units": _whole(1, 1_000_000),
    "lanes_per_cu": _whole(1, 100_000),
    "l2_cache_bytes": _whole(0, 1e12, "bytes"),
    "shared_memory_per_cu_bytes": _whole(0, 1e12, "bytes"),
    "system_and_apps_bytes": _number(0, 1e15, "bytes"),
    # the year a chip family first shipped: from the first microprocessors to far ahead
    "architecture_year": _whole(1970, 2100),
}

MODEL_DOMAINS = {
    # the largest models have a few trillion weights and files of a few TB
    "params": _number(1, 1e14),
    "active_params": _number(1, 1e14),
    "size_bytes": _number(1, 1e15, "bytes"),
    "tensor_bytes": _number(0, 1e15, "bytes"),
    "bytes_read_per_token": _number(0, 1e15, "bytes"),
    "expert_bytes": _number(0, 1e15, "bytes"),
    "layers": _whole(1, MAX_LAYERS),
    "kv_layers": _whole(0, MAX_LAYERS),
    "kv_layers_swa": _whole(0, MAX_LAYERS),
    "mtp_layers": _whole(0, MAX_LAYERS),
    "full_attention_interval": _whole(0, MAX_LAYERS),
    "sliding_window_pattern": _whole(0, MAX_LAYERS),
    "sliding_window": _whole(0, MAX_CONTEXT_TOKENS),
    "context_length": _whole(0, MAX_CONTEXT_TOKENS),
    "embedding_length": _whole(1, 10_000_000),
    "head_count": _whole(1, 100_000),
    "head_count_kv": _whole(1, 100_000),
    "head_dim": _whole(1, 1_000_000),
    "vocab_size": _whole(0, 100_000_000),
    "feed_forward_length": _whole(0, 10_000_000),
    "expert_ffn_length": _whole(0, 10_000_000),
    "expert_count": _whole(0, 1_000_000),
    "expert_used_count": _whole(0, 1_000_000),
    "shared_expert_count": _whole(0, 1_000_000),
}


def check_fields(data: dict, label: str, required: dict[str, str], optional: dict[str, str],
                 domains: dict | None = None) -> dict[str, Any]:
    """The fields of `data` that the schema knows, each checked against its kind and, where
    `domains` names it, its domain.

    A required field that is missing or null, or any field of the wrong kind or out of its
    domain, is a SpecError naming the file and the field. Unknown fields are ignored
    (comments, notes). Whole numbers given as 4096.0 become int.
    """
    out: dict[str, Any] = {}
    for name, kind in required.items():
        if data.get(name) is None:
            raise SpecError(f"{label}: missing field '{name}' ({_KINDS[kind]})")
    for name, kind in {**required, **optional}.items():
        if data.get(name) is None:
            continue
        out[name] = _check_kind(data[name], kind, label, name)
    check_domains(out, domains or {}, lambda name: f"{label}: field '{name}'")
    return out


def _check_kind(value, kind: str, label: str, name: str):
    bad = SpecError(f"{label}: field '{name}' must be {_KINDS[kind]}, not {value!r}")
    if kind in ("int", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        if isinstance(value, int) and value.bit_length() > 1023:  # past any float (1.8e308)
            raise SpecError(f"{label}: field '{name}' must be a finite number >= 0, not an integer of "
                            f"{int(value.bit_length() * 0.30103) + 1} digits")
        if value != value or value in (float("inf"), float("-inf")) or value < 0:
            raise SpecError(f"{label}: field '{name}' must be a finite number >= 0, not {value!r}")
        if kind == "int":
            if float(value) != int(value):
                raise bad
            return int(value)
        return value
    expected = {"str": str, "dict": dict, "list": list, "bool": bool}[kind]
    if not isinstance(value, expected):
        raise bad
    return value


def preset_names(folder: str, store: data_refs.DataStore | None = None) -> list[str]:
    """Names of the JSON presets in the data folder's <folder>/ (file names without .json;
    a name starting with '_' is a helper file, not a preset)."""
    return [name[:-5] for name in data_refs.store_or_default(store).file_names(folder)
            if name.endswith(".json") and not name.startswith("_")]


def read_preset(folder: str, name: str, store: data_refs.DataStore | None = None) -> tuple[dict, str]:
    """(object, label) of the preset <folder>/<name>.json in the store's data folder (the
    store's parsed copy: build a new object from it, never change it)."""
    store = data_refs.store_or_default(store)
    relative = f"{folder}/{name}.json"
    label = store.label(relative)
    try:
        data = store.read_json(relative)
    except SpecError:
        raise
    except TokenwalkError as error:
        raise SpecError(str(error)) from None
    return _object(data, label), label
