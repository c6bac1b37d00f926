"""A machine timed on its own measurements: its timing coefficients solved when they are used.

The published fit (`data/timing_fit.json`) gives each backend three coefficients. A
machine whose spec carries a `calibration` (the article's laptop, in its preset; the
machine that built the page, in machines/_this-machine.json) gets its own, solved here in
plain Python from the measurements the calibration names:

- decode: two measured speeds of two models whose kernels read different amounts give two
  equations, step_s = bytes_s / bandwidth_efficiency + launches x launch_cost_s (launches
  counted from each model's architecture, `tokenwalk.physics.launches`), in two unknowns
  (1 / bandwidth_efficiency and launch_cost_s), solved exactly; one measured speed cannot
  separate the two, so its entry fixes `launch_cost_s` (a value with its source) and the one
  equation gives the bandwidth efficiency;
- prefill: the compute efficiency at which the measured prompt, read in chunks, takes its
  measured time (the model's prefill time falls as the efficiency rises: bisection).

The solve runs when a calibrated machine is timed and is kept by the data store that holds
the measurements (`DataStore.remember`), under the values it uses (the measured speeds, the
context, the machine's bandwidth and FP16 figure), so editing a measurement changes the walk
at the next build without a refit. Measurements that cannot
both hold within the fit's bounds (a negative cost per launch, more than the spec
bandwidth) give the closest coefficients within those bounds, with a note saying so. The cost
per launch is what transfers to another model on the same machine: a small dense model pays
for its own few hundred launches, not for the thousands of the models it was solved on.

Units: seconds, tokens, tok/s.
"""

from __future__ import annotations

import math

from tokenwalk import data_refs
from tokenwalk.errors import SpecError
from tokenwalk.physics import roofline
from tokenwalk.physics.launches import decode_launches
from tokenwalk.timing import prefill_shape


def is_calibrated(machine) -> bool:
    """Whether `machine` is timed on its own measurements: its spec carries a calibration."""
    return bool(machine.calibration)


def calibrated_machines(store=None) -> list[str]:
    """Names of the machine presets (and `this-machine`, once measured) whose spec carries a
    calibration: the machines the published fit does not time."""
    from tokenwalk.specs.machine import MEASURED_MACHINE, has_measured_machine, list_machine_presets, load_machine

    names = list_machine_presets(store) + ([MEASURED_MACHINE] if has_measured_machine(store) else [])
    return sorted(name for name in names if is_calibrated(load_machine(name, store)))


def calibration_inputs(machine, store=None) -> tuple | None:
    """The values the solve for `machine` uses, as a hashable key, or None if its spec
    carries no calibration: (name, bandwidth_gbs, fp16_tflops, ((model, tok/s), ...) one or
    two decode points, decode context tokens, (model, tok/s, prompt tokens, chunk tokens),
    fixed launch_cost_s or None, the prefill model's rows_half on it (`prefill_shape.shape_for`)), read
    from the data `store` (the default one if None)."""
    entry = machine.calibration
    if not entry:
        return None
    store = data_refs.store_or_default(store)
    name = machine.name
    where = f"{machine.spec_file or name}: calibration"
    try:
        decode = entry["decode"]
        if not isinstance(decode, list) or len(decode) not in (1, 2):
            count = len(decode) if isinstance(decode, list) else "not a list"
            raise SpecError(f"{where}.decode: needs one or two measured speeds, has {count}")
        points = tuple(_measured(ref, f"{where}.decode[{i}]", store) for i, ref in enumerate(decode))
        fixed_overhead = None
        if len(points) == 1:
            fixed_overhead = _seconds(entry["launch_cost_s"], f"{where}.launch_cost_s", store)
        elif "launch_cost_s" in entry:
            raise SpecError(f"{where}.launch_cost_s: two decode speeds solve the cost per launch; "
                            "fix it only with one")
        context = _count(entry["decode_context_tokens"], f"{where}.decode_context_tokens", store)
        prefill_model, prefill_tok_s = _measured(entry["prefill"], f"{where}.prefill", store)
        prompt = _count(entry["prefill_prompt_tokens"], f"{where}.prefill_prompt_tokens", store)
        chunk = _count(entry["prefill_chunk_tokens"], f"{where}.prefill_chunk_tokens", store)
    except KeyError as error:
        raise SpecError(f"{where}: field {error.args[0]!r} is missing") from None
    if chunk <= 0 or prompt <= 0:
        raise SpecError(f"{where}: prefill prompt and chunk must be positive token counts")
    if not machine.bandwidth_gbs:
        raise SpecError(f"machine {name!r}: field 'bandwidth_gbs' is missing; its timing calibration needs it")
    fp16 = machine.fp16_tflops
    from tokenwalk.specs.model import load_model

    rows_half = prefill_shape.shape_for(load_model(prefill_model, store), machine, store)[1]
    return (where, float(machine.bandwidth_gbs), float(fp16) if fp16 else None, points, context,
            (prefill_model, prefill_tok_s, prompt, chunk), fixed_overhead, rows_half)


