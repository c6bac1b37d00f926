"""The H100 example (a dense 7B in fp16 on one H100 SXM) on the roofline: h100_* (its specs),
d7_* (the model's sizes, its steps and phases), balance_*, tile_*, batch_*, chunk_*, long_*,
kv_*, the memory ladder."""

from __future__ import annotations

import dataclasses
from collections import ChainMap

PREFIXES = ("h100_", "d7_", "d13_", "d70_", "balance_", "tile_", "batch_", "chunk_", "long_", "kv_", "ladder",
            "nvme_", "pcie_", "offload_", "bigger_dense_", "thinking_", "mistral_")
NEEDS: tuple[str, ...] = ()
GB = 1e9
BALANCE_PLOT_TOKENS = 600  # figure 16's axis: past both balance points, where compute clearly leads


def names(src, n) -> dict:
    """The H100 example (dense 7B in fp16) on the roofline: steps, phases, batching, chunks, KV."""
    s, sc = src.scenario.presets, src.scenario.sizes
    from tokenwalk.gguf.ggml_types import bits_per_weight
    from tokenwalk.physics.batching import batch_decode_step, max_users_same_step
    from tokenwalk.physics.chunked_prefill import chunked_prefill, free_ride_tokens, mixed_step, separate_steps
    from tokenwalk.physics.kv_cache import kv_bytes_per_element, kv_bytes_per_token, kv_cache_bytes
    from tokenwalk.physics.roofline import (
        balance_point_tokens,
        compute_time_s,
        decode_ceiling_tok_s,
        decode_time_s,
        flops_per_token,
        layer_step_time,
        machine_ops_per_byte,
        matrix_bytes,
        memory_time_s,
        prefill_time_s,
        shared_memory_total_bytes,
        step_time,
        tile_bytes,
        tile_ops,
        weights_bytes,
    )
    from tokenwalk.specs.machine import memory_ladder

    out: dict = {}
    n = ChainMap(out, n)
    d7, h100, qwen = s["d7"], s["h100"], s["qwen"]
    n["h100_name"], n["d7_name"] = h100.name, d7.name
    n["h100_bandwidth_gbs"] = h100.bandwidth_gbs
    n["h100_bandwidth_tbs"] = h100.bandwidth_gbs / 1000
    n["h100_tflops"] = h100.fp16_tflops
    n["h100_memory_gb"] = h100.memory_gb
    n["h100_sms"] = h100.compute_units
    n["h100_lanes_per_sm"] = h100.lanes_per_cu
    n["h100_shared_kb"] = h100.shared_memory_per_cu_bytes / 1024
    n["h100_l2_mb"] = h100.l2_cache_bytes / 2**20
    n["h100_on_chip_bytes"] = shared_memory_total_bytes(h100)
    n["h100_over_laptop_bandwidth"] = h100.bandwidth_gbs / s["laptop"].bandwidth_gbs
    n["d7_params_b"] = d7.params / 1e9
    n["d7_size_gb"] = d7.size_bytes / GB
    n["d7_layers"] = d7.layers
    n["d7_width"] = d7.embedding_length
    n["d7_heads"] = d7.head_count
    n["d7_head_dim"] = d7.head_dim
    # fp8 and "4 bits" are widths by definition (no block scale counted), as the article says them.
    for label, bits in (("fp32", bits_per_weight("F32")), ("fp16", bits_per_weight("F16")), ("fp8", 8), ("q4", 4)):
        n[f"d7_{label}_gb"] = weights_bytes(d7.params, bits) / GB
    one = step_time(d7, h100, 1)
    n["d7_step_memory_ms"] = one.memory_s * 1e3
    n["d7_compute_per_token_ms"] = compute_time_s(flops_per_token(d7), h100.fp16_tflops) * 1e3
    n["d7_flops_per_token_g"] = flops_per_token(d7) / 1e9
    n["d7_decode_sm_idle_share"] = 1 - one.sm_busy_share
    n["d7_decode_tok_s"] = 1 / one.step_s
    n["balance_tokens_fp16"] = balance_point_tokens(h100, d7.bits_per_weight / 8)
    n["balance_tokens_4bit"] = balance_point_tokens(h100, 0.5)
    n["h100_ops_per_byte"] = machine_ops_per_byte(h100)
    # figure 16's lines: the step time's corners (it is linear on each side of the balance
    # point) from no tokens to BALANCE_PLOT_TOKENS, and the flat memory line in 4-bit weights
    n["balance_plot_tokens"] = BALANCE_PLOT_TOKENS
    n["balance_step_tokens"] = [0, n["balance_tokens_fp16"], BALANCE_PLOT_TOKENS]
    n["balance_step_ms"] = [step_time(d7, h100, 0).step_s * 1e3, step_time(d7, h100, 0).memory_s * 1e3,
                            step_time(d7, h100, BALANCE_PLOT_TOKENS).step_s * 1e3]
    n["balance_memory_4bit_ms"] = memory_time_s(d7.params * 0.5, h100.bandwidth_gbs) * 1e3
    bal = step_time(d7, h100, round(n["balance_tokens_fp16"]))
    n["d7_balance_step_ms"] = bal.step_s * 1e3
    n["d7_balance_compute_ms"] = bal.compute_s * 1e3
    pre_tokens = sc["h100_example_prompt_tokens"]
    pre = step_time(d7, h100, pre_tokens)
    n["d7_prefill_tokens"] = pre_tokens
    n["d7_prefill_step_ms"] = pre.step_s * 1e3
    n["d7_prefill_tok_s"] = pre.tokens_per_s
    n["d7_decode_vs_prefill_cost_per_token"] = pre.tokens_per_s / one.tokens_per_s
    layer = layer_step_time(d7, h100, pre_tokens)  # figure 17's execution level
    n["d7_layer_memory_ms"] = layer.memory_s * 1e3
    n["d7_layer_compute_ms"] = layer.compute_s * 1e3
    # tiles
    rows = sc["tile_rows"]
    bpw = d7.bits_per_weight / 8
    n["tile_rows"] = rows
    n["tile_kb"] = tile_bytes(rows, rows, bpw) / 1024  # KB as shared memory is counted (1,024 bytes)
    n["tile_ops_decode"] = tile_ops(1, rows, rows)
    n["tile_ops_prefill"] = tile_ops(sc["tile_prefill_tokens"], rows, rows)
    n["tile_prefill_tokens"] = sc["tile_prefill_tokens"]
    n["d7_layer_mb"] = layer_step_time(d7, h100, 1).bytes_moved / 1e6
    n["d7_wq_mb"] = matrix_bytes(d7.embedding_length, d7.embedding_length, bpw) / 1e6
    n["d7_head_slice_mb"] = matrix_bytes(d7.embedding_length, d7.head_dim, bpw) / 1e6
    n["h100_on_chip_mb"] = n["h100_on_chip_bytes"] / 1e6
    n["h100_on_chip_share"] = n["h100_on_chip_bytes"] / d7.size_bytes
    # the memory ladder: time to move the 7B over each rung that has a bandwidth
    ladder = []
    for rung in memory_ladder():
        ladder.append({"name": rung.name, "role": rung.role, "count": rung.count, "bandwidth_gbs": rung.bandwidth_gbs,
                       "capacity": rung.capacity_label,
                       "move_s": memory_time_s(d7.size_bytes, rung.bandwidth_gbs) if rung.bandwidth_gbs else None})
    n["ladder"] = ladder
    by_role = {r.role: r for r in memory_ladder()}
    n["nvme_gbs"] = by_role["disk"].bandwidth_gbs
    n["pcie_gbs"] = by_role["host"].bandwidth_gbs
    n["d7_nvme_s"] = memory_time_s(d7.size_bytes, by_role["disk"].bandwidth_gbs)
    n["d7_pcie_ms"] = memory_time_s(d7.size_bytes, by_role["host"].bandwidth_gbs) * 1e3
    n["offload_slowdown"] = n["d7_pcie_ms"] / n["d7_step_memory_ms"]
    # decode ceilings
    n["d7_ceiling_tok_s"] = decode_ceiling_tok_s(d7, h100)
    ceilings = []
    for params in sc["bigger_dense_params"]:  # a dense fp16 model of another size (if it fit)
        bigger = dataclasses.replace(d7, name=f"dense-{params / 1e9:g}b-fp16", params=params,
                                     active_params=params, size_bytes=weights_bytes(params, d7.bits_per_weight))
        ceilings.append(decode_ceiling_tok_s(bigger, h100))
    n["d13_ceiling_tok_s"], n["d70_ceiling_tok_s"] = ceilings
    n["bigger_dense_params_b"] = [p / 1e9 for p in sc["bigger_dense_params"]]
    n["thinking_tokens"] = sc["thinking_tokens"]
    n["thinking_s"] = sc["thinking_tokens"] / n["d7_ceiling_tok_s"]
    # with the cache it grows (issue #12, error 3): the KV-growth figure's curve, not the bare ceiling
    n["thinking_with_kv_s"] = decode_time_s(d7, h100, sc["thinking_tokens"])
    n["thinking_kv_gb"] = kv_cache_bytes(d7, sc["thinking_tokens"]) / GB
    # batching
    users = sc["batch_users"]
    b = batch_decode_step(d7, h100, users)
    n["batch_users"] = users
    n["batch_step_ms"] = b.step_s * 1e3
    n["batch_compute_ms"] = b.compute_s * 1e3
    n["batch_server_tok_s"] = b.server_tok_s
    n["batch_sm_busy_share"] = b.sm_busy_share
    n["batch_user_tok_s"] = b.user_tok_s
    n["batch_max_users"] = max_users_same_step(d7, h100)
    # figure 15: one decode token, the most a step carries before compute outlasts the weights'
    # trip, and the example's prompt, each as one step
    n["d7_three_steps"] = []
    for tokens in (1, n["batch_max_users"], pre_tokens):
        st = step_time(d7, h100, tokens)
        n["d7_three_steps"].append({"tokens": tokens, "memory_s": st.memory_s, "compute_s": st.compute_s,
                                    "step_s": st.step_s, "bound": st.bound, "tok_s": st.tokens_per_s})
    # prefill with its quadratic attention term
    long = sc["h100_long_prompt_tokens"]
    n["long_prompt_tokens"] = long
    n["d7_long_weights_ms"] = step_time(d7, h100, long).step_s * 1e3
    n["d7_long_total_s"] = prefill_time_s(d7, h100, long)
    n["d7_long_attention_share"] = n["d7_long_total_s"] * 1e3 / n["d7_long_weights_ms"] - 1
    n["d7_example_attention_share"] = prefill_time_s(d7, h100, pre_tokens) * 1e3 / n["d7_prefill_step_ms"] - 1
    out_tokens = sc["h100_example_output_tokens"]
    n["d7_example_output_tokens"] = out_tokens
    answer_s = decode_time_s(d7, h100, out_tokens, pre_tokens)
    n["d7_example_answer_s"] = answer_s
    n["d7_example_decode_share"] = answer_s / (answer_s + prefill_time_s(d7, h100, pre_tokens))
    # chunked prefill
    du, pt = sc["chunked_decode_users"], sc["chunked_prompt_tokens"]
    n["chunk_users"] = du
    dec = step_time(d7, h100, du)
    n["chunk_users_step_ms"] = dec.step_s * 1e3
    n["chunk_users_compute_ms"] = dec.compute_s * 1e3
    n["chunk_users_sm_share"] = dec.sm_busy_share
    n["chunk_free_ride_tokens"] = free_ride_tokens(d7, h100, du)
    n["chunk_mixed_tokens"] = pt
    sep = separate_steps(d7, h100, du, pt)
    n["chunk_separate_decode_ms"] = sep.decode.step_s * 1e3
    n["chunk_separate_prefill_ms"] = sep.prefill.step_s * 1e3
    n["chunk_separate_ms"] = sep.total_s * 1e3
    cp = chunked_prefill(d7, h100, long, sc["long_prompt_chunk_tokens"])
    n["long_chunk_tokens"] = sc["long_prompt_chunk_tokens"]
    n["long_chunks"] = len(cp.chunks)
    n["long_chunks_memory_ms"] = cp.memory_s * 1e3
    n["long_chunks_compute_ms"] = cp.compute_s * 1e3
    # KV cache in bytes
    n["kv_bytes_per_token_qwen"] = kv_bytes_per_token(qwen)
    n["kv_bytes_per_token_d7"] = kv_bytes_per_token(d7)
    n["kv_d7_over_qwen"] = n["kv_bytes_per_token_d7"] / n["kv_bytes_per_token_qwen"]
    n["kv_qwen_without_gqa_factor"] = qwen.head_count // qwen.head_count_kv
    n["kv_qwen_without_hybrid_factor"] = qwen.layers // qwen.kv_layers
    growth = []
    for ctx in sc["kv_growth_contexts"]:
        growth.append({"context": ctx, "kv_gb": kv_cache_bytes(d7, ctx) / GB,
                       "tok_s": decode_ceiling_tok_s(d7, h100, ctx)})
    n["kv_growth"] = growth
    end = pre_tokens + out_tokens
    n["kv_example_context"] = end
    n["kv_example_step_gb"] = (d7.bytes_read_per_token + kv_cache_bytes(d7, end)) / GB
    n["kv_example_tok_s"] = decode_ceiling_tok_s(d7, h100, end)
    n["kv_long_gb"] = kv_cache_bytes(d7, long) / GB
    n["kv_long_tok_s"] = decode_ceiling_tok_s(d7, h100, long)
    n["mistral_kv_factor"] = d7.head_count // sc["mistral_kv_heads"]
    n["kv_q8_over_f16"] = kv_bytes_per_element("q8_0") / kv_bytes_per_element("f16")
    # "Prefill in practice" (issue #12, error 2): the answer at the section's own weights-only
    # ceiling, beside d7_example_answer_s, which also reads the growing cache every step
    n["d7_example_answer_weights_s"] = n["d7_example_output_tokens"] / n["d7_ceiling_tok_s"]
    # the step splits the time-lane figures draw beside the prose (14 overlap, 17
    # accounting-execution, 20 chunked-prefill): each side of a step, in milliseconds
    n["d7_decode_step_ms"] = one.step_s * 1e3
    n["d7_decode_compute_ms"] = one.compute_s * 1e3
    n["d7_prefill_memory_ms"] = pre.memory_s * 1e3
    n["d7_prefill_compute_ms"] = pre.compute_s * 1e3
    n["d7_prefill_gb"] = pre.bytes_moved / GB
    n["chunk_users_memory_ms"] = dec.memory_s * 1e3
    for key, tokens in (("ride", n["chunk_free_ride_tokens"]), ("mixed", pt)):
        m = mixed_step(d7, h100, du, tokens)
        n[f"chunk_{key}_ms"] = m.step_s * 1e3
        n[f"chunk_{key}_memory_ms"] = m.memory_s * 1e3
        n[f"chunk_{key}_compute_ms"] = m.compute_s * 1e3
        n[f"chunk_{key}_sm_share"] = m.sm_busy_share
        n[f"chunk_{key}_prompt_compute_ms"] = step_time(d7, h100, tokens).compute_s * 1e3
    for side, step in (("decode", sep.decode), ("prefill", sep.prefill)):
        n[f"chunk_separate_{side}_memory_ms"] = step.memory_s * 1e3
        n[f"chunk_separate_{side}_compute_ms"] = step.compute_s * 1e3
    return out
