"""Prefill by the shape of its matrix products: a mixture of experts' small products.

A prompt chunk of c tokens meets every dense weight matrix as one product of c rows. A
mixture of experts routes each token to `expert_used_count` of its `expert_count` experts,
so each routed expert's product has only m = c x used / count rows (Qwen3.6 35B-A3B in
chunks of 512: 16 rows; over the experts actually woken, so never below one row). A
product loads and unpacks each of its weights once and then multiplies it by its m rows, so
its time goes as m + rows_half, where rows_half is the loading's cost counted in rows of
arithmetic. Relative to the chunk's full-width products,
whose efficiency the timing model's `compute_efficiency` is, a routed expert's operation
costs

    small_product_factor = ((m + rows_half) / m) / ((c + rows_half) / c)

times as much. A dense model has no routed experts and keeps its efficiency; a mixture of
experts' prompt step is charged its experts' operations at that factor
(`shaped_prompt_step`), so a machine calibrated on a mixture of experts (the laptop) times a
dense model at the efficiency of full-width products, and the reverse.

rows_half is solved per backend from published pairs (`data/prefill_shape.json`): a dense
and a mixture-of-experts model prefilling the same prompt on one machine and build, whose
ratio of speeds fixes it (`pair_for` says which pair a machine uses). Units: tokens (rows),
operations, seconds.
"""

from __future__ import annotations

import math
from dataclasses import replace

from tokenwalk import data_refs
from tokenwalk.errors import SpecError
from tokenwalk.physics import moe, roofline

SHAPE_FILE = "prefill_shape.json"


def expert_rows(model, chunk_tokens: int) -> float:
    """Rows of one routed expert's product in a chunk of `chunk_tokens` tokens: the chunk's
    chunk x experts used choices over the distinct experts they wake
    (`moe.expected_distinct_experts`), so chunk x used / experts once every expert is awake
    (Qwen3.6 35B-A3B at 512: 16) and never below one row; 0 for a dense model."""
    count, used = getattr(model, "expert_count", 0) or 0, getattr(model, "expert_used_count", 0) or 0
    if count <= 1 or used <= 0 or chunk_tokens <= 0:
        return 0.0
    return chunk_tokens * used / moe.expected_distinct_experts(chunk_tokens, count, used)


def routed_expert_flops(model, tokens: int) -> float:
    """Operations of the routed experts' products for `tokens` tokens: 2 x the routed
    experts' weights one token meets (their bytes, `moe.expert_bytes_per_token`, at the
    model's bits per weight), 0 for a dense model."""
    if expert_rows(model, 1) == 0.0:
        return 0.0
    return 2.0 * tokens * moe.expert_bytes_per_token(model) * 8.0 / model.bits_per_weight


def small_product_factor(rows: float, chunk_tokens: int, rows_half: float) -> float:
    """How much more an operation of a product of `rows` rows costs than one of the chunk's
    full-width products of `chunk_tokens` rows: ((rows + h) / rows) / ((chunk + h) / chunk),
    1 for rows >= chunk."""
    if rows <= 0 or chunk_tokens <= 0:
        raise ValueError(f"rows and chunk must be positive, got {rows} and {chunk_tokens}")
    if rows >= chunk_tokens:
        return 1.0
    return ((rows + rows_half) / rows) / ((chunk_tokens + rows_half) / chunk_tokens)


def compute_scale(model, chunk_tokens: int, flops: float, rows_half: float) -> float:
    """The factor on a prompt step's arithmetic time for the shape of its products: its
    `flops` with the routed experts' part charged at `small_product_factor`, over `flops`
    (1 for a dense model or an empty step)."""
    rows = expert_rows(model, chunk_tokens)
    if rows == 0.0 or flops <= 0:
        return 1.0
    experts = min(routed_expert_flops(model, chunk_tokens), flops)
    return (flops - experts + experts * small_product_factor(rows, chunk_tokens, rows_half)) / flops


