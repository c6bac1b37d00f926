"""Claims of content/05-prefill-decode.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    "porter_round_same_for_any_tickets": "d7_prefill_memory_ms == d7_step_memory_ms",
    "worktop_smaller_than_a_head_slice": "h100_shared_kb < d7_head_slice_mb * 1000 < d7_wq_mb * 1000 < d7_layer_mb * 1000",
    "tile_fits_worktop": "tile_rows ** 2 * 2 / 1024 == tile_kb and tile_kb < h100_shared_kb / 2",
    "model_never_on_chip": "h100_on_chip_share < 0.01 and abs(h100_on_chip_mb / (d7_size_gb * 1000) - h100_on_chip_share) < 1e-6",
    "tile_ops_one_and_many": "tile_ops_decode == 2 * tile_rows ** 2 and tile_ops_prefill == tile_ops_decode * tile_prefill_tokens",
    "decode_sms_wait_on_bus": "d7_decode_compute_ms < d7_step_memory_ms",
    "prefill_bus_waits_on_sms": "d7_prefill_compute_ms > d7_prefill_memory_ms and d7_prefill_step_ms == d7_prefill_compute_ms",
    "two_ops_per_weight": ("d7_flops_per_token_g == 2 * d7_params_b"
                           " and abs(d7_flops_per_token_g / h100_tflops - d7_compute_per_token_ms) < 1e-9"),
    "balance_both_need_the_read": "abs(d7_balance_compute_ms - d7_balance_step_ms) < 0.01 * d7_balance_step_ms",
    "decoded_token_dearer": "d7_decode_vs_prefill_cost_per_token > 100",
    "balance_formula_printed": ("abs(round(h100_tflops, -1) / h100_bandwidth_tbs - balance_tokens_fp16) < 1"
                                " and abs(d7_step_memory_ms / d7_compute_per_token_ms - balance_tokens_fp16) < 0.5"),
    "four_bit_balance_quarter": "abs(4 * balance_tokens_4bit - balance_tokens_fp16) < 0.5",
    "accounting_matches_execution": ("abs(d7_layers * d7_layer_compute_ms - d7_prefill_step_ms) < 1e-6 * d7_prefill_step_ms"
                                     " and d7_layer_compute_ms > d7_layer_memory_ms"),
    "prefill_compute_bound_decode_memory_bound": ("d7_prefill_tokens > balance_tokens_fp16 and laptop_chunk_past_balance > 1"
                                                  " and qwen_decode_ops_per_byte < laptop_ops_per_byte"),
    "bigger_dense_ceilings": "d13_ceiling_tok_s > d70_ceiling_tok_s and h100_memory_gb < 2 * bigger_dense_params_b[1]",
    "laptop_ceiling_from_bytes": ("abs(laptop_bandwidth_gbs / qwen_bytes_per_token_gb - qwen_ceiling_tok_s) < 0.01"
                                  " and decode_tok_s_moe < qwen_ceiling_tok_s"),
    "laptop_step_and_weights_time": ("abs(1000 / decode_tok_s_moe - laptop_decode_step_ms) < 0.01"
                                     " and abs(laptop_decode_weights_spec_ms / laptop_decode_step_ms - laptop_share_moe) < 1e-6"),
    "laptop_decode_two_culprits_sum": ("abs(laptop_decode_read_ms + laptop_decode_overhead_ms - laptop_decode_step_ms)"
                                       " < 0.02 * laptop_decode_step_ms"
                                       " and abs(qwen_decode_launches * laptop_launch_cost_us / 1000 - laptop_decode_overhead_ms) < 0.05"),
    "fitted_efficiency_above_share": "laptop_bandwidth_efficiency > laptop_share_moe",
    "small_model_pays_its_own_launches": ("laptop_smollm2_launches < qwen_decode_launches / 3"
                                          " and laptop_smollm2_overhead_ms > 500 / laptop_smollm2_decode_tok_s"),
    "dense27_ceiling_and_measured": ("abs(laptop_bandwidth_gbs / dense27_bytes_per_token_gb - dense27_ceiling_tok_s) < 0.01"
                                     " and decode_tok_s_dense < dense27_ceiling_tok_s"),
    "dense_slower_than_moe": ("abs(decode_tok_s_moe / decode_tok_s_dense - dense_vs_moe_speed_ratio) < 0.01"
                              " and dense_vs_moe_speed_ratio > 2"),
    "others_nearer_their_ceilings": "published_share_median > laptop_share_dense > laptop_share_moe",
    "published_range_slowest_fastest": "published_slowest_gbs < laptop_bandwidth_gbs < published_fastest_gbs",
    # figure 19's caption: the MoE's bytes per token from its tensor table, above its file's
    # share by parameters because what a token reads is stored at more bits than the average
    "qwen_bytes_per_token_from_table": ("qwen_bytes_per_token_gb > qwen_bytes_per_token_pro_rata_gb"
                                        " and abs(qwen_size_gb * qwen_active_params_b / qwen_params_b"
                                        " - qwen_bytes_per_token_pro_rata_gb) < 1e-9"
                                        " and qwen_read_bits_per_weight > q4km_bits_per_weight"
                                        " and abs(8 * qwen_bytes_per_token_gb / qwen_active_params_b"
                                        " - qwen_read_bits_per_weight) < 1e-9"),
    "moe_fixed_costs_take_over": "0.8 < laptop_decode_overhead_ms / laptop_decode_read_ms < 1.25",
    "strix_halo_above_laptop": "strix_halo_share[0] > laptop_share_dense",
    "laptop_kitchen_balance": "abs(laptop_fp16_tflops * 1000 / laptop_bandwidth_gbs - laptop_ops_per_byte) < 0.01",
    "laptop_cooks_mostly_wait": ("qwen_decode_ops_per_byte < laptop_ops_per_byte / 10"
                                 " and abs(2 / qwen_bytes_per_weight - qwen_decode_ops_per_byte) < 1e-6"),
    "batch_step_unchanged": ("abs(batch_step_ms - d7_step_memory_ms) < 0.01 * d7_step_memory_ms and batch_compute_ms < batch_step_ms"
                             " and abs(batch_compute_ms / batch_step_ms - batch_sm_busy_share) < 1e-6"),
    "batch_serves_many": "abs(batch_users * 1000 / batch_step_ms - batch_server_tok_s) < 1",
    "batch_stretches_at_balance": "abs(batch_max_users - balance_tokens_fp16) < 1",
    "dense_chunk_far_past_balance": "request_chunk_tokens > 10 * laptop_balance_tokens_q4km",
    "chunk_wakes_practically_all_experts": "experts_woken_by_chunk > 0.98 * qwen_experts and laptop_chunk_weights_gb > 0.9 * qwen_size_gb",
    "moe_chunk_balance_arithmetic": ("abs(laptop_ops_per_byte * laptop_chunk_weights_gb / qwen_flops_per_token_g -"
                                     " laptop_chunk_balance_tokens) < 0.5"),
    "moe_chunk_past_balance": ("1 < request_chunk_tokens / laptop_chunk_balance_tokens < 3"
                               " and abs(request_chunk_tokens / laptop_chunk_balance_tokens - laptop_chunk_past_balance) < 1e-6"),
    "request_flops_about": "abs(request_flops_t - request_prompt_tokens * qwen_flops_per_token_g / 1000) < 0.05 * request_flops_t",
    "useful_flops_small_slice": "laptop_useful_tflops < laptop_fp16_tflops / 10",
    "pencil_ttft_a_minute": "60 < env_ttft_s < 90 and abs(request_prompt_tokens / prefill_tok_s_moe - env_ttft_s) < 0.01",
    "model_ttft_near_pencil": ("abs(request_ttft_s / env_ttft_s - 1) < 0.05 and prefill_prompt_tokens < request_prompt_tokens"
                               " and laptop_bench_last_chunk_tokens == prefill_prompt_tokens % request_chunk_tokens"
                               " and 0 < laptop_bench_last_chunk_tokens < request_chunk_tokens"
                               " and laptop_bench_last_chunk_expert_rows < laptop_expert_rows"),
    "desktop_helps_prefill_more": "rtx5090_compute_units / laptop_compute_units > rtx5090_bandwidth_gbs / laptop_bandwidth_gbs",
    "expert_rows_from_router": ("abs(laptop_expert_rows / (request_chunk_tokens * qwen_experts_used / qwen_experts) - 1) < 1e-3"
                                " and laptop_expert_rows < request_chunk_tokens / 10"),
    "expert_products_dearer": "laptop_expert_product_factor > 3 and laptop_compute_efficiency > laptop_prefill_peak_share",
    "dense_prefill_not_at_moe_rate": "laptop_dense_prefill_tok_s > 2 * laptop_dense_prefill_at_moe_rate_tok_s",
    "long_prompt_weights_linear": "abs(d7_long_weights_ms / d7_prefill_step_ms - long_prompt_tokens / d7_prefill_tokens) < 0.01",
    "attention_share_grows": "d7_example_attention_share < 0.1 < d7_long_attention_share < 1",
    "attention_share_causal_half": "abs(d7_long_attention_share - d7_layers * long_prompt_tokens * d7_width / (d7_params_b * 1e9)) < 0.005",
    "decode_most_of_request": "d7_example_decode_share > 0.9 and d7_example_answer_s > d7_example_answer_weights_s",
    "decode_sms_mostly_idle": "chunk_users_sm_share < 0.5",
    "free_ride_to_balance": "abs(chunk_free_ride_tokens + chunk_users - balance_tokens_fp16) < 1 and chunk_ride_ms == chunk_users_step_ms",
    "mixed_step_saves_a_round": ("d7_step_memory_ms / 2 < chunk_separate_ms - chunk_mixed_ms < d7_step_memory_ms"
                                 " and chunk_mixed_ms > 3 * chunk_users_step_ms"),
    "separate_steps_sum": "abs(chunk_separate_decode_ms + chunk_separate_prefill_ms - chunk_separate_ms) < 0.01",
    "bigger_slices_no_faster": ("long_chunk_tokens > balance_tokens_fp16 and long_chunks_memory_ms < long_chunks_compute_ms"
                                " and abs(long_chunks_compute_ms - d7_long_weights_ms) < 0.5"
                                " and long_chunks * long_chunk_tokens == long_prompt_tokens"),
    "qwen_kv_formula": "kv_bytes_per_token_qwen == 2 * qwen_kv_layers * qwen_kv_heads * qwen_head_dim * 2",
    "qwen_kv_two_savings": ("kv_qwen_without_gqa_factor == qwen_heads / qwen_kv_heads"
                            " and kv_qwen_without_hybrid_factor == qwen_layers / qwen_kv_layers"),
    "d7_kv_formula": ("kv_bytes_per_token_d7 == 2 * d7_layers * d7_width * 2"
                      " and abs(kv_bytes_per_token_d7 / kv_bytes_per_token_qwen - kv_d7_over_qwen) < 0.01"),
    "kv_pace_sags": "kv_example_tok_s < d7_ceiling_tok_s",
    "long_cache_outweighs_model": "kv_long_gb > d7_size_gb and kv_long_tok_s < d7_ceiling_tok_s / 2",
    "mistral_kv_factor": "d7_heads / sc_mistral_kv_heads == mistral_kv_factor",
    "thinking_costs_more_with_cache": "abs(thinking_tokens / d7_ceiling_tok_s - thinking_s) < 0.01 and thinking_with_kv_s > thinking_s",
    "kaplan_threshold": "d7_prefill_tokens < long_prompt_tokens < kaplan_attention_width_ratio * d7_width",
}
