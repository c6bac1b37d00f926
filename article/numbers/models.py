"""Sizes of the models and machines, straight from their presets, and the models' ceilings on
the laptop: qwen_*, gpt3_* (with its training, cited), dense27_*, llama70_*, rtx5090_*,
rtx5080_*, m4max_*, moe_*, q4km_*, gguf_*. The laptop's and the H100's own specs are their
groups' (laptop, h100)."""

from __future__ import annotations

from collections import ChainMap

from article.numbers._words import words as _words

PREFIXES = ("qwen_", "gpt3_", "dense27_", "llama70_", "rtx5090_", "rtx5080_", "m4max_", "moe_", "q4km_", "gguf_")
NEEDS: tuple[str, ...] = ()
GB = 1e9


def names(src, n) -> dict:
    """Sizes of the models and machines, straight from their presets."""
    s, c = src.scenario.presets, src.cited
    from tokenwalk.gguf.ggml_types import bits_per_weight
    from tokenwalk.physics.attention import softmaxes_per_decode_step
    from tokenwalk.physics.launches import decode_launches
    from tokenwalk.physics.roofline import decode_ceiling_tok_s, flops_per_token, model_ops_per_byte, weights_bytes

    out: dict = {}
    n = ChainMap(out, n)
    qwen, d27, l70, gpt3 = s["qwen"], s["dense27"], s["llama70"], s["gpt3"]
    laptop = s["laptop"]
    n["rtx5090_bandwidth_gbs"] = s["rtx5090"].bandwidth_gbs
    n["rtx5090_memory_gb"] = s["rtx5090"].memory_gb
    n["rtx5090_compute_units"] = s["rtx5090"].compute_units
    n["rtx5080_bandwidth_gbs"] = s["rtx5080"].bandwidth_gbs
    n["rtx5080_memory_gb"] = s["rtx5080"].memory_gb
    n["m4max_bandwidth_gbs"] = s["m4max"].bandwidth_gbs
    n["m4max_bus_bits"] = c["m4max_bus_bits"]
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
    # the kernels llama.cpp's graph launches for one of Qwen's tokens (what the fixed cost is paid on)
    n["qwen_decode_launches"] = decode_launches(qwen).per_step
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
    n["gpt3_name"] = gpt3.name
    n["gpt3_layers"] = gpt3.layers
    n["gpt3_width"] = gpt3.embedding_length
    n["gpt3_heads"] = gpt3.head_count
    n["gpt3_head_dim"] = gpt3.head_dim
    n["gpt3_ffn"] = gpt3.feed_forward_length
    n["gpt3_vocab"] = gpt3.vocab_size
    n["gpt3_softmaxes_per_step"] = softmaxes_per_decode_step(gpt3)
    n["gpt3_training_tokens_b"] = c["gpt3_training_tokens"] / 1e9
    n["gpt3_batch_tokens_m"] = c["gpt3_batch_tokens"] / 1e6
    n["gpt3_training_steps"] = c["gpt3_training_tokens"] / c["gpt3_batch_tokens"]
    n["gpt3_training_steps_rounded"] = int(round(n["gpt3_training_steps"], -3))
    # the models' decode ceilings on the laptop, and what one token's weights cost in operations and bytes
    n["qwen_flops_per_token_g"] = flops_per_token(qwen) / 1e9
    n["qwen_ceiling_tok_s"] = decode_ceiling_tok_s(qwen, laptop)
    n["dense27_ceiling_tok_s"] = decode_ceiling_tok_s(d27, laptop)
    n["qwen_decode_ops_per_byte"] = model_ops_per_byte(qwen)
    n["qwen_bytes_per_weight"] = qwen.bytes_read_per_token / qwen.active_params
    return out
