"""Claims of content/02-whole-matrices.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    "flops_twice_active_params": "abs(qwen_flops_per_token_g - 2 * qwen_active_params_b) < 0.01",
    "active_far_below_total": "qwen_active_params_b < qwen_params_b / 5",
    "history_fewer_chars_per_token": "request_chars_per_token < chars_per_token_english",
    "attention_top_word_takes_most": "attn_top_weight > 0.5",
    "deltanet_second_channel": "qwen_deltanet_layers > 0 and qwen_kv_layers + qwen_deltanet_layers == qwen_layers",
    "gpt3_heads_fill_width": "gpt3_heads * gpt3_head_dim == gpt3_width",
    "gqa_group_is_heads_over_kv_heads": "qwen_heads / qwen_kv_heads == qwen_gqa_group",
    "one_layer_in_interval_attends": "qwen_layers / qwen_full_attention_interval == qwen_kv_layers",
    "full_attention_a_handful": "qwen_kv_layers <= qwen_layers / 4",
    "experts_used_few_of_many": "qwen_experts_used * 10 < qwen_experts",
    "moe_reads_more_with_more_tokens": "qwen_bytes_per_token_gb < spec_moe_verify_gb < laptop_chunk_weights_gb",
    "gpt3_ffn_four_widths": "gpt3_ffn == 4 * gpt3_width",
    "cooling_raises_leader": "sampling_p_tlow[0] > sampling_p_t1[0]",
    "heating_lowers_leader": "sampling_p_thigh[0] < sampling_p_t1[0] and sampling_p_thigh[-1] > sampling_p_t1[-1]",
    "ranking_stays_put": ("sampling_p_thigh[0] > sampling_p_thigh[1] > sampling_p_thigh[2]"
                          " and sampling_p_tlow[0] > sampling_p_tlow[1] > sampling_p_tlow[2]"),
    "top_p_group_reaches_p": "sampling_top_p_kept_mass >= sampling_top_p",
    "gpt3_steps_from_tokens_and_batch": ("abs(gpt3_training_tokens_b * 1000 / gpt3_batch_tokens_m - gpt3_training_steps) < 1"
                                         " and abs(gpt3_training_steps_rounded - gpt3_training_steps) < 1000"),
}