def solve(machine, bounds: dict, store=None) -> tuple[float, float, float, str] | None:
    """(bandwidth_efficiency, launch_cost_s, compute_efficiency, note) of `machine` solved
    from its measurements in the data `store` (unrounded), or None if it has no calibration.
    `bounds`: the fit's {coefficient: (low, high)}; note is "" when the measurements are met
    exactly. The store keeps the solve under its inputs."""
    store = data_refs.store_or_default(store)
    given = (machine.calibration or {}).get("solved")
    if given is not None:
        return _given(given, bounds, f"{machine.spec_file or machine.name}: calibration.solved")
    key = calibration_inputs(machine, store)
    if key is None:
        return None
    bounds_items = tuple(sorted(bounds.items()))
    return store.remember(("calibration", key, bounds_items), lambda: _solve(key, bounds_items, store))


def _given(entry, bounds: dict, where: str) -> tuple[float, float, float, str]:
    """A calibration already solved elsewhere (a reader's own runs, `own_runs`): its three
    coefficients, each a number within the fit's bounds, and its note."""
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: expected an object with the three coefficients")
    values = []
    for name in ("bandwidth_efficiency", "launch_cost_s", "compute_efficiency"):
        value = entry.get(name)
        low, high = bounds[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise SpecError(f"{where}.{name}: {value!r} is not a number from {low:g} to {high:g}")
        values.append(float(value))
    return (*values, str(entry.get("note", "")))


# ------------------------------------------------------------------------------------------

def _measured(ref: dict, where: str, store) -> tuple[str, float]:
    """(model name, value) of a {"from": file, "key": name} reference to a measurement."""
    if not isinstance(ref, dict) or "from" not in ref or "key" not in ref:
        raise SpecError(f"{where}: expected a reference {{\"from\": file, \"key\": name}} to a measurement")
    file, key = ref["from"], ref["key"]
    try:
        entry = store.read_json(file)["values"][key]
        value, model = float(entry["value"]), entry.get("model") or ref.get("model")
    except (KeyError, TypeError, ValueError):
        raise SpecError(f"tokenwalk/data/{file}: values.{key}.value: missing or not a number (referenced from {where})") from None
    if not model:
        raise SpecError(f"tokenwalk/data/{file}: values.{key}.model: missing (referenced from {where}; the timing needs the model)")
    if not value > 0:
        raise SpecError(f"tokenwalk/data/{file}: values.{key}.value: {value} is not a positive speed (referenced from {where})")
    return str(model), value


def _seconds(ref, where: str, store) -> float:
    value = store.resolve(ref, where)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{where}: {value!r} is not a number of seconds") from None
    if not value >= 0:
        raise SpecError(f"{where}: {value} is negative; a cost per launch is not")
    return value


def _count(ref, where: str, store) -> int:
    value = store.resolve(ref, where)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SpecError(f"{where}: {value!r} is not a token count") from None


def _solve(key: tuple, bounds_items: tuple, store) -> tuple[float, float, float, str]:
    from tokenwalk.specs.model import load_model

    name, bandwidth_gbs, fp16_tflops, points, context, (prefill_model, prefill_tok_s, prompt, chunk), fixed, rows = key
    decode = [(model_name, load_model(model_name, store), tok_s, context) for model_name, tok_s in points]
    prefill = (prefill_model, load_model(prefill_model, store), prefill_tok_s, prompt, chunk)
    return solve_points(name, bandwidth_gbs, fp16_tflops, decode, prefill, fixed, dict(bounds_items), store,
                        shape_rows_half=rows)


def solve_points(name: str, bandwidth_gbs: float, fp16_tflops: float | None, decode: list, prefill: tuple | None,
                 fixed_launch_cost_s: float | None, bounds: dict, store=None,
                 compute_efficiency: float | None = None, shape_rows_half: float = 0.0) -> tuple[float, float, float, str]:
    """(bandwidth_efficiency, launch_cost_s, compute_efficiency, note) of a machine with
    `bandwidth_gbs` (GB/s) and `fp16_tflops` (TFLOP/s, None if unknown) from measured speeds.

    decode: one or two (label, model, tok/s, context tokens) points; with one, the cost per
    launch is `fixed_launch_cost_s` (seconds). prefill: (label, model, tok/s, prompt tokens,
    chunk tokens), or None, when `compute_efficiency` is taken as given (a fitted row's) and
    said so in the note. `bounds`: the fit's {coefficient: (low, high)}. `shape_rows_half`:
    the machine's rows_half (`prefill_shape.pair_for`), with which a mixture of experts'
    prompt is charged for its small products, so the compute efficiency solved is that of
    full-width products. The laptop's preset and a reader's own llama-bench runs
    (`tokenwalk.timing.own_runs`) are both solved here."""
    store = data_refs.store_or_default(store)
    machine = roofline.Peaks(bandwidth_gbs, fp16_tflops or float("inf"))
    equations = []  # (bytes at spec bandwidth s, launches, measured s) per decode point
    decode_compute_s = []  # the decode steps' arithmetic at the FP16 figure, checked below
    points = []
    for label, model, tok_s, context in decode:
        step = roofline.decode_step(model, machine, context, 1)
        equations.append((step.memory_s, decode_launches(model, store).per_step, 1.0 / tok_s))
        decode_compute_s.append(step.compute_s)
        points.append((label, tok_s))
    if len(equations) == 2:
        inverse_e, overhead, note = _solve_decode(equations, bounds, name, points)
    elif len(equations) == 1 and fixed_launch_cost_s is not None:
        inverse_e, overhead, note = _solve_one_decode(equations[0], fixed_launch_cost_s, bounds, points[0])
    else:
        raise SpecError(f"{name}: one decode speed with a fixed cost per launch, or two, are needed")
    e_bw = 1.0 / inverse_e

    if prefill is None or not fp16_tflops:
        given = compute_efficiency if compute_efficiency is not None else bounds["compute_efficiency"][1]
        why = "no FP16 figure: compute efficiency not solved" if not fp16_tflops else \
            f"no prefill speed: compute efficiency {given:g} as given"
        return e_bw, overhead, given, note + ("; " if note else "") + why
    prefill_model, model, prefill_tok_s, prompt, chunk = prefill
    chunks = []
    # the efficiency of full-width products: a mixture of experts' small ones are charged more
    for before, n in roofline.prompt_chunks(prompt, chunk):
        step = prefill_shape.shaped_prompt_step(model, machine, n, before, rows_half=shape_rows_half)
        chunks.append((step.memory_s, step.compute_s))
    fixed_s = len(chunks) * decode_launches(model, store).per_step * overhead
    target_s = prompt / prefill_tok_s

    def total_s(e_c: float) -> float:  # falls as e_c rises
        return sum(max(m / e_bw, c / e_c) for m, c in chunks) + fixed_s

    low, high = bounds["compute_efficiency"]
    if total_s(high) > target_s:
        e_c, why = high, f"prefill at {prefill_tok_s:g} tok/s is faster than {high:.0%} of the FP16 figure allows"
    elif total_s(low) < target_s:
        e_c, why = low, f"prefill at {prefill_tok_s:g} tok/s is slower than {low:.0%} of the FP16 figure gives"
    else:
        while high - low > 1e-15:
            mid = 0.5 * (low + high)
            if total_s(mid) > target_s:
                low = mid
            else:
                high = mid
        e_c, why = 0.5 * (low + high), ""
    if why:
        note = note + ("; " if note else "") + why + f": compute efficiency held at {e_c:g}"
    # The decode solve took each step as bound by its reads; a machine whose FP16 figure is
    # low (this-machine's is the achieved prefill rate) could have its arithmetic bind instead.
    for (model_name, tok_s), (memory_s, _launches, _t), compute_s in zip(points, equations, decode_compute_s, strict=False):
        if compute_s / e_c > memory_s / e_bw:
            note = note + ("; " if note else "") + (
                f"decode of {model_name} is bound by its arithmetic at the solved compute efficiency, "
                f"so it runs below the measured {tok_s:g} tok/s")
    return e_bw, overhead, e_c, note


def _solve_decode(equations: list, bounds: dict, name: str, points: tuple) -> tuple[float, float, str]:
    """(1 / bandwidth_efficiency, launch_cost_s, note): exact when within the bounds,
    else the least-squares (log of predicted / measured time) point on the bounds' edge."""
    (m1, l1, t1), (m2, l2, t2) = equations
    det = m1 * l2 - m2 * l1
    if abs(det) <= 1e-12 * (abs(m1 * l2) + abs(m2 * l1)):
        raise SpecError(f"{name}.decode: the two models read the same "
                        "bytes per launch, so their speeds cannot separate bandwidth from the cost per launch")
    inverse_e = (t1 * l2 - t2 * l1) / det
    overhead = (m1 * t2 - m2 * t1) / det
    e_lo, e_hi = bounds["bandwidth_efficiency"]
    o_lo, o_hi = bounds["launch_cost_s"]
    x_lo, x_hi = 1.0 / e_hi, 1.0 / e_lo
    if x_lo <= inverse_e <= x_hi and o_lo <= overhead <= o_hi:
        return inverse_e, overhead, ""

    def loss(x: float, o: float) -> float:
        return sum(math.log((m * x + launches * o) / t) ** 2 for m, launches, t in equations)

    def at_x(x: float):  # the loss along o with x held (each closure keeps its own x)
        return lambda o: loss(x, o)

    def at_o(o: float):
        return lambda x: loss(x, o)

    candidates = []
    for fixed_x in (x_lo, x_hi):
        o = _minimise(at_x(fixed_x), o_lo, o_hi)
        candidates.append((loss(fixed_x, o), fixed_x, o))
    for fixed_o in (o_lo, o_hi):
        x = _minimise(at_o(fixed_o), x_lo, x_hi)
        candidates.append((loss(x, fixed_o), x, fixed_o))
    _, x, o = min(candidates)
    misses = ", ".join(f"{model} {tok_s:g} -> {1.0 / (m * x + launches * o):.3g} tok/s"
                       for (model, tok_s), (m, launches, _t) in zip(points, equations, strict=False))
    note = (f"the two decode speeds give bandwidth efficiency {1.0 / inverse_e:.3g} and cost per launch "
            f"{overhead * 1e6:.1f} us, outside the fit's bounds; closest within them: {misses}")
    return x, o, note


def _solve_one_decode(equation: tuple, overhead: float, bounds: dict, point: tuple) -> tuple[float, float, str]:
    """(1 / bandwidth_efficiency, launch_cost_s, note) from one decode point with the
    cost per launch fixed: what is left of the measured step after launches x cost is the
    bytes' time at the spec bandwidth over the efficiency; held within the bounds, with a
    note when that misses the measurement."""
    memory_s, launches, measured_s = equation
    lo, hi = bounds["bandwidth_efficiency"]
    reading_s = measured_s - launches * overhead
    e = memory_s / reading_s if reading_s > 0 else math.inf
    if lo <= e <= hi:
        return 1.0 / e, overhead, ""
    held = min(max(e, lo), hi)
    model, tok_s = point
    return 1.0 / held, overhead, (
        f"decode at {tok_s:g} tok/s ({model}) needs bandwidth efficiency {e:.3g} with {overhead * 1e6:.1f} us "
        f"a launch, outside the fit's bounds: held at {held:g} ({1.0 / (memory_s / held + launches * overhead):.3g} tok/s)")


def _minimise(f, low: float, high: float, steps: int = 200) -> float:
    """Argmin of f on [low, high]: a scan, then golden-section search around the best point."""
    grid = [low + (high - low) * i / steps for i in range(steps + 1)]
    best = min(range(len(grid)), key=lambda i: f(grid[i]))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, steps)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(100):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(c) < f(d):
            b = d
        else:
            a = c
    return 0.5 * (a + b)
