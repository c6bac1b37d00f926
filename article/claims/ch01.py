"""Claims of content/01-why.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    # a step that carries a hundred tokens still costs only the read
    "h100_hundred_tokens_cost_the_read": "balance_tokens_fp16 > 100",
    # writing sits deep on the bytes side, reading a prompt far on the other
    "decode_deep_on_bytes_side": "1 < balance_tokens_fp16 / 10",
    "prefill_far_on_arithmetic_side": "d7_prefill_tokens > 2 * balance_tokens_fp16",
    # batching: each user still gets a lone user's speed
    "batch_users_keep_lone_speed": ("batch_users < balance_tokens_fp16"
                                    " and abs(batch_user_tok_s - d7_ceiling_tok_s) < 0.01 * d7_ceiling_tok_s"),
    "laptop_takes_prompt_in_chunks": ("request_prefill_chunks * request_chunk_tokens >= request_prompt_tokens > (request_prefill_chunks -"
                                      " 1) * request_chunk_tokens"),
    "qwen_fits_beside_apps": "qwen_size_gb + system_apps_gb < laptop_memory_gb",
    "llama70_needs_closing_tabs": "llama70_size_gb < laptop_memory_gb < llama70_size_gb + system_apps_gb",
    "h100_bandwidth_over_laptop": "abs(h100_bandwidth_gbs / laptop_bandwidth_gbs - h100_over_laptop_bandwidth) < 0.01",
    "request_longer_than_benchmark": "request_prompt_tokens > prefill_prompt_tokens",
    "request_ttft_a_bit_over_a_minute": "60 < request_ttft_s < 90",
    "qwen_vocab_larger_than_counter": "qwen_vocab > token_count_vocab",
}