def shaped_prompt_step(model, peaks, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16",
                       rows_half: float = 0.0) -> roofline.StepTime:
    """`roofline.prompt_step` with its compute_s charged for the shape of its products
    (`compute_scale`): the prompt step the timing model times and calibrates on. Its flops
    stay the operations done."""
    step = roofline.prompt_step(model, peaks, chunk_tokens, context_before, kv_type)
    scale = compute_scale(model, chunk_tokens, step.flops, rows_half)
    return step if scale == 1.0 else replace(step, compute_s=step.compute_s * scale)


ALL_PAIRS = "the pairs' mean"  # what a machine without a pair of its own is timed with


def rows_half_by_pair(store: data_refs.DataStore | None = None) -> dict[str, float]:
    """{pair key ("Vulkan/AMD", "Metal"): rows_half solved from that pair (`solve_rows_half`)}
    of `data/prefill_shape.json`, once per data store."""
    store = data_refs.store_or_default(store)

    def solve_all() -> dict[str, float]:
        entry = store.read_json(SHAPE_FILE)
        pairs = entry.get("pairs")
        if not isinstance(pairs, dict) or not pairs:
            raise SpecError(f"tokenwalk/data/{SHAPE_FILE}: field 'pairs' is missing or empty")
        bounds = _bounds(entry)
        return {key: solve_rows_half(pair, bounds, f"tokenwalk/data/{SHAPE_FILE}: pairs.{key}", store)
                for key, pair in pairs.items()}

    return store.remember(("prefill shape", SHAPE_FILE), solve_all)


def pair_for(machine, store: data_refs.DataStore | None = None) -> tuple[str, float]:
    """(which pair, rows_half) `machine` is timed with: the pair its calibration names
    (`calibration.prefill_shape.pair`), else the pair of its backend and maker ("Vulkan/AMD"),
    else of its backend ("Metal"), case-insensitive, else ALL_PAIRS: the geometric mean of
    the pairs' rows_half (no pair was measured on its backend)."""
    by_pair = rows_half_by_pair(store)
    named = ((getattr(machine, "calibration", None) or {}).get("prefill_shape") or {}).get("pair")
    if named is not None:
        if named not in by_pair:
            where = f"{getattr(machine, 'spec_file', '') or machine.name}: calibration.prefill_shape.pair"
            raise SpecError(f"{where}: {named!r} is not a pair of tokenwalk/data/{SHAPE_FILE} "
                            f"({', '.join(sorted(by_pair))})")
        return named, by_pair[named]
    by_lower = {key.lower(): key for key in by_pair}
    backend, vendor = str(getattr(machine, "backend", None) or ""), getattr(machine, "vendor", None)
    for key in ([f"{backend}/{vendor}"] if vendor else []) + [backend]:
        if key.lower() in by_lower:
            return by_lower[key.lower()], by_pair[by_lower[key.lower()]]
    values = list(by_pair.values())
    return ALL_PAIRS, math.exp(sum(math.log(max(v, 1e-9)) for v in values) / len(values))


def pair_measurements(key: str, store: data_refs.DataStore | None = None) -> dict:
    """What pair `key` of `data/prefill_shape.json` measured: {machine, prompt_tokens,
    chunk_tokens, dense_tok_s, moe_tok_s, rows_half} (tokens, tok/s, rows)."""
    store = data_refs.store_or_default(store)
    pairs = store.read_json(SHAPE_FILE).get("pairs") or {}
    if key not in pairs:
        raise SpecError(f"tokenwalk/data/{SHAPE_FILE}: pairs: no pair {key!r}")
    prompt, chunk, dense_tok_s, moe_tok_s = pair_values(pairs[key], f"tokenwalk/data/{SHAPE_FILE}: pairs.{key}")
    return {"machine": pairs[key].get("machine", key), "prompt_tokens": prompt, "chunk_tokens": chunk,
            "dense_tok_s": dense_tok_s, "moe_tok_s": moe_tok_s, "rows_half": rows_half_by_pair(store)[key]}


def shape_for(model, machine, store: data_refs.DataStore | None = None) -> tuple[str, float]:
    """(which pair, rows_half) `model`'s prompt steps on `machine` are priced with: the
    machine's pair (`pair_for`) for a mixture of experts; ("", 0.0), and no file read, for a
    dense model, whose products all have the chunk's rows."""
    return pair_for(machine, store) if expert_rows(model, 1) else ("", 0.0)


