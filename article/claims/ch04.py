"""Claims of content/04-model-in-memory.md, in reading order (see article/claims/__init__.py)."""

CLAIMS = {
    "block_count_layers_plus_mtp": "qwen_block_count == qwen_layers + qwen_mtp_layers",
    "fp16_two_bytes_a_weight": "abs(qwen_fp16_gb - 2 * qwen_params / 1e9) < 0.01 and qwen_size_gb < qwen_fp16_gb / 2",
    "four_bits_sixteen_levels": "quant_levels_q4 == 2 ** quant_bits_q4 == 16",
    "q4_0_bits_with_scale": "bpw_q4_0 == quant_bits_q4 + 16 / quant_block_size",
    "quant_levels_span": "quant_level_min_4bit == -(2 ** (quant_bits_q4 - 1)) and quant_level_max_4bit == 2 ** (quant_bits_q4 - 1) - 1",
    "fewer_bits_bigger_miss": "quant_error_2bit > 2 * quant_error_4bit",
    "bits_per_weight_not_round": "bpw_q8_0 != round(bpw_q8_0) and bpw_q4_k != round(bpw_q4_k) and bpw_q6_k != round(bpw_q6_k)",
    "q4km_mostly_q4k": "bpw_q4_k < q4km_bits_per_weight < bpw_q6_k and q4km_bits_per_weight - bpw_q4_k < bpw_q6_k - q4km_bits_per_weight",
    "size_is_params_times_bits": "abs(qwen_params_b * q4km_bits_per_weight / 8 - qwen_size_gb) < 0.05",
    "halve_bits_halve_file": "d7_fp32_gb == 2 * d7_fp16_gb == 4 * d7_fp8_gb == 8 * d7_q4_gb",
    "dense27_size_from_bits": "abs(dense27_params_b * dense27_bits_per_weight / 8 - dense27_size_gb) < 0.05",
    "dense27_reads_file_but_embedding": "0.9 * dense27_size_gb < dense27_bytes_per_token_gb < dense27_size_gb",
    "small_model_not_seventeen": "small_model_q4km_gb < 15",
    "moe_bigger_file_fewer_bytes": "dense27_size_gb < qwen_size_gb and qwen_bytes_per_token_gb < dense27_bytes_per_token_gb",
    "dense_over_moe_bytes": "abs(dense27_bytes_per_token_gb / qwen_bytes_per_token_gb - moe_vs_dense_bytes_ratio) < 0.01",
    "lpddr_bandwidth_from_bus": ("laptop_transfers_mt_s * laptop_bus_bytes / 1000 == laptop_bandwidth_gbs"
                                 " and laptop_bus_bits / 8 == laptop_bus_bytes"),
    "m4max_wider_faster": "m4max_bus_bits > laptop_bus_bits and m4max_bandwidth_gbs > laptop_bandwidth_gbs",
    "rtx5080_cannot_load_qwen": "qwen_size_gb > rtx5080_memory_gb",
    "laptop_shares_below_published": "laptop_share_moe < laptop_share_dense < published_share_q1 < published_share_q3 < 1",
    "h100_on_chip_far_too_small": "h100_l2_mb < d7_size_gb * 1000 / 100",
    "pcie_load_time": "abs(d7_size_gb / pcie_gbs * 1000 - d7_pcie_ms) < 0.5 and abs(d7_size_gb / nvme_gbs - d7_nvme_s) < 0.05",
    "hbm_step_time": "abs(d7_size_gb / h100_bandwidth_tbs - d7_step_memory_ms) < 0.01",
    "offload_slowdown_ratio": "abs(d7_pcie_ms / d7_step_memory_ms - offload_slowdown) < 0.01 and offload_slowdown > 10",
}
