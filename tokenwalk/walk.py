"""One request's walk from the disk to the last token, stage by stage.

Stages: load (disk to memory, skipped when the model is already loaded), template,
tokenize, prefill in chunks (the KV cache filling), decode one token per step (the cache
growing, every step reading the weights and the whole cache), stop. Each stage has its
seconds, the bytes it moves and what bounds it (disk, cpu, memory or compute), from the
roofline and the timing model (`tokenwalk.timing.stages`). Then the three numbers a user feels:
load, time to first token (prefill) and decode speed, and a check that the weights and
the reserved cache fit in the machine's memory.

The browser's simulator calls `walk_request` on every change of its inputs, so it stays
cheap: a few dozen step evaluations, whatever the request's size.

Units: seconds, bytes (GB = 1e9), tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.kv_cache import KV_TYPES, kv_bytes_per_token, kv_cache_bytes, kv_reservation_bytes
from tokenwalk.physics.memory_budget import memory_budget
from tokenwalk.physics.roofline import decode_step, prefill_step, prompt_chunks, step_time
from tokenwalk.specs.protocols import Machine, Model
from tokenwalk.timing import stages as timing

# Above this many chunks or steps a stage is evaluated at sample points and summed as a
# piecewise-linear function (exact where the step time is linear in the context).
_EXACT_LIMIT = 32
_SAMPLES = 16


@dataclass(frozen=True)
class Request:
    """What is asked of the engine. Tokens; num_ctx None means just enough for the request.

    chunk_tokens: prefill chunk (Ollama: 512). warm: the model is already in memory.
    users: conversations decoded together (each as deep as this one). spec_alpha,
    spec_gamma: speculative decoding's acceptance rate and draft tokens per round.
    """

    prompt_tokens: int
    output_tokens: int
    num_ctx: int | None = None
    kv_type: str = "f16"
    chunk_tokens: int = 512
    warm: bool = False
    users: int = 1
    spec_alpha: float | None = None
    spec_gamma: int | None = None

    @property
    def context_tokens(self) -> int:
        """num_ctx, or prompt + output when not given."""
        return self.num_ctx if self.num_ctx is not None else self.prompt_tokens + self.output_tokens

    def check(self) -> None:
        """Raise TokenwalkError naming the field when a value cannot describe a request."""
        for name in ("prompt_tokens", "output_tokens", "chunk_tokens", "users"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TokenwalkError(f"request: {name} must be an integer, got {value!r}")
        if self.prompt_tokens < 1:
            raise TokenwalkError(f"request: prompt_tokens must be >= 1, got {self.prompt_tokens}")
        if self.output_tokens < 0:
            raise TokenwalkError(f"request: output_tokens must be >= 0, got {self.output_tokens}")
        if self.chunk_tokens < 1:
            raise TokenwalkError(f"request: chunk_tokens must be >= 1, got {self.chunk_tokens}")
        if self.users < 1:
            raise TokenwalkError(f"request: users must be >= 1, got {self.users}")
        if str(self.kv_type).lower() not in KV_TYPES:
            raise TokenwalkError(f"request: kv_type {self.kv_type!r} unknown (known: {', '.join(KV_TYPES)})")
        if self.num_ctx is not None:
            if not isinstance(self.num_ctx, int) or isinstance(self.num_ctx, bool) or self.num_ctx < 1:
                raise TokenwalkError(f"request: num_ctx must be a positive integer, got {self.num_ctx!r}")
            needed = self.prompt_tokens + self.output_tokens
            if self.num_ctx < needed:
                raise TokenwalkError(
                    f"request: num_ctx {self.num_ctx} is smaller than prompt_tokens + output_tokens = {needed} "
                    "(the engine would drop the start of the prompt)")
        if (self.spec_alpha is None) != (self.spec_gamma is None):
            raise TokenwalkError("request: speculative decoding needs both spec_alpha and spec_gamma")
        if self.spec_alpha is not None:
            if not 0 <= self.spec_alpha < 1:
                raise TokenwalkError(f"request: spec_alpha must be in [0, 1), got {self.spec_alpha}")
            if not isinstance(self.spec_gamma, int) or self.spec_gamma < 1:
                raise TokenwalkError(f"request: spec_gamma must be an integer >= 1, got {self.spec_gamma!r}")


@dataclass(frozen=True)
class Stage:
    """One stage of the walk: seconds, bytes moved over its bottleneck, and its bound.

    bound: "disk", "cpu", "memory" (bandwidth) or "compute". detail: stage-specific
    numbers (chunks, steps, bytes per step).
    """

    name: str
    seconds: float
    bytes: float
    bound: str
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "seconds": self.seconds, "bytes": self.bytes, "bound": self.bound, **self.detail}


@dataclass(frozen=True)
class Walk:
    """The request walked on a model and a machine (see `walk_request`)."""

    model: str
    machine: str
    request: Request
    stages: tuple
    weights_bytes: float
    kv_cache_bytes: float
    kv_used_bytes: float
    kv_bytes_per_token: float
    memory: dict
    efficiency: dict
    warnings: tuple
    ranges: dict | None = None

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)

    def _seconds(self, name: str) -> float:
        return math.fsum(s.seconds for s in self.stages if s.name == name)

    @property
    def load_s(self) -> float:
        """Disk to memory; 0 when warm."""
        return self._seconds("load")

    @property
    def prefill_s(self) -> float:
        return self._seconds("prefill")

    @property
    def prefill_tok_s(self) -> float:
        """Prompt tokens per second of prefill (Ollama's prompt eval rate)."""
        return self.request.prompt_tokens / self.prefill_s if self.prefill_s > 0 else 0.0

    @property
    def ttft_s(self) -> float:
        """Time to first token once the model is loaded: template + tokenize + prefill.

        The first token is sampled from the prefill's last logits; a cold load comes on
        top (load_s), reported apart as Ollama does.
        """
        return self._seconds("template") + self._seconds("tokenize") + self.prefill_s

    @property
    def decode_s(self) -> float:
        return self._seconds("decode")

    @property
    def decode_tok_s(self) -> float:
        """Output tokens per second of one user (Ollama's eval rate)."""
        return self.request.output_tokens / self.decode_s if self.decode_s > 0 else 0.0

    @property
    def total_s(self) -> float:
        return math.fsum(s.seconds for s in self.stages)

    def to_dict(self) -> dict:
        """The JSON contract of `tokenwalk walk --json`."""
        r = self.request
        return {
            "model": self.model,
            "machine": self.machine,
            "prompt_tokens": r.prompt_tokens,
            "output_tokens": r.output_tokens,
            "num_ctx": r.context_tokens,
            "kv_type": r.kv_type,
            "chunk_tokens": r.chunk_tokens,
            "warm": r.warm,
            "users": r.users,
            "spec_alpha": r.spec_alpha,
            "spec_gamma": r.spec_gamma,
            "load_s": self.load_s,
            "prefill_s": self.prefill_s,
            "prefill_tok_s": self.prefill_tok_s,
            "ttft_s": self.ttft_s,
            "decode_s": self.decode_s,
            "decode_tok_s": self.decode_tok_s,
            "total_s": self.total_s,
            "kv_cache_bytes": self.kv_cache_bytes,
            "kv_used_bytes": self.kv_used_bytes,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "weights_bytes": self.weights_bytes,
            "memory": dict(self.memory),
            "efficiency": {k: dict(v) for k, v in self.efficiency.items()},
            "ranges": None if self.ranges is None else {k: list(v) for k, v in self.ranges.items()},
            "stages": [s.to_dict() for s in self.stages],
            "warnings": list(self.warnings),
        }


def walk_request(model: Model, machine: Machine, request: Request) -> Walk:
    """Walk `request` on `model` and `machine`: every stage, the three numbers, the memory check.

    Raises TokenwalkError for a request that cannot be walked (a bad field, num_ctx
    smaller than the request). A request that does not fit in memory is walked anyway and
    carries a warning (memory["fits"] is False).
    """
    request.check()
    kv_type = str(request.kv_type).lower()
    prompt, output = request.prompt_tokens, request.output_tokens
    stages = []

    if not request.warm:
        load_s, disk_gbs = _load_time(model, machine)
        stages.append(Stage("load", load_s, float(model.size_bytes), "disk", {"disk_gbs": disk_gbs}))
    stages.append(Stage("template", timing.template_s(), 0.0, "cpu"))
    stages.append(Stage("tokenize", timing.tokenize_s(prompt), 0.0, "cpu", {"tokens": prompt}))
    stages.append(_prefill_stage(model, machine, prompt, request.chunk_tokens, kv_type))
    if output > 0:
        stages.append(_decode_stage(model, machine, request, kv_type))
    stages.append(Stage("stop", 0.0, 0.0, "cpu", {"reason": "end-of-turn token sampled"}))

    per_token = kv_bytes_per_token(model, kv_type)
    budget = memory_budget(model, machine, request.context_tokens, kv_type)
    reserved = kv_reservation_bytes(model, request.context_tokens, kv_type) * request.users
    if request.users > 1:
        budget = type(budget)(budget.total_bytes, budget.system_bytes, budget.weights_bytes, reserved)
    warnings = []
    if not budget.fits:
        warnings.append(
            f"does not fit: system {budget.system_bytes / 1e9:.1f} GB + weights {budget.weights_bytes / 1e9:.1f} GB"
            f" + KV cache {budget.kv_cache_bytes / 1e9:.2f} GB > {budget.total_bytes / 1e9:.0f} GB of memory"
            f" on {machine.name}")
    context_length = model.context_length
    if context_length and request.context_tokens > context_length:
        warnings.append(f"num_ctx {request.context_tokens} is longer than the model's context_length {context_length}")

    walk = Walk(
        model=model.name,
        machine=machine.name,
        request=request,
        stages=tuple(stages),
        weights_bytes=float(model.size_bytes),
        kv_cache_bytes=reserved,
        kv_used_bytes=kv_cache_bytes(model, prompt + output, kv_type) * request.users,
        kv_bytes_per_token=per_token,
        memory=budget.to_dict(),
        efficiency=timing.efficiencies(machine),
        warnings=tuple(warnings),
    )
    return replace(walk, ranges=_ranges(machine, walk))


def _ranges(machine, walk: Walk) -> dict | None:
    """The likely ranges of the three timed numbers on a machine the fit has not measured:
    the middle 80 % of the timing model's leave-one-machine-out error
    (`timing_model.error_band`). None on a machine calibrated on its own measurements,
    whose speeds are the measured ones."""
    from tokenwalk.timing.calibration import is_calibrated
    from tokenwalk.timing.model import error_band

    if is_calibrated(machine):
        return None
    p_low, p_high = error_band("prefill")
    d_low, d_high = error_band("decode")
    out = {"prefill_tok_s": (walk.prefill_tok_s / p_high, walk.prefill_tok_s / p_low),
           "ttft_s": (walk.ttft_s * p_low, walk.ttft_s * p_high)}
    if walk.request.output_tokens:
        out["decode_tok_s"] = (walk.decode_tok_s / d_high, walk.decode_tok_s / d_low)
    return out


_LOAD_TIMES: dict = {}


def _load_time(model, machine) -> tuple:
    """(seconds, disk GB/s) of a cold load, remembered per model and machine numbers: the
    simulator walks on every keystroke and the disk rung comes from a data file."""
    key = (model.name, model.size_bytes, machine.name, machine.bandwidth_gbs, machine.disk_gbs,
           repr((machine.calibration or {}).get("load")))
    if key not in _LOAD_TIMES:
        _LOAD_TIMES[key] = (timing.load_s(model, machine), timing.disk_bandwidth_gbs(machine))
    return _LOAD_TIMES[key]


def _prefill_stage(model, machine, prompt: int, chunk: int, kv_type: str) -> Stage:
    starts, sizes = zip(*prompt_chunks(prompt, chunk), strict=False)
    # Evaluate every chunk when there are few, else a sample (first, last, evenly between).
    if len(sizes) <= _EXACT_LIMIT:
        picked = list(range(len(sizes)))
    else:
        picked = sorted({round(i * (len(sizes) - 1) / _SAMPLES) for i in range(_SAMPLES + 1)})
    chunks, seconds_at, bytes_at, compute_time = [], {}, {}, 0.0
    for i in picked:
        roof = prefill_step(model, machine, sizes[i], starts[i], kv_type)
        seconds = timing.prefill_chunk_s(model, machine, sizes[i], starts[i], kv_type)
        seconds_at[i], bytes_at[i] = seconds, roof.bytes_moved
        if roof.bound == "compute":
            compute_time += seconds
        chunks.append({"tokens": sizes[i], "context_before": starts[i], "seconds": seconds, "bound": roof.bound})
    total_s = _sum_sampled(picked, seconds_at, len(sizes))
    total_bytes = _sum_sampled(picked, bytes_at, len(sizes))
    sampled_s = math.fsum(seconds_at.values())
    bound = "compute" if compute_time >= sampled_s / 2 else "memory"
    detail = {
        "chunk_count": len(sizes),
        "chunk_tokens": chunk,
        "kv_written_bytes": prompt * kv_bytes_per_token(model, kv_type),
        "chunks": chunks,
        "chunks_sampled": len(picked) < len(sizes),
    }
    return Stage("prefill", total_s, total_bytes, bound, detail)


def _decode_stage(model, machine, request: Request, kv_type: str) -> Stage:
    prompt, output, users = request.prompt_tokens, request.output_tokens, request.users
    speculative = request.spec_alpha is not None
    if speculative:
        from tokenwalk.physics.speculative import expected_tokens_per_round

        tokens_per_round = expected_tokens_per_round(request.spec_alpha, request.spec_gamma)
        steps = max(1, round(output / tokens_per_round))
    else:
        tokens_per_round = 1.0
        steps = output
    step_span = output - 1  # contexts run from `prompt` to `prompt + output - 1`

    def one_step(i: int):
        context = prompt + (step_span * i // max(steps - 1, 1) if steps > 1 else 0)
        if not speculative:
            roof = decode_step(model, machine, context, users, kv_type)
            # the bound at the fitted efficiencies, which set the step's time
            bound = timing.decode_step_bound(model, machine, context, users, kv_type)
            return timing.decode_step_s(model, machine, context, users, kv_type), roof, bound
        seconds, roof = _speculative_round(model, machine, context, users, request.spec_gamma, kv_type)
        return seconds, roof, roof.bound

    picked = list(range(steps)) if steps <= _EXACT_LIMIT else sorted(
        {round(i * (steps - 1) / _SAMPLES) for i in range(_SAMPLES + 1)})
    seconds_at, bytes_at, memory_bound = {}, {}, 0
    first = last = None
    for i in picked:
        seconds, roof, bound = one_step(i)
        seconds_at[i], bytes_at[i] = seconds, roof.bytes_moved
        memory_bound += bound == "memory"
        if first is None:
            first = (seconds, roof)
        last = (seconds, roof)
    total_s = _sum_sampled(picked, seconds_at, steps)
    detail = {
        "steps": steps,
        "tokens_per_step": tokens_per_round,
        "first_step_s": first[0],
        "last_step_s": last[0],
        "first_step_bytes": first[1].bytes_moved,
        "last_step_bytes": last[1].bytes_moved,
        "context_start": prompt,
        "context_end": prompt + output,
    }
    bound = "memory" if memory_bound * 2 >= len(picked) else "compute"
    return Stage("decode", total_s, _sum_sampled(picked, bytes_at, steps), bound, detail)


def _speculative_round(model, machine, context: int, users: int, gamma: int, kv_type: str):
    """One speculative round: gamma draft steps and one check of gamma + 1 positions.

    First-order cost: the check is the timing model's decode step scaled by the roofline
    ratio of a step with gamma + 1 tokens per user to a one-token step (for a mixture of
    experts the extra experts the checked tokens wake are read too); the draft is taken
    as one layer's worth of the target's step per draft token (like Qwen3.6's built-in
    multi-token-prediction block).
    """
    checked = gamma + 1
    plain = decode_step(model, machine, context, users, kv_type)
    roof = step_time(model, machine, checked * users, kv_tokens_read=context * users,
                     kv_tokens_written=checked * users, query_key_pairs=users * checked * (context + checked / 2),
                     kv_type=kv_type, kv_streams=users)
    step_s = timing.decode_step_s(model, machine, context, users, kv_type)
    check_s = step_s * roof.step_s / plain.step_s
    draft_s = gamma * step_s / model.layers
    return check_s + draft_s, roof


def _sum_sampled(picked: list, values: dict, count: int) -> float:
    """Sum of a per-index quantity over indices 0..count-1 from the values at `picked`.

    Exact when every index is picked; otherwise the quantity is taken as linear between
    picked indices (trapezoid over the gaps, counting each index once).
    """
    if len(picked) == count:
        return math.fsum(values[i] for i in picked)
    total = values[picked[0]]
    for a, b in zip(picked, picked[1:], strict=False):
        # indices a+1 .. b: (b - a) values, linear from values[a] to values[b]
        n = b - a
        total += n * (values[a] + values[b]) / 2 + (values[b] - values[a]) / 2
    return total
