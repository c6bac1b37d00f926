"""Names that chapter 5 (content/05-prefill-decode.md) needs beyond `article_numbers()`.

`add(n)` runs at the very end of `article_numbers()` and only adds names, each computed from
names already in `n` or from tokenwalk's own functions on the presets (no data typed here):

- "Prefill in practice": the balance point of a whole prompt chunk of the MoE on the laptop
  (issue #12, error 1), and the 7B's answer time at the section's own weights-only ceiling
  beside the time with the growing KV cache (error 2).
- "The KV cache in bytes": the 7B's hidden thinking with the cache it grows (error 3).
- The chapter's opening and "Decode in practice": the spread of the published runs' bandwidth
  shares (what real systems reach of a spec peak) and the share of its spec bandwidth the
  laptop's reads reach, as the timing model solves it from the laptop's two measured decode
  speeds.
"""

from __future__ import annotations


GB = 1e9


def add(n: dict) -> None:
    """Add chapter 5's names to the namespace `n` (in place)."""
    from tokenwalk.physics.kv_cache import kv_cache_bytes
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.specs.model import load_model
    from tokenwalk.physics.roofline import decode_time_s, flops_per_token, weights_bytes_read
    from tokenwalk.timing.model import coefficients

    qwen, laptop = load_model("qwen3.6-35b-a3b"), load_machine("laptop-860m")
    d7, h100 = load_model("dense-7b-fp16"), load_machine("h100-sxm")

    # Prefill in practice (error 1): one chunk of the MoE reads nearly every expert, yet each
    # token does only 2 x active parameters of arithmetic, so the chunk balances where
    # tokens x flops per token = machine ops per byte x bytes the chunk reads.
    chunk_bytes = weights_bytes_read(qwen, n["request_chunk_tokens"])
    n["laptop_chunk_weights_gb"] = chunk_bytes / GB
    n["laptop_chunk_balance_tokens"] = n["laptop_ops_per_byte"] * chunk_bytes / flops_per_token(qwen)
    n["laptop_chunk_past_balance"] = n["request_chunk_tokens"] / n["laptop_chunk_balance_tokens"]

    # Prefill in practice (error 2): the answer at this section's ceiling (weights only) ...
    n["d7_example_answer_weights_s"] = n["d7_example_output_tokens"] / n["d7_ceiling_tok_s"]
    # ... against n["d7_example_answer_s"], which also reads the cache every step.

    # The KV cache in bytes (error 3): thinking tokens pile up cache like any other.
    n["thinking_with_kv_s"] = decode_time_s(d7, h100, n["thinking_tokens"])
    n["thinking_kv_gb"] = kv_cache_bytes(d7, n["thinking_tokens"]) / GB

    # Decode in practice: the laptop's bandwidth efficiency, solved from its two decode speeds.
    n["laptop_bandwidth_efficiency"] = coefficients(laptop).bandwidth_efficiency
