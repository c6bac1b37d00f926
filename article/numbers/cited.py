"""Cited facts (article/data/cited/article.json) and the scenario sizes as sc_*, with a few
plain combinations (laptop_bus_*, gpt3_training_*)."""

from __future__ import annotations


def group(n: dict, c: dict, sizes: dict) -> None:
    """Cited facts and the article's scenario sizes, with a few plain combinations."""
    from tokenwalk.physics.roofline import bus_bandwidth_gbs

    for key in ("qwen38_temperature", "qwen38_top_p", "qwen38_top_k", "grpo_samples", "rope_base",
                "anthropic_cache_write_price_ratio", "anthropic_cache_read_price_ratio",
                "anthropic_cache_ttl_min", "runpod_5090_usd_per_hour", "ollama_port",
                "ollama_keep_alive_default_min", "kaplan_attention_width_ratio",
                "tokens_per_1000_english_words", "tokens_per_1000_spanish_words", "reading_speed_tok_s",
                "strix_halo_share", "chars_per_token_english", "ssd_read_gbs_laptop", "runtime_overhead_gb",
                "system_headroom_gb", "mixtral_experts", "mixtral_experts_used"):
        n[key] = c[key]
    n["laptop_transfers_mt_s"] = c["laptop_transfers_mt_s"]
    n["laptop_bus_bits"] = c["laptop_bus_bits"]
    n["laptop_bus_bytes"] = c["laptop_bus_bits"] // 8
    n["laptop_bus_bandwidth_gbs"] = bus_bandwidth_gbs(c["laptop_transfers_mt_s"], c["laptop_bus_bits"])
    n["m4max_bus_bits"] = c["m4max_bus_bits"]
    n["gpt3_training_tokens_b"] = c["gpt3_training_tokens"] / 1e9
    n["gpt3_batch_tokens_m"] = c["gpt3_batch_tokens"] / 1e6
    n["gpt3_training_steps"] = c["gpt3_training_tokens"] / c["gpt3_batch_tokens"]
    n["gpt3_training_steps_rounded"] = int(round(n["gpt3_training_steps"], -3))
    for key, value in sizes.items():
        n[f"sc_{key}"] = value
