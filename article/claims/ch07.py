"""Claims of content/07-numbers.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    "q4km_bytes_per_weight": "abs(q4km_bits_per_weight / 8 - 0.6) < 0.05",
    "memory_needed_fits": "qwen_size_gb + budget_small_kv_mb / 1000 + runtime_overhead_gb + system_apps_gb < laptop_memory_gb",
    "envelope_decode_share": "abs(decode_tok_s_moe / qwen_ceiling_tok_s - laptop_share_moe) < 1e-6",
    "envelope_prefill_ceiling": ("abs(laptop_fp16_tflops * 1000 / qwen_flops_per_token_g - env_prefill_ceiling_tok_s) < 0.5"
                                 " and abs(prefill_tok_s_moe / env_prefill_ceiling_tok_s - laptop_prefill_peak_share) < 1e-9"
                                 " and laptop_prefill_peak_share < laptop_compute_efficiency"),
    "envelope_answer_time": "abs(request_output_tokens / decode_tok_s_moe - env_answer_s) < 0.01 and request_decode_s > env_answer_s",
    "free_memory_dense_ceiling_below_reading": ("abs(laptop_bandwidth_gbs / laptop_free_before_load_gb - laptop_free_dense_ceiling_tok_s)"
                                                " < 0.01"
                                                " and laptop_free_dense_ceiling_tok_s < reading_speed_tok_s[0]"),
    "dense27_about_half_of_free": "0.4 < dense27_size_gb / laptop_free_before_load_gb < 0.6",
    "laptop_bought_room": "qwen_size_gb > rtx5080_memory_gb and decode_tok_s_moe >= reading_speed_tok_s[0]",
    "experts_used_mixtral": "mixtral_experts_used < mixtral_experts and qwen_experts_used < qwen_experts",
    "trace_step_bytes": "abs(request_step_gb - qwen_bytes_per_token_gb - request_kv_prompt_mb / 1000) < 0.01",
    "trace_ttft_is_prefill": "abs(request_ttft_s - request_prefill_s) < 0.1",
    "minute_of_silence_arithmetic": "laptop_chunk_past_balance > 1",
    "closing_decode_below_ceiling": "decode_tok_s_moe < qwen_ceiling_tok_s",
    "fit_errors_met": ("fit_unseen_decode_error_median_share < fit_unseen_prefill_error_median_share"
                       " and 0.7 <= fit_unseen_decode_range_coverage_share <= 0.9"
                       " and 0.7 <= fit_unseen_prefill_range_coverage_share <= 0.9"),
    "moe_prefill_shape_uncertain": ("fit_shape_pairs == 3 and fit_shape_pairs_are_vulkan_amd_metal_cuda"
                                    " and 0.1 < fit_shape_others_error_min_share"
                                    " and fit_shape_others_error_max_share <= 0.5"
                                    " and fit_shape_without_error_min_share > fit_shape_others_error_min_share"),
    "small_models_miss_more": ("fit_small_decode_error_median_share > fit_unseen_decode_error_median_share"
                               " and fit_small_decode_error_p90_share > fit_small_decode_error_median_share"),
    "board_memory_path": ("fit_board_example_bandwidth_share < fit_board_example_row_share / 2"
                          " and fit_board_example_bandwidth_share < 0.5"),
    "prefill_software_spread": ("fit_small_prefill_error_median_share > fit_small_decode_error_median_share"
                                " and fit_stack_example_prefill_runs >= 5"
                                " and fit_stack_example_compute_share_max > 3 * fit_stack_example_compute_share_min"),
    # the bands printed are the ones the simulator uses: each class has its own runs enough
    "small_band_brackets": ("min(fit_small_decode_discrete_runs, fit_small_prefill_discrete_runs,"
                            " fit_small_decode_integrated_runs, fit_small_prefill_integrated_runs)"
                            " >= fit_small_band_min_runs"
                            " and fit_small_decode_discrete_speed_ratio_p10 < 1 < fit_small_decode_discrete_speed_ratio_p90"
                            " and fit_small_prefill_discrete_speed_ratio_p10 < 1 < fit_small_prefill_discrete_speed_ratio_p90"
                            " and fit_small_decode_integrated_speed_ratio_p10 < 1 < fit_small_decode_integrated_speed_ratio_p90"
                            " and fit_small_prefill_integrated_speed_ratio_p10 < fit_small_prefill_integrated_speed_ratio_p90"),
    "cpu_row_fitted": ("fit_cpu_row_machines >= 2 and abs(fit_cpu_example_cores * fit_cpu_example_ghz"
                       " * fit_cpu_example_flops_per_cycle / 1000 - fit_cpu_example_tflops) < 1e-9"),
    # met: the ranges within both targets, and the runs' own spread (0: no runs kept) wider than the decode one;
    # missed: the decode miss above its target and below 40 %, the prefill one below 100 %
    "size_check_stated": ("(engine_size_met and engine_size_decode_error_range[1] <= engine_size_decode_target"
                          " and engine_size_prefill_error_range[1] <= engine_size_prefill_target"
                          " and (engine_size_decode_run_spread == 0"
                          " or engine_size_decode_run_spread > engine_size_decode_target))"
                          " or (not engine_size_met and engine_size_decode_error_range[1] > engine_size_decode_target"
                          " and engine_size_decode_error_range[1] < 0.4 and engine_size_prefill_error_range[1] < 1)"),
    "peer_size_all_but_the_smallest": (
        "engine_peer_size_decode_met_count == engine_peer_size_models - 1"
        " and engine_peer_size_prefill_met_count == engine_peer_size_models - 1"
        " and engine_peer_size_decode_worst_model == engine_peer_size_smallest_model"
        " and engine_peer_size_prefill_worst_model == engine_peer_size_smallest_model"
        " and engine_peer_size_decode_error_range[1] > engine_size_decode_target"
        " and engine_peer_size_prefill_error_range[1] > 2 * engine_size_prefill_target"
        " and engine_peer_size_others_fixed_share_max < 0.1"),
    "engine_prefill_cheaper_per_token": "engine_prefill_ms_per_token < engine_decode_step_ms / 2",
    "engine_far_under_its_bound": ("engine_weights_step_ms < engine_decode_step_ms / 3"
                                   " and engine_weights_kv_step_ms < engine_decode_step_ms"),
}
