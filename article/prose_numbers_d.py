"""Numbers for chapters 6 ("Running it on the laptop") and 7 ("Numbers and answers") that the
rest of the namespace does not give: the inputs of the speculative-decoding verdict, the dense
weights that fit beside what the laptop already runs, and the build machine's core count for the
aside on `tokenwalk measure`.

Everything here is computed from names already in `n` or from tokenwalk's own functions on the
presets; no data is typed in. Called once, at the end of `article_numbers()`.
"""

from __future__ import annotations

import re

GB = 1e9


def _speculative(n: dict) -> None:
    """Section "Three ways to wait less", tab "Speculative decoding": what one round reads.

    A round drafts gamma tokens with the small model and checks gamma + 1 positions with the
    large one; it pays when its bytes per produced token fall below one plain step's bytes.
    """
    from tokenwalk.specs.model import load_model
    from tokenwalk.physics.moe import expected_distinct_experts
    from tokenwalk.physics.speculative import model_round_cost

    qwen = load_model("qwen3.6-35b-a3b")
    moe = model_round_cost(qwen)
    dense = model_round_cost(load_model("qwen3.8-27b"))
    # the draft's gamma steps, in GB (a Qwen3 0.6B at the target's bits per weight)
    n["spec_moe_draft_gb"] = moe.draft_bytes / GB
    n["spec_dense_draft_gb"] = dense.draft_bytes / GB
    # the large model's check of gamma + 1 positions: the distinct experts they wake per layer
    # (on average; at most spec_check_max_experts), and the bytes read
    n["spec_moe_check_experts"] = expected_distinct_experts(n["spec_gamma"] + 1, qwen.expert_count,
                                                            qwen.expert_used_count)
    n["spec_moe_verify_gb"] = moe.verify_bytes / GB
    n["spec_dense_verify_gb"] = dense.verify_bytes / GB
    # bytes per produced token with the draft, against the plain step's bytes
    n["spec_moe_bytes_per_token_gb"] = moe.bytes_per_token / GB
    n["spec_dense_bytes_per_token_gb"] = dense.bytes_per_token / GB
    # the MoE's verdict: a loss, 1 - speedup of the time per token (speedup < 1)
    n["spec_moe_loss_share"] = 1 - n["spec_moe_speedup"]


def _dense_fit(n: dict) -> None:
    """Chapter 7, after the envelope: the memory Windows and its applications leave free
    before any model loads, and the decode ceiling of dense weights that fill it."""
    n["laptop_free_before_load_gb"] = n["laptop_memory_gb"] - n["system_apps_gb"]
    n["laptop_free_dense_ceiling_tok_s"] = n["laptop_bandwidth_gbs"] / n["laptop_free_before_load_gb"]


def _engine(n: dict) -> None:
    """Chapter 7, the aside on `tokenwalk measure`: the build machine's compute units as its
    OpenCL device reports them (PoCL's CPU device: one per core it was given); None when the
    device's name does not say."""
    device = n.get("engine_device") if n.get("engine") else None
    if device is None:
        return
    m = re.search(r"(\d+) compute units?", str(device))
    n["engine_compute_units"] = int(m.group(1)) if m else None


def add(n: dict) -> None:
    """Add this module's names to the article's namespace `n` (in place)."""
    _speculative(n)
    _dense_fit(n)
    _engine(n)
