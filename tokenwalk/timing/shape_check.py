"""How far the prefill shape carries from one backend to another: each pair held out.

`tokenwalk.timing.prefill_shape` solves rows_half for each published pair of
`data/prefill_shape.json` (a dense and a mixture-of-experts model prefilling one prompt on
one machine and build). A machine without a pair of its own (CUDA, ROCm, CPU) is timed with
the pairs' geometric mean, so the question a reader has is: how wrong is a backend's
mixture-of-experts prefill when its rows_half comes from the other pairs? Each pair in turn
is predicted from its own dense speed with the other pairs' rows_half, beside the same
prediction without the shape (rows_half 0, every product at full width) and with its own
(which meets it by construction). Units: tok/s, rows; errors |predicted / measured - 1|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tokenwalk import data_refs
from tokenwalk.timing import prefill_shape


@dataclass(frozen=True)
class ShapeCheckRow:
    """One pair held out: its key, machine, measured mixture-of-experts speed, its own
    rows_half and the others' (geometric mean), and the speeds predicted from its dense run
    with the others' rows_half and with none (tok/s)."""

    pair: str
    machine: str
    moe_measured_tok_s: float
    rows_half: float
    others_rows_half: float
    moe_from_others_tok_s: float
    moe_without_shape_tok_s: float

    @property
    def others_ape(self) -> float:
        return abs(self.moe_from_others_tok_s / self.moe_measured_tok_s - 1.0)

    @property
    def without_shape_ape(self) -> float:
        return abs(self.moe_without_shape_tok_s / self.moe_measured_tok_s - 1.0)


def held_out(store: data_refs.DataStore | None = None) -> list[ShapeCheckRow]:
    """Each pair predicted with the other pairs' rows_half (their geometric mean): [] with
    fewer than two pairs."""
    store = data_refs.store_or_default(store)
    by_pair = prefill_shape.rows_half_by_pair(store)
    entries = store.read_json(prefill_shape.SHAPE_FILE)["pairs"]
    rows = []
    for key, pair in entries.items():
        others = [h for other, h in by_pair.items() if other != key]
        if not others:
            continue
        others_h = math.exp(sum(math.log(max(h, 1e-9)) for h in others) / len(others))
        where = f"tokenwalk/data/{prefill_shape.SHAPE_FILE}: pairs.{key}"
        dense = prefill_shape.pair_model(pair["dense"], f"{where}.dense", store)
        mixture = prefill_shape.pair_model(pair["moe"], f"{where}.moe", store)
        measured = prefill_shape.pair_measurements(key, store)
        prompt, chunk = measured["prompt_tokens"], measured["chunk_tokens"]
        # the dense run's charged operations a second: the machine's rate for both models
        dense_rate = measured["dense_tok_s"] * prefill_shape.charged_flops(dense, prompt, chunk, 0.0)
        rows.append(ShapeCheckRow(
            pair=key, machine=measured["machine"], moe_measured_tok_s=measured["moe_tok_s"], rows_half=by_pair[key],
            others_rows_half=others_h,
            moe_from_others_tok_s=dense_rate / prefill_shape.charged_flops(mixture, prompt, chunk, others_h),
            moe_without_shape_tok_s=dense_rate / prefill_shape.charged_flops(mixture, prompt, chunk, 0.0)))
    return rows
