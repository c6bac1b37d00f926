"""Sizes of the models and machines, straight from their presets: qwen_*, d7_*, gpt3_*,
dense27_*, llama70_*, laptop_* and h100_* specs, rtx5090_*, rtx5080_*, m4max_*, gguf_*."""

from __future__ import annotations

from article.numbers._words import words as _words

GB = 1e9


def group(n: dict, sc) -> None:
    """Sizes of the models and machines, straight from their presets."""
    s = sc.presets
    from tokenwalk.gguf.ggml_types import bits_per_weight
    from tokenwalk.physics.attention import softmaxes_per_decode_step
    from tokenwalk.physics.roofline import shared_memory_total_bytes, weights_bytes

    qwen, d27, l70, d7, gpt3 = s["qwen"], s["dense27"], s["llama70"], s["d7"], s["gpt3"]
    laptop, h100 = s["laptop"], s["h100"]
    n["laptop_memory_gb"] = laptop.memory_gb
    n["laptop_bandwidth_gbs"] = laptop.bandwidth_gbs
    n["laptop_compute_units"] = laptop.compute_units
    n["laptop_lanes_per_cu"] = laptop.lanes_per_cu
    n["laptop_fp16_tflops"] = laptop.fp16_tflops
    n["h100_bandwidth_gbs"] = h100.bandwidth_gbs
    n["h100_bandwidth_tbs"] = h100.bandwidth_gbs / 1000
    n["h100_tflops"] = h100.fp16_tflops
    n["h100_memory_gb"] = h100.memory_gb
    n["h100_sms"] = h100.compute_units
    n["h100_lanes_per_sm"] = h100.lanes_per_cu
    n["h100_shared_kb"] = h100.shared_memory_per_cu_bytes / 1024
    n["h100_l2_mb"] = h100.l2_cache_bytes / 2**20
    n["h100_on_chip_bytes"] = shared_memory_total_bytes(h100)
    n["h100_over_laptop_bandwidth"] = h100.bandwidth_gbs / laptop.bandwidth_gbs
    n["rtx5090_bandwidth_gbs"] = s["rtx5090"].bandwidth_gbs
    n["rtx5090_memory_gb"] = s["rtx5090"].memory_gb
    n["rtx5090_compute_units"] = s["rtx5090"].compute_units
    n["rtx5080_bandwidth_gbs"] = s["rtx5080"].bandwidth_gbs
    n["rtx5080_memory_gb"] = s["rtx5080"].memory_gb
    n["m4max_bandwidth_gbs"] = s["m4max"].bandwidth_gbs
    n["qwen_size_bytes"] = qwen.size_bytes
    n["qwen_size_gb"] = qwen.size_bytes / GB
    n["qwen_params"] = qwen.params
    n["qwen_params_b"] = qwen.params / 1e9
    n["qwen_active_params_b"] = qwen.active_params / 1e9
    n["qwen_fp16_gb"] = weights_bytes(qwen.params, bits_per_weight("F16")) / GB
    n["q4km_bits_per_weight"] = qwen.bits_per_weight
    n["qwen_bytes_per_token_gb"] = qwen.bytes_read_per_token / GB
    # what the file's share by parameters would say, against which figure 19 sets the table's count
    n["qwen_bytes_per_token_pro_rata_gb"] = qwen.size_bytes * qwen.active_params / qwen.params / GB
    n["qwen_read_bits_per_weight"] = 8 * qwen.bytes_read_per_token / qwen.active_params
    n["qwen_vocab"] = qwen.vocab_size
    n["qwen_width"] = qwen.embedding_length
    n["qwen_context"] = qwen.context_length
    n["qwen_head_dim"] = qwen.head_dim
    n["qwen_heads"] = qwen.head_count
    n["qwen_kv_heads"] = qwen.head_count_kv
    n["qwen_gqa_group"] = qwen.head_count // qwen.head_count_kv
    n["qwen_full_attention_interval"] = qwen.full_attention_interval
    n["qwen_kv_layers"] = qwen.kv_layers
    n["qwen_layers"] = qwen.layers
    n["qwen_mtp_layers"] = qwen.mtp_layers
    n["qwen_block_count"] = qwen.layers + qwen.mtp_layers
    n["qwen_deltanet_layers"] = qwen.layers - qwen.kv_layers
    n["qwen_experts"] = qwen.expert_count
    n["qwen_experts_used"] = qwen.expert_used_count
    n["qwen_expert_ffn"] = qwen.expert_ffn_length
    n["qwen_shared_experts"] = qwen.shared_expert_count
    n["qwen_shared_experts_words"] = _words(qwen.shared_expert_count)
    gguf = qwen.gguf or {}
    n["gguf_version"] = gguf.get("version")
    n["gguf_tensor_count"] = gguf.get("tensor_count")
    n["gguf_kv_count"] = gguf.get("kv_count")
    n["qwen_gguf_metadata"] = gguf.get("metadata", [])
    n["qwen_gguf_tensors"] = gguf.get("tensors", [])
    merges = [e for e in gguf.get("metadata", []) if e.get("key") == "tokenizer.ggml.merges"]
    n["qwen_merges"] = merges[0]["count"] if merges else None
    n["qwen_merges_head"] = ", ".join(repr(m) for m in merges[0].get("head", [])) if merges else ""
    n["qwen_architecture"] = qwen.architecture
    n["dense27_size_gb"] = d27.size_bytes / GB
    n["dense27_params_b"] = d27.params / 1e9
    n["dense27_bits_per_weight"] = d27.bits_per_weight
    n["dense27_bytes_per_token_gb"] = d27.bytes_read_per_token / GB
    n["moe_vs_dense_bytes_ratio"] = d27.bytes_read_per_token / qwen.bytes_read_per_token
    n["llama70_size_gb"] = l70.size_bytes / GB
    n["llama70_params_b"] = l70.params / 1e9
    n["d7_params_b"] = d7.params / 1e9
    n["d7_size_gb"] = d7.size_bytes / GB
    n["d7_layers"] = d7.layers
    n["d7_width"] = d7.embedding_length
    n["d7_heads"] = d7.head_count
    n["d7_head_dim"] = d7.head_dim
    # fp8 and "4 bits" are widths by definition (no block scale counted), as the article says them.
    for label, bits in (("fp32", bits_per_weight("F32")), ("fp16", bits_per_weight("F16")), ("fp8", 8), ("q4", 4)):
        n[f"d7_{label}_gb"] = weights_bytes(d7.params, bits) / GB
    n["gpt3_layers"] = gpt3.layers
    n["gpt3_width"] = gpt3.embedding_length
    n["gpt3_heads"] = gpt3.head_count
    n["gpt3_head_dim"] = gpt3.head_dim
    n["gpt3_ffn"] = gpt3.feed_forward_length
    n["gpt3_vocab"] = gpt3.vocab_size
    n["gpt3_softmaxes_per_step"] = softmaxes_per_decode_step(gpt3)
