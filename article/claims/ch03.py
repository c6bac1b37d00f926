"""Claims of content/03-one-column.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    "mask_new_word_is_last": "mask_step_token == mask_size",
    "kv_cache_saves_passes": ("no_cache_token_passes_m * 1e6 > 100 * with_cache_token_passes"
                              " and with_cache_token_passes == request_prompt_tokens + request_output_tokens"),
    "qwen_caches_fewer_layers_than_depth": "qwen_kv_layers < qwen_layers",
    "gpt3_softmaxes_layers_times_heads": "gpt3_softmaxes_per_step == gpt3_layers * gpt3_heads",
    "decode_fetching_sets_pace": "d7_decode_compute_ms < d7_step_memory_ms / 10 and qwen_decode_ops_per_byte < laptop_ops_per_byte / 10",
}