def _bounds(entry: dict) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in entry["product_rows_bounds"]["value"])
    except (KeyError, TypeError, ValueError):
        raise SpecError(f"tokenwalk/data/{SHAPE_FILE}: field 'product_rows_bounds.value' is missing or not "
                        "two numbers") from None
    return low, high


def pair_model(side: dict, where: str, store=None):
    """The model of one side of a pair: a preset ("preset") or a spec of its own ("spec")."""
    from tokenwalk.specs.model import load_model, model_from_dict

    store = data_refs.store_or_default(store)
    if "preset" in side:
        return load_model(side["preset"], store)
    if isinstance(side.get("spec"), dict):
        return model_from_dict(side["spec"], f"{where}.spec")
    raise SpecError(f"{where}: needs a 'preset' or a 'spec'")


def charged_flops(model, prompt_tokens: int, chunk_tokens: int, rows_half: float) -> float:
    """The operations of a prompt of `prompt_tokens` read in chunks of `chunk_tokens`
    (`roofline.prompt_step`), a mixture of experts' routed ones charged for their shape
    (`compute_scale`): what a compute-bound prompt's time is proportional to."""
    peaks = roofline.Peaks(1.0, 1.0)  # operations only
    total = 0.0
    for before, n in roofline.prompt_chunks(prompt_tokens, chunk_tokens):
        flops = roofline.prompt_step(model, peaks, n, before).flops
        total += flops * compute_scale(model, n, flops, rows_half)
    return total


def pair_values(pair: dict, where: str) -> tuple[int, int, float, float]:
    """(prompt tokens, chunk tokens, dense tok/s, mixture tok/s) of a pair, checked: each
    present and positive, else one line naming `where` and the field."""
    try:
        prompt, chunk = int(pair["prompt_tokens"]["value"]), int(pair["chunk_tokens"]["value"])
        dense_tok_s, moe_tok_s = float(pair["dense"]["prefill_tok_s"]), float(pair["moe"]["prefill_tok_s"])
    except (KeyError, TypeError, ValueError) as error:
        field = error.args[0] if isinstance(error, KeyError) else "a value"
        raise SpecError(f"{where}: field {field!r} is missing or not a number") from None
    if not (prompt > 0 and chunk > 0 and dense_tok_s > 0 and moe_tok_s > 0):
        raise SpecError(f"{where}: token counts and speeds must be positive")
    return prompt, chunk, dense_tok_s, moe_tok_s


def solve_rows_half(pair: dict, bounds: tuple[float, float], where: str, store=None) -> float:
    """rows_half at which a pair's two prompts take times in their measured ratio.

    Both prompts are compute-bound at one efficiency on one machine, so each takes its
    operations (`roofline.prompt_step` over its chunks) x `compute_scale` at the same rate;
    the dense one's scale is 1, and the mixture's charged operations rise with rows_half:
    bisection within `bounds` (rows)."""
    prompt, chunk, dense_tok_s, moe_tok_s = pair_values(pair, where)
    dense, mixture = pair_model(pair["dense"], f"{where}.dense", store), pair_model(pair["moe"], f"{where}.moe", store)
    if expert_rows(mixture, chunk) == 0.0 or expert_rows(dense, chunk) != 0.0:
        raise SpecError(f"{where}: 'moe' must be a mixture of experts and 'dense' a dense model")
    dense_flops = charged_flops(dense, prompt, chunk, 0.0)
    wanted = (dense_tok_s / moe_tok_s) * dense_flops  # the mixture's charged operations

    def charged(h: float) -> float:  # rises with h: small products lose more than full ones
        return charged_flops(mixture, prompt, chunk, h)

    low, high = bounds
    if not charged(low) <= wanted <= charged(high):
        raise SpecError(f"{where}: the speeds' ratio {moe_tok_s / dense_tok_s:.3g} needs rows_half outside "
                        f"{low:g}-{high:g} rows")
    while high - low > 1e-9:
        mid = 0.5 * (low + high)
        low, high = (mid, high) if charged(mid) < wanted else (low, mid)
    return 0.5 * (low + high)
