"""One request's walk from the disk to the last token, stage by stage.

Stages: load (disk to memory, skipped when the model is already loaded), template,
tokenize, prefill in chunks (the KV cache filling), decode one token per step (the cache
growing, every step reading the weights and the whole cache), stop. Each stage has its
seconds, the bytes it moves and what bounds it (disk, cpu, memory or compute), from the
roofline and the timing model (`tokenwalk.timing.stages`), read off one timed machine resolved
before the first stage (`timing.stages.timed_machine`: the fit's row or the machine's
calibration, its peaks, its disk and load efficiency). Then the three numbers a user feels:
load, time to first token (prefill) and decode speed, and a check that the weights and
the reserved cache fit in the machine's memory.

The browser's simulator calls `walk_request` on every change of its inputs, so it stays
cheap: a few dozen step evaluations, whatever the request's size. A stage of many steps
(10^8 one-token chunks, a million decoded tokens) is summed without a list: the step time is
a piecewise-linear function of the step's index (linear in the context, bent where the
bound changes or a sliding window fills), so it is evaluated at 17 points, each stretch
between them summed as a line, and a stretch that bends bisected until it is straight
(`_sum_steps`); the full chunks of a prompt so, the shorter last chunk on its own.

Units: seconds, bytes (GB = 1e9), tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from tokenwalk.data_refs import DataStore
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics.chunked_prefill import ChunkPlan
from tokenwalk.physics.kv_cache import KV_TYPES, kv_bytes_per_token, kv_cache_bytes, kv_layer_kinds, kv_reservation_bytes
from tokenwalk.physics.memory_budget import memory_budget
from tokenwalk.physics.roofline import pairs_within_window, step_time
from tokenwalk.specs.machine import MachineSpec
from tokenwalk.specs.model import ModelSpec
from tokenwalk.specs.protocols import Machine, Model
from tokenwalk.specs.recalled import walk_notes
from tokenwalk.specs.schema import MAX_CONTEXT_TOKENS, REQUEST_DOMAINS, check_domains
from tokenwalk.timing import prefill_shape
from tokenwalk.timing import stages as timing

# Above this many chunks or steps a stage is evaluated at sample points and summed as a
# piecewise-linear function (`_sum_steps`).
_EXACT_LIMIT = 32
_SAMPLES = 16
# Extra evaluations a stage may spend bisecting the stretches where its step time bends.
_MAX_REFINE = 256


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
        """Raise TokenwalkError naming the field when a value cannot describe a request: each
        value within its domain (`tokenwalk.specs.schema.REQUEST_DOMAINS`), a known KV type,
        a context that holds the prompt and the answer."""
        for name in ("prompt_tokens", "output_tokens", "chunk_tokens", "users"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TokenwalkError(f"request: {name} must be an integer, got {value!r}")
        check_domains({name: getattr(self, name) for name in REQUEST_DOMAINS}, REQUEST_DOMAINS,
                      lambda name: f"request: {name}", TokenwalkError)
        if str(self.kv_type).lower() not in KV_TYPES:
            raise TokenwalkError(f"request: kv_type {self.kv_type!r} unknown (known: {', '.join(KV_TYPES)})")
        needed = self.prompt_tokens + self.output_tokens
        if self.num_ctx is not None:
            if not isinstance(self.num_ctx, int) or isinstance(self.num_ctx, bool):
                raise TokenwalkError(f"request: num_ctx must be a positive integer, got {self.num_ctx!r}")
            if self.num_ctx < needed:
                raise TokenwalkError(
                    f"request: num_ctx {self.num_ctx} is smaller than prompt_tokens + output_tokens = {needed} "
                    "(the engine would drop the start of the prompt)")
        elif needed > MAX_CONTEXT_TOKENS:
            raise TokenwalkError(f"request: prompt_tokens + output_tokens = {needed:,} is more than the "
                                 f"{MAX_CONTEXT_TOKENS:,} tokens of context tokenwalk walks")
        if (self.spec_alpha is None) != (self.spec_gamma is None):
            raise TokenwalkError("request: speculative decoding needs both spec_alpha and spec_gamma")
        if self.spec_alpha is not None:
            if not isinstance(self.spec_gamma, int) or isinstance(self.spec_gamma, bool):
                raise TokenwalkError(f"request: spec_gamma must be an integer, got {self.spec_gamma!r}")


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
    # where the ranges come from: "fitted sizes" (the leave-one-family-out band) or "small
    # models" (the small-model check's, for a model smaller than any the fit saw); None without ranges
    range_basis: str | None = None
    # for the small models' band, the class of device whose runs alone set it ("discrete",
    # "integrated"); None where all the small-model runs did, or without that band
    range_class: str | None = None
    # the recalled values the walk used ("machine: bandwidth 576 GB/s: recalled, no source opened")
    notes: tuple = ()

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
            "range_basis": self.range_basis,
            "range_class": self.range_class,
            "stages": [s.to_dict() for s in self.stages],
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }


def walk_request(model: Model, machine: Machine, request: Request, store: DataStore | None = None) -> Walk:
    """Walk `request` on `model` and `machine`: every stage, the three numbers, the memory check.
    Data files (the fit, calibrations, CPU stage estimates) are read from `store`, the default
    data store if None.

    Raises TokenwalkError for a request that cannot be walked (a bad field, num_ctx
    smaller than the request). A request that does not fit in memory is walked anyway and
    carries a warning (memory["fits"] is False).
    """
    request.check()
    kv_type = str(request.kv_type).lower()
    prompt, output = request.prompt_tokens, request.output_tokens
    # the machine resolved once for this model (fit row or calibration, peaks, disk); every
    # stage reads it
    timed = timing.timed_machine(model, machine, store=store)
    stages = []

    if not request.warm:
        stages.append(Stage("load", timed.load_s(), float(model.size_bytes), "disk", timed.load_rate()))
    stages.append(Stage("template", timing.template_s(store), 0.0, "cpu"))
    stages.append(Stage("tokenize", timing.tokenize_s(prompt, store), 0.0, "cpu", {"tokens": prompt}))
    stages.append(_prefill_stage(timed, prompt, request.chunk_tokens, kv_type))
    if output > 0:
        stages.append(_decode_stage(timed, request, kv_type))
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
        efficiency=timed.efficiencies(),
        warnings=tuple(warnings),
        notes=walk_notes(_recalled_values(model), _recalled_values(machine)),
    )
    if timed.calibrated:
        return walk
    ranges, basis, range_class = _ranges(walk, store, model.params, getattr(machine, "device_class", None))
    return replace(walk, ranges=ranges, range_basis=basis, range_class=range_class)


def _recalled_values(spec) -> dict:
    """{field: value} of the fields a preset or spec file marks `recalled`; empty for the
    published runs' machines and the tests' stand-ins, which carry no such list. A field the
    spec keeps no value of (a counted tensor table) maps to None."""
    if not isinstance(spec, (MachineSpec, ModelSpec)):
        return {}
    values = spec.to_dict()
    return {name: values.get(name) for name in spec.recalled}


def _ranges(walk: Walk, store, model_params: float, device_class: str | None) -> tuple[dict, str, str | None]:
    """The likely ranges of the three timed numbers on a machine the fit has not measured:
    the band of the timing model's leave-one-family-out errors set to hold 80 % of a chip
    family's runs when that family is left out, or for a model smaller than any fitted the
    small-model check's band (`timing_model.error_band`). Not called on a machine calibrated
    on its own measurements, whose speeds are the measured ones. Returns (ranges, basis:
    "fitted sizes" or "small models", and for the small models' band the class of device whose
    runs alone set it, `timing_model.small_model_class`, else None)."""
    from tokenwalk.timing.model import error_band, load_fit, small_model_band, small_model_class

    fit = load_fit(store=store)  # one fit for both bands and the basis they are named by
    p_low, p_high = error_band("prefill", fit, model_params=model_params, device_class=device_class)
    d_low, d_high = error_band("decode", fit, model_params=model_params, device_class=device_class)
    out = {"prefill_tok_s": (walk.prefill_tok_s / p_high, walk.prefill_tok_s / p_low),
           "ttft_s": (walk.ttft_s * p_low, walk.ttft_s * p_high)}
    if walk.request.output_tokens:
        out["decode_tok_s"] = (walk.decode_tok_s / d_high, walk.decode_tok_s / d_low)
    if small_model_band("decode", model_params, fit):
        return out, "small models", small_model_class(device_class, fit)
    return out, "fitted sizes", None


def _prefill_stage(timed, prompt: int, chunk: int, kv_type: str) -> Stage:
    plan = ChunkPlan(prompt, chunk)
    chunks = []

    def one_chunk(i: int) -> tuple:
        before, tokens = plan.chunk(i)
        step = timed.prompt_step(tokens, before, kv_type)
        seconds = timed.prefill_chunk_s(tokens, before, kv_type)
        bound = timed.step_bound(step)  # at the fitted efficiencies, as the time is
        return seconds, step.bytes_moved, seconds if bound == "compute" else 0.0, bound

    # the full chunks as one piecewise-linear sum, the shorter last chunk on its own
    (total_s, total_bytes, compute_s), seen = _sum_steps(one_chunk, plan.full)
    if plan.rest:
        rest = one_chunk(plan.full)
        seen[plan.full] = rest
        total_s, total_bytes, compute_s = total_s + rest[0], total_bytes + rest[1], compute_s + rest[2]
    for i in sorted(seen):
        before, tokens = plan.chunk(i)
        chunks.append({"tokens": tokens, "context_before": before, "seconds": seen[i][0], "bound": seen[i][3]})
    bound = "compute" if compute_s >= total_s / 2 else "memory"
    detail = {
        "chunk_count": plan.count,
        "chunk_tokens": chunk,
        "kv_written_bytes": prompt * kv_bytes_per_token(timed.model, kv_type),
        "chunks": chunks,
        "chunks_sampled": len(chunks) < plan.count,
    }
    if timed.shape_pair:
        # a mixture of experts: each routed expert's product has a slice of the chunk's rows
        detail["expert_rows"] = prefill_shape.expert_rows(timed.model, chunk)
        detail["shape_pair"] = timed.shape_pair
    return Stage("prefill", total_s, total_bytes, bound, detail)


def _decode_stage(timed, request: Request, kv_type: str) -> Stage:
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

    def one_step(i: int) -> tuple:
        if not speculative:
            context = prompt + i  # one token a step
            roof = timed.decode_step(context, users, kv_type)
            # the bound at the fitted efficiencies, which set the step's time
            bound = timed.step_bound(roof)
            seconds = timed.step_s(roof)
        else:
            # rounds spread evenly over the answer's contexts (a line in i, so summed exactly)
            context = prompt + (step_span * i / (steps - 1) if steps > 1 else 0)
            seconds, roof = _speculative_round(timed, context, users, request.spec_gamma, kv_type)
            bound = roof.bound
        return seconds, roof.bytes_moved, 1.0 if bound == "memory" else 0.0, roof.bytes_moved

    # a speculative round's time is a ratio of lines in the context, a smooth curve: summed
    # as lines between the samples, without bisecting
    (total_s, total_bytes, memory_steps), seen = _sum_steps(one_step, steps, refine=not speculative)
    first, last = seen[0], seen[steps - 1]
    detail = {
        "steps": steps,
        "tokens_per_step": tokens_per_round,
        "first_step_s": first[0],
        "last_step_s": last[0],
        "first_step_bytes": first[3],
        "last_step_bytes": last[3],
        "context_start": prompt,
        "context_end": prompt + output,
    }
    bound = "memory" if memory_steps * 2 >= steps else "compute"
    return Stage("decode", total_s, total_bytes, bound, detail)


def _speculative_round(timed, context: int, users: int, gamma: int, kv_type: str):
    """One speculative round: gamma draft steps and one check of gamma + 1 positions.

    First-order cost: the check is the timing model's decode step scaled by the roofline
    ratio of a step with gamma + 1 tokens per user to a one-token step (for a mixture of
    experts the extra experts the checked tokens wake are read too); the draft is taken
    as one layer's worth of the target's step per draft token (like Qwen3.6's built-in
    multi-token-prediction block).
    """
    checked = gamma + 1
    plain = timed.decode_step(context, users, kv_type)
    roof = step_time(timed.model, timed.peaks, checked * users, kv_tokens_read=context * users,
                     kv_tokens_written=checked * users, query_key_pairs=users * checked * (context + checked / 2),
                     kv_type=kv_type, kv_streams=users,
                     sliding_pairs=users * pairs_within_window(checked, context, kv_layer_kinds(timed.model)["window"]))
    step_s = timed.step_s(plain)
    check_s = step_s * roof.step_s / plain.step_s
    draft_s = gamma * step_s / timed.model.layers
    return check_s + draft_s, roof


def _sum_steps(f, count: int, refine: bool = True) -> tuple[tuple, dict]:
    """(sums, seen): the sums over i in 0..count-1 of the numbers f(i) returns (a tuple whose
    last item may be a label, not summed), and {i: f(i)} of the indices evaluated.

    Up to _EXACT_LIMIT steps: every one, summed exactly. Beyond: f is taken as piecewise
    linear in i (a step's time is linear in its context, bent where its bound changes or a
    sliding window fills). It is evaluated at _SAMPLES + 1 evenly spaced indices; a stretch
    between two of them whose slope is that of both neighbours is summed as a line
    (trapezoid, exact for a line); a stretch whose slope differs is bisected, its middle
    compared with the chord, until each piece is straight or one step long, within
    _MAX_REFINE extra evaluations in all (then the rest is summed as lines). The work is
    bounded whatever `count` is: about 17 evaluations on a line, a few dozen per bend.
    refine=False sums every stretch as a line (a smooth curve, where bisecting would only
    spend the budget on its curvature).
    """
    seen: dict = {}

    def at(i: int):
        if i not in seen:
            seen[i] = f(i)
        return seen[i]

    if count <= 0:
        return (0.0, 0.0, 0.0), seen
    if count <= _EXACT_LIMIT:
        rows = [at(i) for i in range(count)]
        return tuple(math.fsum(r[k] for r in rows) for k in range(3)), seen
    picked = sorted({round(i * (count - 1) / _SAMPLES) for i in range(_SAMPLES + 1)})
    values = [at(i)[:3] for i in picked]
    budget = [_MAX_REFINE if refine else 0]

    def line(a, b):  # f over a+1..b as a line from f(a) to f(b)
        n, fa, fb = b - a, at(a)[:3], at(b)[:3]
        return [n * (x + y) / 2 + (y - x) / 2 for x, y in zip(fa, fb, strict=True)]

    def stretch(a, b):  # f over a+1..b, bisected while it bends
        if b - a <= 1:
            return list(at(b)[:3])
        m = (a + b) // 2
        if budget[0] <= 0:
            return line(a, b)
        if m not in seen:
            budget[0] -= 1
        fa, fm, fb = at(a)[:3], at(m)[:3], at(b)[:3]
        share = (m - a) / (b - a)
        if all(_close(x + (y - x) * share, z, x, y) for x, y, z in zip(fa, fb, fm, strict=True)):
            return line(a, b)
        return [x + y for x, y in zip(stretch(a, m), stretch(m, b), strict=True)]

    def slope(k):  # of the k-th stretch between picked indices
        n = picked[k + 1] - picked[k]
        return [(y - x) / n for x, y in zip(values[k], values[k + 1], strict=True)]

    totals = list(values[0])
    for k in range(len(picked) - 1):
        a, b = picked[k], picked[k + 1]
        here = slope(k)
        neighbours = [slope(j) for j in (k - 1, k + 1) if 0 <= j < len(picked) - 1]
        straight = not refine or all(_close(s, t, v, w) for other in neighbours
                       for s, t, v, w in zip(here, other, values[k], values[k + 1], strict=True))
        part = line(a, b) if straight else stretch(a, b)
        totals = [x + y for x, y in zip(totals, part, strict=True)]
    return tuple(totals), seen


def _close(x: float, y: float, *scale: float) -> bool:
    """x and y equal to 1e-9 of the largest magnitude among them and `scale`."""
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y), *(abs(v) for v in scale), 1e-300)
