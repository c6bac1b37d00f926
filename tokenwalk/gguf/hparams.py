"""What a GGUF file's metadata means: its hyper-parameters, read in one place (as llama.cpp
reads them in llama-hparams and each architecture's loader). Pure Python, standard library.

`read_hparams(metadata, source)` turns the ``{architecture}.*`` keys into counts: the layers
a token runs (``block_count`` less the multi-token-prediction blocks), the width, the
attention heads and KV heads (per layer where a hybrid file gives a list), the head size
(``attention.key_length``, else width / heads), which layers keep a KV cache, which of those
slide and through how wide a window (the header's keys, else llama.cpp's rule for the
architecture, `SWA_RULES`), the experts, the feed-forward widths, the context, the RoPE base
and dimensions and the RMSNorm epsilon. The model specs (`tokenwalk.specs.model`) and the
engine (`tokenwalk.native.hparams`) both read a file through it, so the two cannot disagree
on what a file says. A count that is not a whole, finite, non-negative number, or a missing
required key, is one GGUFError naming the file and the key.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from tokenwalk.errors import GGUFError, SpecError, printable
from tokenwalk.specs.schema import MODEL_DOMAINS, check_value


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
SWA_RULES: dict[str, tuple[int, int | None]] = {
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

# RoPE and norm values where the header gives none. The sliding layers' RoPE base is the
# global one but where an architecture fixes its own: Gemma 3 in llama.cpp
# (LLM_ARCH_GEMMA3) sets rope_freq_base_train_swa to 10,000 whatever gemma3.rope.freq_base
# says. The defaults of the base and the epsilon are the engine's since it first ran each
# family (llama: 10,000 and 1e-5; gemma3: 1,000,000 and 1e-6).
ROPE_BASE_SWA = {"gemma3": 10000.0}
ROPE_BASE_DEFAULT = {"gemma3": 1000000.0}
RMS_EPS_DEFAULT = {"gemma3": 1e-6}

# A period is looped over once (to combine a sliding pattern with a full-attention
# interval); a header asking for more than this is refused rather than trusted.
_MAX_PERIOD = 1 << 16


def slides(layer: int, period: int | None) -> bool:
    """Whether `layer` slides under llama.cpp's periodic rule (set_swa_pattern(period)): every
    layer but the last of each group of `period` (period 0: every layer; None: no rule)."""
    if period is None:
        return False
    return period == 0 or layer % period < period - 1


def layer_kind_counts(layers: int, *, kv_per_layer: list | None = None, full_interval: int | None = None,
                      swa_flags: list | None = None, swa_period: int | None = None) -> dict[str, int]:
    """How many of `layers` layers keep a full KV cache, a sliding-window one, or none.

    A layer keeps no cache when `kv_per_layer` (KV heads per layer) gives it 0 heads, or when
    `full_interval` is set and it is not the last of its group (DeltaNet layers of Qwen3.6).
    Of the others, a layer slides when `swa_flags` (a per-layer list of booleans, as
    `<arch>.attention.sliding_window_pattern` may be) says so, or by the periodic rule of
    `swa_period` (see SWA_RULES). Periodic rules are counted arithmetically: a file may
    claim any number of layers; lists are the header's own arrays, already in memory.
    """
    def has_kv(i: int) -> bool:
        if kv_per_layer is not None:
            return i < len(kv_per_layer) and int(kv_per_layer[i]) > 0
        return not full_interval or (i + 1) % full_interval == 0

    def layer_slides(i: int) -> bool:
        if swa_flags is not None:
            return i < len(swa_flags) and bool(swa_flags[i])
        return slides(i, swa_period)

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
            elif layer_slides(i):
                counts["sliding"] += 1
            else:
                counts["full"] += 1
        return counts
    return _periodic_counts(layers, has_kv, layer_slides,
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


@dataclass(frozen=True)
class HParams:
    """A GGUF file's hyper-parameters (counts; windows in tokens; None where the file does not say).

    layers: the blocks a token runs (block_count - mtp_layers). head_count, head_count_kv and
    feed_forward_length: the largest where the file gives one per layer. kv_per_layer: KV
    heads per layer (0: the layer keeps no cache), None where the file gives one count.
    kv_layers: layers that keep a KV cache; kv_layers_swa of them slide through
    sliding_window tokens, by swa_flags (the header's per-layer booleans) or the period
    sliding_window_pattern (llama.cpp's set_swa_pattern). rope_base_swa: the sliding layers'
    RoPE base; rope_scaling: the header's rope.scaling.type ("none" without one) and
    rope_scaling_factor its factor. sources: field -> the key (or the rule) it comes from.
    """

    architecture: str
    layers: int
    mtp_layers: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    kv_per_layer: tuple | None
    kv_layers: int
    full_attention_interval: int | None
    head_dim: int
    value_dim: int
    kv_layers_swa: int
    sliding_window: int | None
    sliding_window_pattern: int | None
    swa_flags: tuple | None
    expert_count: int
    expert_used_count: int
    expert_shared_count: int | None
    expert_ffn_length: int | None
    feed_forward_length: int | None
    context_length: int | None
    vocab_size: int | None
    rope_base: float
    rope_base_swa: float
    rope_dims: int
    rope_scaling: str
    rope_scaling_factor: float
    rms_eps: float
    sources: dict = field(default_factory=dict, compare=False)

    def layer_window(self, layer: int) -> int:
        """Layer `layer`'s sliding window in tokens, 0 where it attends to the whole context."""
        if not self.sliding_window or not self.kv_layers_swa:
            return 0
        if self.swa_flags is not None:
            return self.sliding_window if layer < len(self.swa_flags) and self.swa_flags[layer] else 0
        return self.sliding_window if slides(layer, self.sliding_window_pattern) else 0

    def layer_windows(self) -> tuple[int, ...]:
        """`layer_window` of every layer (a list as long as the layers: for the engine, whose
        files have tens of layers; the counts above never loop over them)."""
        return tuple(self.layer_window(i) for i in range(self.layers))


def check_count(value, source: str, key: str) -> None:
    """A count or size from the metadata (or a per-layer list of them): whole, finite and
    not negative; else a GGUFError naming the key (NaN, infinities, strings, booleans)."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            what = "a list of whole numbers" if isinstance(value, list) else "a whole number"
            raise GGUFError(f"{printable(source)}: metadata key '{printable(key)}' should be {what}, "
                            f"not {printable(repr(item)[:40])} ({type(item).__name__})")
        if isinstance(item, float) and not (math.isfinite(item) and item == int(item)):
            raise GGUFError(f"{printable(source)}: metadata key '{printable(key)}' should be a whole "
                            f"number, not {item!r}")
        if item < 0:
            raise GGUFError(f"{printable(source)}: metadata key '{printable(key)}' should not be "
                            f"negative, not {item!r}")


def _scalar(value, source: str, key: str) -> int:
    if isinstance(value, list) or isinstance(value, float) and value != int(value):
        raise GGUFError(f"{source}: metadata key '{key}' should be one whole number, not {value!r}")
    return int(value)


def largest(value) -> int:
    """A per-layer list (some files give heads or FFN widths per layer) -> its largest value."""
    if isinstance(value, list):
        return int(max(value)) if value else 0
    return int(value)


def _whole(metadata: dict, key: str, default: int, source: str) -> int:
    """A count from the metadata that no spec field records (a value length, RoPE's
    dimensions), `default` without the key."""
    value = metadata.get(key)
    if value is None:
        return default
    check_count(value, source, key)
    return _scalar(value, source, key)


def _real(metadata: dict, key: str, default: float, source: str) -> float:
    """A real number from the metadata (a RoPE base, an epsilon), `default` without the key."""
    value = metadata.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise GGUFError(f"{printable(source)}: metadata key '{printable(key)}' should be a number > 0, "
                        f"not {printable(repr(value)[:40])}")
    return float(value)


def read_hparams(metadata: dict, source: str) -> HParams:
    """The hyper-parameters of a GGUF file from its metadata (`source`: the file, for messages).

    Knows the keys llama.cpp writes for llama, qwen2, qwen3, gemma3, qwen3moe and the hybrid
    qwen35moe / qwen3next (full_attention_interval, nextn_predict_layers), and any
    architecture that uses the same key names.
    """
    src = os.path.basename(source)
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise GGUFError(f"{printable(source)}: metadata key 'general.architecture' is missing, "
                        f"so the model's keys cannot be found")
    sources: dict[str, str] = {}

    def key(suffix: str) -> str:
        return f"{arch}.{suffix}"

    def get(suffix: str, field_name: str, required: bool = False, default=None):
        value = metadata.get(key(suffix))
        if value is None:
            if required:
                raise GGUFError(f"{source}: metadata key '{key(suffix)}' is missing "
                                f"(needed for {field_name})")
            return default
        if not (suffix == "attention.sliding_window_pattern" and isinstance(value, list)):  # per-layer flags
            check_count(value, source, key(suffix))
        sources[field_name] = f"{src}: {key(suffix)}"
        return value

    block_count = _scalar(get("block_count", "layers", required=True), source, key("block_count"))
    mtp = _scalar(get("nextn_predict_layers", "mtp_layers", default=0), source, key("nextn_predict_layers"))
    layers = block_count - mtp
    if layers <= 0:
        raise GGUFError(f"{source}: {key('block_count')} = {block_count} leaves no layers")
    if mtp:
        sources["layers"] = f"{src}: {key('block_count')} - {key('nextn_predict_layers')}"
    # before any per-layer list is read: a header claiming 10^12 layers stops here
    check_value(layers, MODEL_DOMAINS["layers"], f"{printable(source)}: layers ({key('block_count')})",
                GGUFError)

    width = _scalar(get("embedding_length", "embedding_length", required=True), source, key("embedding_length"))
    head_count = largest(get("attention.head_count", "head_count", required=True))
    kv = get("attention.head_count_kv", "head_count_kv", default=None)
    interval = get("full_attention_interval", "full_attention_interval", default=None)
    per_layer = None
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
            interval = _scalar(interval, source, key("full_attention_interval"))
            kv_layers = full_attention_layers(layers, interval)
            sources["kv_layers"] = f"{src}: 1 layer in {key('full_attention_interval')}"
        else:
            kv_layers = layers
            sources["kv_layers"] = f"{src}: every layer ({key('block_count')})"
    if head_count <= 0 or head_count_kv <= 0:
        raise GGUFError(f"{source}: {key('attention.head_count')} and head_count_kv must be > 0")
    interval = interval if interval and not isinstance(interval, list) else None
    kv_layers_swa, window, swa_period, flags = _sliding_layers(
        metadata, source, arch, layers, kv if isinstance(kv, list) else None, interval, sources, get)
    head_dim = get("attention.key_length", "head_dim", default=None)
    if head_dim is None:
        head_dim = width // head_count
        sources["head_dim"] = f"{src}: {key('embedding_length')} / {key('attention.head_count')}"
    head_dim = _scalar(head_dim, source, key("attention.key_length"))
    value_dim = _whole(metadata, key("attention.value_length"), head_dim, source)

    expert_count = _scalar(get("expert_count", "expert_count", default=0), source, key("expert_count"))
    expert_used = _scalar(get("expert_used_count", "expert_used_count", default=0), source,
                          key("expert_used_count"))
    if expert_used > expert_count:
        raise GGUFError(f"{source}: {key('expert_used_count')} ({expert_used}) exceeds "
                        f"{key('expert_count')} ({expert_count})")

    tokens = metadata.get("tokenizer.ggml.tokens")
    vocab = get("vocab_size", "vocab_size", default=None)
    if vocab is None and isinstance(tokens, list):
        vocab = len(tokens)
        sources["vocab_size"] = f"{src}: number of tokenizer.ggml.tokens"
    shexp = get("expert_shared_count", "shared_expert_count", default=None)
    ffn = get("feed_forward_length", "feed_forward_length", default=None)
    context = get("context_length", "context_length", default=None)
    expert_ffn = get("expert_feed_forward_length", "expert_ffn_length", default=None)

    rope_base = _real(metadata, key("rope.freq_base"), ROPE_BASE_DEFAULT.get(arch, 10000.0), source)
    scaling = metadata.get(key("rope.scaling.type"), "none")
    # a factor of 0 means no scaling, as the engine has always read it (llama.cpp's loader
    # takes ropescale 0 as a scale of 1 too: recalled, not reopened)
    factor = _real(metadata, key("rope.scaling.factor"), 1.0, source) if metadata.get(key("rope.scaling.factor")) else 1.0
    return HParams(
        architecture=arch,
        layers=layers,
        mtp_layers=mtp,
        embedding_length=width,
        head_count=head_count,
        head_count_kv=head_count_kv,
        kv_per_layer=tuple(per_layer) if per_layer is not None else None,
        kv_layers=kv_layers,
        full_attention_interval=interval,
        head_dim=head_dim,
        value_dim=value_dim,
        kv_layers_swa=kv_layers_swa,
        sliding_window=window,
        sliding_window_pattern=swa_period,
        swa_flags=tuple(flags) if flags is not None else None,
        expert_count=expert_count,
        expert_used_count=expert_used,
        expert_shared_count=int(shexp) if shexp is not None else None,
        expert_ffn_length=_scalar(expert_ffn, source, key("expert_feed_forward_length"))
        if expert_ffn is not None else None,
        feed_forward_length=largest(ffn) if ffn is not None else None,
        context_length=_scalar(context, source, key("context_length")) if context is not None else None,
        vocab_size=int(vocab) if vocab is not None else None,
        rope_base=rope_base,
        rope_base_swa=ROPE_BASE_SWA.get(arch, rope_base),
        rope_dims=_whole(metadata, key("rope.dimension_count"), head_dim, source),
        rope_scaling=scaling if isinstance(scaling, str) else repr(scaling),
        rope_scaling_factor=factor,
        rms_eps=_real(metadata, key("attention.layer_norm_rms_epsilon"), RMS_EPS_DEFAULT.get(arch, 1e-5), source),
        sources=sources,
    )


def _sliding_layers(metadata: dict, source: str, arch: str, layers: int, kv_per_layer, interval,
                    sources: dict, get):
    """(kv_layers_swa, sliding_window, period, flags) from the header, else the architecture's rule.

    The header decides where it says: `<arch>.attention.sliding_window` (the window; 0 turns
    sliding off) and `<arch>.attention.sliding_window_pattern`, either a per-layer list of
    booleans (true: the layer slides; Gemma 4's files) or a period. Otherwise the period of
    SWA_RULES (llama.cpp's rule for the architecture); an architecture without one has no
    sliding layers (llama.cpp ignores a qwen2 or phi3 file's sliding_window, for example).
    """
    src = os.path.basename(source)
    rule_period, rule_window = SWA_RULES.get(arch, (None, None))
    window = get("attention.sliding_window", "sliding_window", default=None)
    if window is None:
        window = rule_window
        if window is not None:
            sources["sliding_window"] = (f"llama.cpp's default for {arch}: {window} tokens "
                                         f"(no {arch}.attention.sliding_window)")
    else:
        window = _scalar(window, source, f"{arch}.attention.sliding_window")
    pattern = get("attention.sliding_window_pattern", "sliding_window_pattern", default=None)
    flags, period = None, None
    if isinstance(pattern, list):
        flags = pattern
    elif pattern is not None:
        period = _scalar(pattern, source, f"{arch}.attention.sliding_window_pattern")
    elif rule_period is not None:
        period = rule_period
        sources["sliding_window_pattern"] = (f"no {arch}.attention.sliding_window_pattern, so llama.cpp's rule for "
                                             f"{arch}: set_swa_pattern({period}) in its hparams loader "
                                             f"(src/llama-model.cpp), one layer in {period} global")
    if not window or window < 0 or (flags is None and period is None):
        if window and flags is None and period is None:
            sources["kv_layers_swa"] = f"{src}: {arch}.attention.sliding_window but no rule for {arch}, so none"
        return 0, (window if window and window > 0 else None), None, None
    try:
        counts = layer_kind_counts(layers, kv_per_layer=kv_per_layer, full_interval=interval,
                                   swa_flags=flags, swa_period=period)
    except SpecError as err:
        raise GGUFError(f"{source}: {arch}.attention.sliding_window_pattern: {err}") from None
    how = ("the per-layer flags of " + f"{arch}.attention.sliding_window_pattern" if flags is not None
           else f"every layer but one in {period} (the last of each group)" if period else "every layer")
    sources["kv_layers_swa"] = f"{src}: layers with a KV cache that slide: {how}"
    return counts["sliding"], window, period, flags
