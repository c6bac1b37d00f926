"""Cited facts (article/data/cited/article.json) under their own names, and the scenario sizes
as sc_*. A cited fact that feeds another group's arithmetic (the laptop's bus, GPT-3's training,
the M4 Max's bus) is read there, under that group's prefix."""

from __future__ import annotations

PREFIXES = ("qwen38_", "grpo_", "rope_", "anthropic_", "runpod_", "ollama_port", "ollama_keep_alive_", "kaplan_",
            "tokens_per_", "reading_", "strix_", "chars_per_", "ssd_", "runtime_", "system_headroom_", "mixtral_",
            "sc_")
NEEDS: tuple[str, ...] = ()


def names(src, n) -> dict:
    """Cited facts and the article's scenario sizes."""
    c, sizes = src.cited, src.scenario.sizes
    out: dict = {}
    for key in ("qwen38_temperature", "qwen38_top_p", "qwen38_top_k", "grpo_samples", "rope_base",
                "anthropic_cache_write_price_ratio", "anthropic_cache_read_price_ratio",
                "anthropic_cache_ttl_min", "runpod_5090_usd_per_hour", "ollama_port",
                "ollama_keep_alive_default_min", "kaplan_attention_width_ratio",
                "tokens_per_1000_english_words", "tokens_per_1000_spanish_words", "reading_speed_tok_s",
                "strix_halo_share", "chars_per_token_english", "ssd_read_gbs_laptop", "runtime_overhead_gb",
                "system_headroom_gb", "mixtral_experts", "mixtral_experts_used"):
        out[key] = c[key]
    for key, value in sizes.items():
        out[f"sc_{key}"] = value
    return out
