"""Claims of content/06-laptop.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    "decode_modest_slice": "laptop_share_moe < 0.5 and laptop_share_dense < 0.5",
    "dense_share_counts_bytes_read": ("abs(decode_tok_s_dense * dense27_bytes_per_token_gb / laptop_bandwidth_gbs - laptop_share_dense)"
                                      " < 1e-6"),
    "default_ctx_far_beyond_need": ("budget_conversation_tokens * 10 < ollama_default_num_ctx"
                                    " and abs(budget_conversation_tokens - request_prompt_tokens - request_output_tokens) < 1"),
    "all_layers_cache_grows": "abs(budget_big_kv_all_layers_gb / budget_big_kv_gb - kv_qwen_without_hybrid_factor) < 1e-6",
    "room_not_the_constraint": "budget_small_free_gb > 5 and budget_big_free_gb > 0",
    "q8_cache_about_half": "abs(kv_q8_over_f16 - bpw_q8_0 / bpw_f16) < 1e-9 and 0.4 < kv_q8_over_f16 < 0.6",
    "laptop_short_of_bytes_and_arithmetic": ("qwen_decode_ops_per_byte < laptop_ops_per_byte and laptop_chunk_past_balance > 1"
                                             " and budget_small_free_gb > 5"),
    "speculation_aimed_at_writing_helps_dense": "spec_dense_speedup > 1",
    "prefill_reads_once_for_hundreds": "request_chunk_tokens >= 200",
    "check_pass_costs_a_step": "spec_gamma + 1 < laptop_balance_tokens_q4km and spec_dense_verify_gb == dense27_bytes_per_token_gb",
    "draft_is_small": "spec_draft_params_b * 20 < dense27_params_b",
    "expected_tokens_formula": "abs((1 - spec_alpha ** (spec_gamma + 1)) / (1 - spec_alpha) - spec_tokens_per_round) < 1e-3",
    "models_land_on_opposite_sides": "spec_dense_speedup > 1 > spec_moe_speedup",
    "dense_spec_bytes": ("abs((spec_dense_verify_gb + spec_dense_draft_gb) / spec_tokens_per_round -"
                         " spec_dense_bytes_per_token_gb) < 0.01"
                         " and abs(dense27_bytes_per_token_gb / spec_dense_bytes_per_token_gb - spec_dense_speedup) < 0.01"),
    "moe_check_experts": ("spec_moe_check_experts <= spec_check_max_experts == qwen_experts_used * (spec_gamma + 1)"
                          " and abs(spec_moe_verify_gb / qwen_bytes_per_token_gb - spec_moe_verify_over_step) < 0.01"),
    "moe_spec_bytes": ("abs((spec_moe_verify_gb + spec_moe_draft_gb) / spec_tokens_per_round - spec_moe_bytes_per_token_gb) < 0.01"
                       " and spec_moe_bytes_per_token_gb > qwen_bytes_per_token_gb"),
    "moe_spec_small_loss": ("spec_moe_speedup < 1 and 0 < spec_moe_loss_share < 0.2"
                            " and abs(1 - spec_moe_speedup - spec_moe_loss_share) < 1e-6"),
    "mtp_pays_only_near_greedy": ("mtp_on_t0_tok_s > mtp_off_t0_tok_s and mtp_on_t07_tok_s_high <= mtp_off_t07_tok_s"
                                  " and mtp_t_low < mtp_t_high"),
    "mtp_series_of_its_own": "mtp_off_t0_tok_s != decode_tok_s_moe",
    "prefix_recompute_time": "abs(prefix_recompute_tokens / prefill_tok_s_moe - prefix_recompute_s) < 0.01",
    "cache_write_dearer_read_cheaper": "anthropic_cache_write_price_ratio > 1 and anthropic_cache_read_price_ratio <= 0.1",
    "prefix_speed_impossible_honestly": "prefix_cache_tok_s_low > laptop_fp16_tflops * 1000 / qwen_flops_per_token_g",
    # restore the history's cache, prefill what follows it (question and markup), take one step
    "restored_history_answers_within_a_second": (
        "abs(request_history_kv_mb / 1000 / ssd_read_gbs_laptop - prefix_restore_s) < 1e-6"
        " and prefix_restore_s + (request_prompt_tokens - request_history_tokens - request_system_tokens)"
        " / prefill_tok_s_moe + request_step_ms / 1000 < 1"),
    "rag_delay": "rag_added_tokens == rag_passages * rag_passage_tokens and abs(rag_added_tokens / prefill_tok_s_moe - rag_added_s) < 0.01",
    "about_as_fast_as_i_read": "reading_speed_tok_s[0] <= request_decode_tok_s <= 2 * reading_speed_tok_s[1]",
    "keep_alive_gaps": "sc_keep_alive_gap_short_min < ollama_keep_alive_default_min < sc_keep_alive_gap_long_min",
}
