"""How many kernels one decode step launches: the count its fixed cost is priced by.

A GPU runs a step as a queue of small programs (kernels): a norm, a matrix product, a rope,
a cache write, an add. Each launch costs a few microseconds of the host's and the device's
time whatever its size, so a step pays `launches x cost per launch` on top of its reads. The
count depends on the architecture, not on the model's width: a layer of Llama launches 19
kernels in llama.cpp's graph, a gated-DeltaNet layer of Qwen3.6 with its mixture of experts
64. So a 135M-parameter model with 30 layers pays for 576 launches a token, and Qwen3.6 35B-A3B
for about 2,400, each at the same machine's cost.

The counts per layer kind are data (`data/graph_launches.json`), counted in llama.cpp's own
one-token graph; this module only adds them up for a model:

    launches = input + attention layers x attention_layer + recurrent layers x recurrent_layer
               + layers x per_extra_expert x (expert_used_count - 1) + last_layer_extra + output

Recurrent (linear-attention) layers are the layers without a KV cache of a hybrid model (one
in `full_attention_interval` keeps one). An architecture the file does not list is counted
as its `fallback` (llama), and `Launches.counted_as` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenwalk import data_refs
from tokenwalk.errors import SpecError

LAUNCHES_FILE = "graph_launches.json"
_FIELDS = ("input", "attention_layer", "recurrent_layer", "per_extra_expert", "last_layer_extra", "output")


@dataclass(frozen=True)
class Launches:
    """One decode step's kernel launches.

    per_step: the total; parts: {"input": n, "attention layers": n, "recurrent layers": n,
    "extra experts": n, "output": n} (the last layer's extra launches count in "output");
    architecture: the model's; counted_as: the architecture whose counts were used (differs
    from `architecture` when the file does not list it); attention_layers, recurrent_layers:
    how many layers of each kind the step runs.
    """

    per_step: int
    parts: dict
    architecture: str | None
    counted_as: str
    attention_layers: int
    recurrent_layers: int

    @property
    def counted_exactly(self) -> bool:
        """Whether the model's own architecture was counted (not the fallback's)."""
        return self.architecture == self.counted_as


def launch_table(store: data_refs.DataStore | None = None) -> dict:
    """{architecture: {field: count}} of graph_launches.json, checked: every count a
    non-negative integer, `attention_layer` present, the fallback listed."""
    store = data_refs.store_or_default(store)
    return store.remember(("graph launches",), lambda: _checked(store))


def _checked(store) -> dict:
    label = store.label(LAUNCHES_FILE)
    data = store.read_json(LAUNCHES_FILE)
    table = data.get("architectures") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not table:
        raise SpecError(f"{label}: field 'architectures': missing or empty")
    out = {}
    for arch, entry in table.items():
        if not isinstance(entry, dict) or "attention_layer" not in entry:
            raise SpecError(f"{label}: architectures.{arch}: field 'attention_layer' is missing")
        counts = {}
        for name in _FIELDS:
            value = entry.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SpecError(f"{label}: architectures.{arch}.{name}: {value!r} is not a count")
            counts[name] = value
        out[arch] = counts
    fallback = data.get("fallback")
    if fallback not in out:
        raise SpecError(f"{label}: field 'fallback': {fallback!r} is not one of its architectures")
    out[None] = out[fallback] | {"name": fallback}
    return out


def decode_launches(model, store: data_refs.DataStore | None = None) -> Launches:
    """The kernel launches of one decode step of `model` (a spec with layers, architecture,
    kv_layers, full_attention_interval and expert_used_count where it has them)."""
    table = launch_table(store)
    arch = getattr(model, "architecture", None)
    counted_as = arch if arch in table else table[None]["name"]
    counts = table[counted_as]
    layers = int(model.layers)
    interval = getattr(model, "full_attention_interval", None)
    recurrent = layers - layers // interval if interval and counts["recurrent_layer"] else 0
    attention = layers - recurrent
    used = int(getattr(model, "expert_used_count", 0) or 0)
    parts = {
        "input": counts["input"],
        "attention layers": attention * counts["attention_layer"],
        "recurrent layers": recurrent * counts["recurrent_layer"],
        "extra experts": layers * counts["per_extra_expert"] * max(used - 1, 0),
        "output": counts["last_layer_extra"] + counts["output"],
    }
    return Launches(per_step=sum(parts.values()), parts=parts, architecture=arch, counted_as=counted_as,
                    attention_layers=attention, recurrent_layers=recurrent)
