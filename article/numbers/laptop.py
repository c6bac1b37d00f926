"""The request on the laptop: laptop_* (its specs, bus, efficiencies), env_*, budget_*, spec_*,
the shares, prefix caching and retrieval. The walk itself is the request group's."""

from __future__ import annotations

import statistics
from collections import ChainMap

from tokenwalk import data_refs

PREFIXES = ("laptop_", "env_", "published_", "dense_", "small_model_", "compute_unit_", "bandwidth_ratio_",
            "budget_", "spec_", "prefix_recompute_", "prefix_restore_", "rag_")
NEEDS = ("request", "measured")
GB = 1e9


def names(src, n) -> dict:
    """The request on the laptop: the memory budget, the tricks, the shares."""
    s, sc, c, meas = src.scenario.presets, src.scenario.sizes, src.cited, src.measurements
    out: dict = {}
    n = ChainMap(out, n)
    from article import toys
    from tokenwalk.physics.kv_cache import kv_cache_bytes, kv_reservation_bytes
    from tokenwalk.physics.launches import decode_launches
    from tokenwalk.physics.memory_budget import memory_budget
    from tokenwalk.physics.moe import expected_distinct_experts, max_distinct_experts
    from tokenwalk.physics.roofline import (
        achieved_tflops,
        balance_point_tokens,
        bus_bandwidth_gbs,
        decode_step,
        flops_per_token,
        machine_ops_per_byte,
        memory_time_s,
        peaks,
        weights_bytes,
        weights_bytes_read,
    )
    from tokenwalk.physics.speculative import expected_tokens_per_round
    from tokenwalk.specs.model import load_model
    from tokenwalk.timing.llama_bench import (
        bandwidth_share,
        published_bandwidth_shares,
        published_median_bandwidth_share,
        published_run_count,
    )
    from tokenwalk.timing.model import coefficients, decode_breakdown

    qwen, d27, laptop = s["qwen"], s["dense27"], s["laptop"]
    # the laptop's spec sheet (its preset) and its memory bus (cited)
    n["laptop_memory_gb"] = laptop.memory_gb
    n["laptop_bandwidth_gbs"] = laptop.bandwidth_gbs
    n["laptop_compute_units"] = laptop.compute_units
    n["laptop_lanes_per_cu"] = laptop.lanes_per_cu
    n["laptop_fp16_tflops"] = laptop.fp16_tflops
    n["laptop_transfers_mt_s"] = c["laptop_transfers_mt_s"]
    n["laptop_bus_bits"] = c["laptop_bus_bits"]
    n["laptop_bus_bytes"] = c["laptop_bus_bits"] // 8
    n["laptop_bus_bandwidth_gbs"] = bus_bandwidth_gbs(c["laptop_transfers_mt_s"], c["laptop_bus_bits"])
    # when the laptop was measured, printed where the measurements are introduced
    n["laptop_measured_when"] = data_refs.read_data_json("measurements/laptop.json")["when"]
    prompt, out_tokens = n["request_prompt_tokens"], n["request_output_tokens"]
    # envelope: the simple divisions, with the measured speeds
    n["env_ttft_s"] = prompt / meas["prefill_tok_s_moe"]
    n["env_answer_s"] = out_tokens / meas["decode_tok_s_moe"]
    n["laptop_useful_tflops"] = achieved_tflops(meas["prefill_tok_s_moe"], qwen)
    n["env_prefill_tok_s"] = n["laptop_useful_tflops"] * 1e12 / flops_per_token(qwen)
    # the envelope's prefill row from the spec sheet alone: the FP16 peak over 2 x active
    # parameters, and the share of it the measured speed reaches (not derived from itself)
    n["env_prefill_ceiling_tok_s"] = laptop.fp16_tflops * 1e12 / flops_per_token(qwen)
    n["laptop_prefill_peak_share"] = meas["prefill_tok_s_moe"] / n["env_prefill_ceiling_tok_s"]
    # shares
    n["laptop_share_moe"] = bandwidth_share(meas["decode_tok_s_moe"], qwen.bytes_read_per_token, laptop.bandwidth_gbs)
    n["laptop_share_dense"] = bandwidth_share(meas["decode_tok_s_dense"], d27.bytes_read_per_token,
                                            laptop.bandwidth_gbs)
    n["published_share_median"] = published_median_bandwidth_share()
    # what real systems reach of a spec peak: the middle half of the same published runs
    q1, _median, q3 = statistics.quantiles([run["share"] for run in published_bandwidth_shares()], n=4)
    n["published_share_q1"], n["published_share_q3"] = q1, q3
    n["published_run_count"] = published_run_count()
    runs = published_bandwidth_shares()
    # figure 19's grey points: (spec GB/s, share, backend) of each published run
    n["published_runs"] = [[r["bandwidth_gbs"], r["share"], r["backend"]] for r in runs]
    # ... and its laptop points: each measured decode speed with the bytes its model reads a
    # token, counted as the published runs' are (no embedding table but one row)
    points = []
    for key, label in (("decode_tok_s_dense", "dense"), ("decode_tok_s_moe", "MoE")):
        model = next(m for m in s.values() if m.name == _measured_model(key))
        points.append({"label": label, "model": model.name, "tok_s": meas[key],
                       "bytes_per_token": model.bytes_read_per_token,
                       "share": bandwidth_share(meas[key], model.bytes_read_per_token, laptop.bandwidth_gbs)})
    n["laptop_share_points"] = points
    slowest = min(runs, key=lambda r: r["bandwidth_gbs"])
    fastest = max(runs, key=lambda r: r["bandwidth_gbs"])
    n["published_slowest_machine"] = slowest["machine"].split(" (")[0]
    n["published_slowest_gbs"] = slowest["bandwidth_gbs"]
    n["published_fastest_machine"] = fastest["machine"].split(" (")[0]
    n["published_fastest_gbs"] = fastest["bandwidth_gbs"]
    n["dense_vs_moe_speed_ratio"] = meas["decode_tok_s_moe"] / meas["decode_tok_s_dense"]
    n["laptop_ops_per_byte"] = machine_ops_per_byte(laptop)
    n["laptop_balance_tokens_q4km"] = balance_point_tokens(laptop, qwen.bits_per_weight / 8)
    n["dense_fit_gb"] = sc["dense_fit_laptop_bytes"] / GB
    n["dense_fit_ceiling_tok_s"] = 1 / memory_time_s(sc["dense_fit_laptop_bytes"], laptop.bandwidth_gbs)
    n["small_model_params_b"] = sc["small_moe_params"] / 1e9
    n["small_model_q4km_gb"] = weights_bytes(sc["small_moe_params"], qwen.bits_per_weight) / GB
    n["compute_unit_ratio_5090"] = s["rtx5090"].compute_units / laptop.compute_units
    n["bandwidth_ratio_5090"] = s["rtx5090"].bandwidth_gbs / laptop.bandwidth_gbs
    # memory budget: the context Ollama chose vs the one set by hand
    small = memory_budget(qwen, laptop, n["request_num_ctx"])
    big = memory_budget(qwen, laptop, meas["ollama_default_num_ctx"])
    n["budget_small_kv_mb"] = small.kv_cache_bytes / 1e6
    n["budget_small_free_gb"] = small.free_bytes / GB
    n["budget_big_kv_gb"] = big.kv_cache_bytes / GB
    n["budget_big_free_gb"] = big.free_bytes / GB
    all_layers_bytes = kv_reservation_bytes(qwen, meas["ollama_default_num_ctx"], kv_layer_count=qwen.layers)
    n["budget_big_kv_all_layers_gb"] = all_layers_bytes / GB
    n["budget_conversation_tokens"] = prompt + out_tokens
    # figure 22's two bars, in bytes, and the larger cache if every layer kept one
    n["budget_bars"] = [{"num_ctx": ctx, **budget.to_dict()}
                        for ctx, budget in ((n["request_num_ctx"], small), (meas["ollama_default_num_ctx"], big))]
    n["budget_kv_all_layers_bytes"] = all_layers_bytes
    # speculative decoding
    spec = toys.speculative()
    n["spec_alpha"], n["spec_gamma"] = spec["alpha"], spec["gamma"]
    n["spec_draft_params_b"] = spec["draft_params"] / 1e9
    n["spec_tokens_per_round"] = expected_tokens_per_round(spec["alpha"], spec["gamma"])
    dense_round, moe_round = toys.model_round_cost(d27), toys.model_round_cost(qwen)
    n["spec_dense_speedup"] = dense_round.speedup
    n["spec_moe_speedup"] = moe_round.speedup
    n["spec_moe_verify_over_step"] = moe_round.verify_bytes / moe_round.step_bytes
    n["spec_check_max_experts"] = max_distinct_experts(spec["gamma"] + 1, qwen.expert_count, qwen.expert_used_count)
    # the verdict's inputs (issue #12, error 4): draft bytes, the check's bytes, bytes per token
    n["spec_moe_check_experts"] = expected_distinct_experts(spec["gamma"] + 1, qwen.expert_count, qwen.expert_used_count)
    n["spec_moe_draft_gb"], n["spec_dense_draft_gb"] = moe_round.draft_bytes / GB, dense_round.draft_bytes / GB
    n["spec_moe_verify_gb"], n["spec_dense_verify_gb"] = moe_round.verify_bytes / GB, dense_round.verify_bytes / GB
    n["spec_moe_bytes_per_token_gb"] = moe_round.bytes_per_token / GB
    n["spec_dense_bytes_per_token_gb"] = dense_round.bytes_per_token / GB
    n["spec_moe_loss_share"] = 1 - moe_round.speedup
    # prefix caching, retrieval, lifecycle
    n["prefix_recompute_tokens"] = sc["chat_turn_tokens"]
    n["prefix_recompute_s"] = sc["chat_turn_tokens"] / meas["prefill_tok_s_moe"]
    n["prefix_restore_s"] = memory_time_s(kv_cache_bytes(qwen, n["request_history_tokens"]), c["ssd_read_gbs_laptop"])
    n["rag_added_tokens"] = sc["rag_passages"] * sc["rag_passage_tokens"]
    n["rag_added_s"] = n["rag_added_tokens"] / meas["prefill_tok_s_moe"]
    n["rag_passages"], n["rag_passage_tokens"] = sc["rag_passages"], sc["rag_passage_tokens"]

    # "Prefill in practice" (issue #12, error 1): one chunk of the MoE reads nearly every
    # expert yet each token does only 2 x active parameters of arithmetic, so the chunk
    # balances where tokens x flops per token = the machine's ops per byte x the chunk's bytes
    chunk_bytes = weights_bytes_read(qwen, n["request_chunk_tokens"])
    n["laptop_chunk_weights_gb"] = chunk_bytes / GB
    n["laptop_chunk_balance_tokens"] = n["laptop_ops_per_byte"] * chunk_bytes / flops_per_token(qwen)
    n["laptop_chunk_past_balance"] = n["request_chunk_tokens"] / n["laptop_chunk_balance_tokens"]
    # the laptop's bandwidth efficiency as the timing model solves it from its measured decode speeds
    n["laptop_bandwidth_efficiency"] = coefficients(laptop).bandwidth_efficiency
    # ... and its compute efficiency, solved from the measured prefill speed with the attention's
    # work and the benchmark prompt's chunks counted (the simulator's "Assumed" line prints it)
    n["laptop_compute_efficiency"] = coefficients(laptop).compute_efficiency
    # ... which is the efficiency of full-width products: each routed expert's product has only
    # chunk x used / experts rows, and the model charges those for loading their weights
    # (tokenwalk.timing.prefill_shape, rows_half from a published dense/MoE pair)
    from tokenwalk.timing import prefill_shape
    from tokenwalk.timing.model import prefill_s

    chunk = n["request_chunk_tokens"]
    shape_key, rows_half = prefill_shape.pair_for(laptop)
    pair = prefill_shape.pair_measurements(shape_key)
    n["laptop_expert_rows"] = prefill_shape.expert_rows(qwen, chunk)
    n["laptop_shape_rows_half"] = rows_half
    # the benchmark's prompt ends on a short chunk, whose experts' products are narrower still
    n["laptop_bench_last_chunk_tokens"] = meas["prefill_prompt_tokens"] % chunk
    n["laptop_bench_last_chunk_expert_rows"] = prefill_shape.expert_rows(qwen, n["laptop_bench_last_chunk_tokens"])
    n["laptop_expert_product_factor"] = prefill_shape.small_product_factor(n["laptop_expert_rows"], chunk, rows_half)
    n["published_shape_pair_prompt_tokens"] = pair["prompt_tokens"]
    n["published_shape_pair_dense_tok_s"] = pair["dense_tok_s"]
    n["published_shape_pair_moe_tok_s"] = pair["moe_tok_s"]
    # the dense 27B over the benchmark's prompt: by the model, and at the MoE's measured rate of
    # useful operations (what handing it the MoE's share would give)
    bench_prompt = meas["prefill_prompt_tokens"]
    n["laptop_dense_prefill_tok_s"] = bench_prompt / prefill_s(d27, laptop, bench_prompt, chunk)
    n["laptop_dense_prefill_at_moe_rate_tok_s"] = n["laptop_useful_tflops"] * 1e12 / flops_per_token(d27)
    # ... and how it splits one measured decode step of the MoE (at the benchmark's context) into
    # reading at that efficiency and the fixed toll of its kernel launches; the share of the bandwidth a step
    # uses on average (laptop_share_moe) is the weights' time at the spec rate over the whole step
    coeffs = coefficients(laptop)
    measured_step = decode_step(qwen, peaks(laptop), meas["prefill_prompt_tokens"], 1)
    n["laptop_decode_step_ms"] = 1e3 / meas["decode_tok_s_moe"]
    n["laptop_decode_read_ms"] = measured_step.memory_s / coeffs.bandwidth_efficiency * 1e3
    n["laptop_launch_cost_us"] = coeffs.launch_cost_s * 1e6
    n["laptop_decode_overhead_ms"] = decode_launches(qwen).per_step * coeffs.launch_cost_s * 1e3
    # the fixed cost travels with the machine, not the model: a small model on the laptop pays
    # for its own launches at the same cost each (the simulator's SmolLM2 preset)
    smollm2 = load_model("smollm2-135m")
    smol = decode_breakdown(smollm2, laptop)
    n["laptop_smollm2_launches"] = smol["launches"]
    n["laptop_smollm2_overhead_ms"] = smol["overhead_s"] * 1e3
    n["laptop_smollm2_decode_tok_s"] = smol["tok_s"]
    n["laptop_decode_weights_spec_ms"] = memory_time_s(qwen.bytes_read_per_token, laptop.bandwidth_gbs) * 1e3
    # Chapter 7: the memory Windows and its applications leave before any model loads, and the
    # decode ceiling of dense weights that would fill it
    n["laptop_free_before_load_gb"] = n["laptop_memory_gb"] - n["system_apps_gb"]
    n["laptop_free_dense_ceiling_tok_s"] = n["laptop_bandwidth_gbs"] / n["laptop_free_before_load_gb"]
    return out


def _measured_model(key: str) -> str:
    """The preset name of the model a laptop measurement was taken with (its "model" field)."""
    return data_refs.read_data_json("measurements/laptop.json")["values"][key]["model"]
