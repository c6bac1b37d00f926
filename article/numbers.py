"""The article's number namespace `n`: every number the chapters print, computed by tokenwalk.

`article_numbers()` returns a flat dict, name -> value (numbers raw, in the units their
names say; the chapters format them with the build's filters: `{{ n.qwen_size_gb | fixed(1) }}`).
Nothing here does physics of its own: sizes come from the model and machine presets,
times from roofline, kv_cache, timing and walk, toy numbers from the toy modules,
measurements from data/measurements/laptop.json (the author's laptop) and engine.json (the
machine that built the page, `tokenwalk measure`; absent: `n.engine` is None), cited facts from data/cited/article.json,
and the request's token counts from tokenizing content/request/ with a real tokenizer.
This module only picks, combines (a ratio, a difference) and names.

Conventions: `_gb`, `_mb`, `_kb` are SI (1e9, 1e6, 1e3 bytes); `_bytes` are bytes;
`_s`, `_ms` seconds and milliseconds; `_tok_s` tokens per second; `_b` billions;
`_share` a fraction in [0, 1].

Pure Python (standard library), except the token count, which reads the SmolLM2 GGUF file
named in content/request/request.json once per process (about a second).
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from pathlib import Path

from tokenwalk import data_refs
from article.references import references
from tokenwalk.errors import TokenwalkError

ROOT = Path(__file__).resolve().parent.parent
REQUEST_DIR = ROOT / "content" / "request"
GB = 1e9


# ----------------------------------------------------------------- data files

def _values(relative_path: str) -> dict:
    """name -> value of a data file with a `values` table (through data_refs, so a test can
    substitute a file by patching `data_refs.read_data_json`)."""
    data = data_refs.read_data_json(relative_path)
    try:
        return {k: v["value"] for k, v in data["values"].items()}
    except (KeyError, TypeError):
        raise TokenwalkError(f"tokenwalk/data/{relative_path}: values: each entry needs a 'value'") from None


def _scenarios() -> dict:
    data = data_refs.read_data_json("cited/article.json")
    return {k: v["value"] for k, v in data["scenarios"]["values"].items()}


def _request_config(request_dir: Path) -> dict:
    path = request_dir / "request.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TokenwalkError(f"{path.name}: cannot read the request's settings ({error})") from None


# ----------------------------------------------------------------- the request's tokens

@lru_cache(maxsize=2)
def _tokenizer(model_file: str):
    from tokenwalk.text.tokenizer import load_tokenizer

    path = ROOT / model_file
    if not path.is_file():
        raise TokenwalkError(f"content/request/request.json: tokenizer_model_file {model_file}: no such file "
                             "(run `make setup` to fetch it)")
    return load_tokenizer(path)


def _chat_text(system: str, user: str) -> tuple[str, str]:
    """The request flattened by the ChatML template (Qwen's and SmolLM2's family); (text, how)."""
    from tokenwalk.text.chat_template import render_chat

    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return render_chat(None, messages, add_generation_prompt=True), "tokenwalk.text.chat_template (ChatML)"


@lru_cache(maxsize=4)
def _request_tokens(request_dir: str) -> dict:
    """Token counts of the request files (cached per process: the files do not change during a build)."""
    folder = Path(request_dir)
    cfg = _request_config(folder)
    read = lambda key: (folder / cfg[key]).read_text(encoding="utf-8").strip()  # noqa: E731
    system, history, question = read("system_prompt_file"), read("history_file"), read("question_file")
    user = history + "\n\n" + question
    text, template_source = _chat_text(system, user)
    tok = _tokenizer(cfg["tokenizer_model_file"])
    return {
        "system": system, "history": history, "question": question, "chat_text": text,
        "template_source": template_source,
        "history_tokens": len(tok.encode(history, parse_special=False)),
        "system_tokens": len(tok.encode(system, parse_special=False)),
        "question_tokens": len(tok.encode(question, parse_special=False)),
        "prompt_tokens": len(tok.encode(text, parse_special=True)),
        "history_chars": len(history),
        "tokenizer_name": cfg.get("tokenizer_model_name", "the model"),
        "tokenizer_vocab": tok.vocab_size,
    }


def _shortened_chat_text(text: str, history: str, keep_head: int = 8, keep_tail: int = 3) -> str:
    """The flattened request with the history cut to its first and last lines (for figure 2)."""
    lines = history.splitlines()
    if len(lines) <= keep_head + keep_tail:
        return text
    cut = len(lines) - keep_head - keep_tail
    short = "\n".join(lines[:keep_head] + [f"[... {cut} more lines of the record ...]"] + lines[-keep_tail:])
    return text.replace(history, short)


# ----------------------------------------------------------------- groups of names

def _request_group(n: dict, request_dir: Path) -> None:
    from tokenwalk.physics.chunked_prefill import chunk_count
    from tokenwalk.physics.roofline import token_passes_without_cache

    cfg = _request_config(request_dir)
    t = _request_tokens(str(request_dir))
    n["request_model"] = cfg["model"]
    n["request_machine"] = cfg["machine"]
    n["request_question"] = t["question"]
    n["request_history_tokens"] = t["history_tokens"]
    n["request_system_tokens"] = t["system_tokens"]
    n["request_question_tokens"] = t["question_tokens"]
    n["request_prompt_tokens"] = t["prompt_tokens"]
    n["request_output_tokens"] = data_refs.resolve(cfg["output_tokens"], "content/request/request.json")
    n["request_num_ctx"] = data_refs.resolve(cfg["num_ctx"], "content/request/request.json")
    n["request_chunk_tokens"] = data_refs.resolve(cfg["chunk_tokens"], "content/request/request.json")
    n["request_kv_type"] = cfg.get("kv_type", "f16")
    n["token_count_tokenizer"] = t["tokenizer_name"]
    n["token_count_note"] = f"a vocabulary of {t['tokenizer_vocab']:,} entries"
    n["token_count_vocab"] = t["tokenizer_vocab"]
    n["request_chars_per_token"] = t["history_chars"] / t["history_tokens"]
    n["chat_template_text"] = _shortened_chat_text(t["chat_text"], t["history"])
    n["chat_template_full_text"] = t["chat_text"]
    n["chat_template_source"] = t["template_source"]
    n["request_prefill_chunks"] = chunk_count(n["request_prompt_tokens"], n["request_chunk_tokens"])
    # Without a KV cache each new token reruns the network over everything before it.
    p, o = n["request_prompt_tokens"], n["request_output_tokens"]
    n["no_cache_token_passes_m"] = token_passes_without_cache(p, o) / 1e6
    n["with_cache_token_passes"] = p + o



def _specs() -> dict:
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.specs.model import load_model

    return {
        "qwen": load_model("qwen3.6-35b-a3b"), "dense27": load_model("qwen3.8-27b"),
        "llama70": load_model("llama3.1-70b"), "d7": load_model("dense-7b-fp16"),
        "gpt3": load_model("gpt3-175b"), "laptop": load_machine("laptop-860m"),
        "h100": load_machine("h100-sxm"), "rtx5090": load_machine("rtx-5090"),
        "rtx5080": load_machine("rtx-5080"), "m4max": load_machine("m4-max"),
    }


def _words(k: int) -> str:
    """Small counts in words, as prose writes them."""
    names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
             "eleven", "twelve"]
    return names[k] if 0 <= k < len(names) else f"{k:,}"


def _and_list(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _models_group(n: dict, s: dict) -> None:
    """Sizes of the models and machines, straight from their presets."""
    from tokenwalk.physics.attention import softmaxes_per_decode_step
    from tokenwalk.gguf.ggml_types import bits_per_weight
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



def _toy_group(n: dict, s: dict, c: dict, request_dir: Path) -> None:
    """Hand-written toy numbers of the figures, through the toy-math modules."""
    from tokenwalk.physics.attention import dot, toy_attention_row, toy_causal_grid
    from tokenwalk.text.bpe import toy_tokenizer
    from tokenwalk.gguf.ggml_types import bits_per_weight
    from tokenwalk.physics.moe import expected_distinct_experts
    from tokenwalk.physics.quantization import FORMAT_BITS_PER_WEIGHT, level_range, to_fp16, toy_quant_block
    from tokenwalk.physics.sampling import toy_sampling
    from article.toys import load_toy

    n["toy_dot_x"], n["toy_dot_w"] = c["toy_dot_x"], c["toy_dot_w"]
    n["toy_dot_value"] = dot(c["toy_dot_x"], c["toy_dot_w"])

    paragraph = (request_dir / "tokenizer-paragraph.txt").read_text(encoding="utf-8")
    tok = toy_tokenizer(paragraph)
    n["toy_bpe_merges"] = tok["n_merges"]
    n["toy_bpe_base_symbols"] = tok["base_symbols"]
    n["toy_bpe_vocab"] = tok["counts"]["vocabulary"]
    n["toy_sentence"] = tok["sentence"]
    n["toy_sentence_chars"] = tok["counts"]["characters"]
    n["toy_sentence_bytes"] = tok["counts"]["utf8_bytes"]
    n["toy_sentence_words"] = tok["counts"]["words"]
    n["toy_sentence_tokens"] = tok["counts"]["tokens"]

    row = toy_attention_row()
    words, q = row["sentence"], row["query_token"]
    live = [w for w in row["weights"][:q]]
    top = max(range(len(live)), key=live.__getitem__)
    n["attn_sentence"] = " ".join(words)
    n["attn_query_token"] = q
    n["attn_query_word"] = words[q - 1]
    n["attn_masked_word"] = words[q] if q < len(words) else ""
    n["attn_top_word"] = words[top]
    n["attn_top_weight"] = live[top]
    n["attn_value_width"] = row["value_width"]

    n["decode_head_strip_numbers"] = len(load_toy("decode_head")["query"])  # figure 7 draws that many

    grid = toy_causal_grid()
    n["mask_sentence"] = " ".join(grid["sentence"])
    n["mask_size"] = len(grid["sentence"])
    n["mask_step_token"] = grid["step_adds_token"]
    n["mask_new_word"] = grid["sentence"][grid["step_adds_token"] - 1]

    sm = toy_sampling()
    temps = sm["temperatures"]
    cands = sm["candidates"]
    n["sampling_context"] = sm["context"]
    n["sampling_candidates"] = cands
    n["sampling_candidate_count_words"] = _words(len(cands))
    n["sampling_top_word"], n["sampling_last_word"] = cands[0], cands[-1]
    n["sampling_top_logit"], n["sampling_last_logit"] = sm["logits"][0], sm["logits"][-1]
    n["sampling_temperatures"] = temps
    n["sampling_t_low"], n["sampling_t_high"] = min(temps), max(temps)
    n["sampling_p_t1"] = sm["probs"][str(sm["top_p_temperature"])]
    n["sampling_p_tlow"] = sm["probs"][str(min(temps))]
    n["sampling_p_thigh"] = sm["probs"][str(max(temps))]
    n["sampling_top_p"] = sm["top_p"]
    n["sampling_top_p_temperature"] = sm["top_p_temperature"]
    n["sampling_top_p_kept_words"] = _and_list(f'"{cands[i]}"' for i in sm["top_p_kept"])
    n["sampling_top_p_kept_mass"] = sm["top_p_kept_mass"]

    qb = toy_quant_block()
    n["quant_bit_widths"] = qb["bit_widths"]
    n["quant_error_share"] = {b: blk["mean_error_share"] for b, blk in qb["blocks"].items()}
    n["quant_error_4bit"] = qb["blocks"]["4"]["mean_error_share"]
    n["quant_error_2bit"] = qb["blocks"]["2"]["mean_error_share"]
    n["quant_block_size"] = len(qb["weights"])
    n["quant_bits_high"], n["quant_bits_low"] = max(qb["bit_widths"]), min(qb["bit_widths"])
    n["quant_bits_q4"] = 4  # the Q4_0 width the text discusses
    n["quant_level_min_4bit"], n["quant_level_max_4bit"] = level_range(n["quant_bits_q4"])
    n["bpw_f16"] = bits_per_weight("F16")
    n["bpw_q4_0"] = FORMAT_BITS_PER_WEIGHT["Q4_0"]
    n["bpw_q8_0"] = FORMAT_BITS_PER_WEIGHT["Q8_0"]
    n["bpw_q4_k"] = FORMAT_BITS_PER_WEIGHT["Q4_K"]
    n["bpw_q6_k"] = FORMAT_BITS_PER_WEIGHT["Q6_K"]
    n["fp16_of_tenth"] = to_fp16(0.1)

    qwen = s["qwen"]
    n["experts_woken_by_chunk"] = expected_distinct_experts(
        n["request_chunk_tokens"], qwen.expert_count, qwen.expert_used_count)


def _citations_group(n: dict, c: dict, sc: dict) -> None:
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
    for key, value in sc.items():
        n[f"sc_{key}"] = value


def _measurements_group(n: dict, meas: dict) -> None:
    """The author's laptop measurements (data/measurements/laptop.json), as measured."""
    for key, value in meas.items():
        n[key] = value
    n["system_apps_gb"] = meas["system_and_apps_bytes"] / GB
    n["mtp_on_t07_tok_s_low"] = min(meas["mtp_on_t07_tok_s"])
    n["mtp_on_t07_tok_s_high"] = max(meas["mtp_on_t07_tok_s"])
    n["prefix_cache_tok_s_low"] = min(meas["prefix_cache_tok_s"])
    n["prefix_cache_tok_s_high"] = max(meas["prefix_cache_tok_s"])
    n["mtp_t_low"], n["mtp_t_high"] = min(meas["mtp_temperatures"]), max(meas["mtp_temperatures"])
    n["mtp_t0_gain_share"] = meas["mtp_on_t0_tok_s"] / meas["mtp_off_t0_tok_s"] - 1


def _engine_group(n: dict) -> None:
    """The machine that built the page, measured by `tokenwalk measure` (data/measurements/
    engine.json): every value as `engine_<name>`, plus the step times that put its decode
    speed beside its bandwidth. Without the file `n.engine` is None and the chapters say the
    machine has not been measured (never a build failure)."""
    from tokenwalk.specs.machine import MEASURED_MACHINE, engine_measurements, measured_model
    from tokenwalk.physics.roofline import memory_time_s

    data = engine_measurements()
    if data is None:
        n["engine"] = None
        return
    try:
        values = {k: v["value"] for k, v in data["values"].items()}
    except (KeyError, TypeError, AttributeError):
        raise TokenwalkError("tokenwalk/data/measurements/engine.json: values: each entry needs a 'value'") from None
    n["engine"] = {"what": data.get("what", ""), "where": data.get("where", ""), "how": data.get("how", ""),
                   "machine": MEASURED_MACHINE}
    for key, value in values.items():
        n[f"engine_{key}"] = value
    n["engine_when"] = data.get("when", "")
    n["engine_model_file"] = data.get("model", "")
    try:
        model = measured_model(n["engine_model_file"])
        n["engine_model"] = model.title or n["engine_model_file"]
        n["engine_model_layers"] = model.layers
    except TokenwalkError:
        n["engine_model"], n["engine_model_layers"] = n["engine_model_file"], None
    step_s = 1 / values["decode_tok_s"]
    n["engine_decode_step_ms"] = step_s * 1e3
    # What one decode step would last if it only streamed its weights at the measured bandwidth.
    n["engine_weights_step_ms"] = memory_time_s(values["bytes_read_per_token"], values["measured_bandwidth_gbs"]) * 1e3
    # ... and with the keys and values of the context read too (fp16, at the mean decode position)
    n["engine_weights_kv_step_ms"] = memory_time_s(values["bytes_read_per_token"] + values.get("kv_bytes_read_per_token", 0),
                                                   values["measured_bandwidth_gbs"]) * 1e3
    n["engine_bytes_read_per_token_mb"] = values["bytes_read_per_token"] / 1e6
    if "kv_bytes_read_per_token" in values:
        n["engine_kv_bytes_read_per_token_mb"] = values["kv_bytes_read_per_token"] / 1e6
    n["engine_prefill_ms_per_token"] = 1e3 / values["prefill_tok_s"]
    if "memory_bytes" in values:
        n["engine_memory_gb"] = values["memory_bytes"] / GB


def _hardware_group(n: dict, s: dict, sc: dict) -> None:
    """The H100 example (dense 7B in fp16) on the roofline: steps, phases, batching, chunks, KV."""
    from tokenwalk.physics.batching import batch_decode_step, max_users_same_step
    from tokenwalk.physics.chunked_prefill import chunked_prefill, free_ride_tokens, mixed_step, separate_steps
    from tokenwalk.physics.kv_cache import kv_bytes_per_token
    from tokenwalk.physics.roofline import (balance_point_tokens, compute_time_s, decode_ceiling_tok_s, decode_time_s,
                           flops_per_token, layer_step_time, machine_ops_per_byte, matrix_bytes,
                           memory_time_s, prefill_time_s, step_time, tile_bytes, tile_ops, weights_bytes)
    from tokenwalk.physics.kv_cache import kv_cache_bytes
    from tokenwalk.specs.machine import memory_ladder

    d7, h100, qwen = s["d7"], s["h100"], s["qwen"]
    one = step_time(d7, h100, 1)
    n["d7_step_memory_ms"] = one.memory_s * 1e3
    n["d7_compute_per_token_ms"] = compute_time_s(flops_per_token(d7), h100.fp16_tflops) * 1e3
    n["d7_flops_per_token_g"] = flops_per_token(d7) / 1e9
    n["d7_decode_sm_idle_share"] = 1 - one.sm_busy_share
    n["d7_decode_tok_s"] = 1 / one.step_s
    n["balance_tokens_fp16"] = balance_point_tokens(h100, d7.bits_per_weight / 8)
    n["balance_tokens_4bit"] = balance_point_tokens(h100, 0.5)
    n["h100_ops_per_byte"] = machine_ops_per_byte(h100)
    bal = step_time(d7, h100, round(n["balance_tokens_fp16"]))
    n["d7_balance_step_ms"] = bal.step_s * 1e3
    n["d7_balance_compute_ms"] = bal.compute_s * 1e3
    pre_tokens = sc["h100_example_prompt_tokens"]
    pre = step_time(d7, h100, pre_tokens)
    n["d7_prefill_tokens"] = pre_tokens
    n["d7_prefill_step_ms"] = pre.step_s * 1e3
    n["d7_prefill_tok_s"] = pre.tokens_per_s
    n["d7_decode_vs_prefill_cost_per_token"] = pre.tokens_per_s / one.tokens_per_s
    layer = layer_step_time(d7, h100, pre_tokens)  # figure 17's execution level
    n["d7_layer_memory_ms"] = layer.memory_s * 1e3
    n["d7_layer_compute_ms"] = layer.compute_s * 1e3
    # tiles
    rows = sc["tile_rows"]
    bpw = d7.bits_per_weight / 8
    n["tile_rows"] = rows
    n["tile_kb"] = tile_bytes(rows, rows, bpw) / 1024  # KB as shared memory is counted (1,024 bytes)
    n["tile_ops_decode"] = tile_ops(1, rows, rows)
    n["tile_ops_prefill"] = tile_ops(sc["tile_prefill_tokens"], rows, rows)
    n["tile_prefill_tokens"] = sc["tile_prefill_tokens"]
    n["d7_layer_mb"] = layer_step_time(d7, h100, 1).bytes_moved / 1e6
    n["d7_wq_mb"] = matrix_bytes(d7.embedding_length, d7.embedding_length, bpw) / 1e6
    n["d7_head_slice_mb"] = matrix_bytes(d7.embedding_length, d7.head_dim, bpw) / 1e6
    n["h100_on_chip_mb"] = n["h100_on_chip_bytes"] / 1e6
    n["h100_on_chip_share"] = n["h100_on_chip_bytes"] / d7.size_bytes
    # the memory ladder: time to move the 7B over each rung that has a bandwidth
    ladder = []
    for rung in memory_ladder():
        ladder.append({"name": rung.name, "bandwidth_gbs": rung.bandwidth_gbs,
                       "capacity": rung.capacity_label,
                       "move_s": memory_time_s(d7.size_bytes, rung.bandwidth_gbs) if rung.bandwidth_gbs else None})
    n["ladder"] = ladder
    by_role = {r.role: r for r in memory_ladder()}
    n["nvme_gbs"] = by_role["disk"].bandwidth_gbs
    n["pcie_gbs"] = by_role["host"].bandwidth_gbs
    n["d7_nvme_s"] = memory_time_s(d7.size_bytes, by_role["disk"].bandwidth_gbs)
    n["d7_pcie_ms"] = memory_time_s(d7.size_bytes, by_role["host"].bandwidth_gbs) * 1e3
    n["offload_slowdown"] = n["d7_pcie_ms"] / n["d7_step_memory_ms"]
    # decode ceilings
    n["d7_ceiling_tok_s"] = decode_ceiling_tok_s(d7, h100)
    ceilings = []
    for params in sc["bigger_dense_params"]:  # a dense fp16 model of another size (if it fit)
        bigger = dataclasses.replace(d7, name=f"dense-{params / 1e9:g}b-fp16", params=params,
                                     active_params=params, size_bytes=weights_bytes(params, d7.bits_per_weight))
        ceilings.append(decode_ceiling_tok_s(bigger, h100))
    n["d13_ceiling_tok_s"], n["d70_ceiling_tok_s"] = ceilings
    n["bigger_dense_params_b"] = [p / 1e9 for p in sc["bigger_dense_params"]]
    n["thinking_tokens"] = sc["thinking_tokens"]
    n["thinking_s"] = sc["thinking_tokens"] / n["d7_ceiling_tok_s"]
    # batching
    users = sc["batch_users"]
    b = batch_decode_step(d7, h100, users)
    n["batch_users"] = users
    n["batch_step_ms"] = b.step_s * 1e3
    n["batch_compute_ms"] = b.compute_s * 1e3
    n["batch_server_tok_s"] = b.server_tok_s
    n["batch_sm_busy_share"] = b.sm_busy_share
    n["batch_user_tok_s"] = b.user_tok_s
    n["batch_max_users"] = max_users_same_step(d7, h100)
    # prefill with its quadratic attention term
    long = sc["h100_long_prompt_tokens"]
    n["long_prompt_tokens"] = long
    n["d7_long_weights_ms"] = step_time(d7, h100, long).step_s * 1e3
    n["d7_long_total_s"] = prefill_time_s(d7, h100, long)
    n["d7_long_attention_share"] = n["d7_long_total_s"] * 1e3 / n["d7_long_weights_ms"] - 1
    n["d7_example_attention_share"] = prefill_time_s(d7, h100, pre_tokens) * 1e3 / n["d7_prefill_step_ms"] - 1
    out = sc["h100_example_output_tokens"]
    n["d7_example_output_tokens"] = out
    answer_s = decode_time_s(d7, h100, out, pre_tokens)
    n["d7_example_answer_s"] = answer_s
    n["d7_example_decode_share"] = answer_s / (answer_s + prefill_time_s(d7, h100, pre_tokens))
    # chunked prefill
    du, pt = sc["chunked_decode_users"], sc["chunked_prompt_tokens"]
    n["chunk_users"] = du
    dec = step_time(d7, h100, du)
    n["chunk_users_step_ms"] = dec.step_s * 1e3
    n["chunk_users_compute_ms"] = dec.compute_s * 1e3
    n["chunk_users_sm_share"] = dec.sm_busy_share
    n["chunk_free_ride_tokens"] = free_ride_tokens(d7, h100, du)
    n["chunk_mixed_tokens"] = pt
    n["chunk_mixed_ms"] = mixed_step(d7, h100, du, pt).step_s * 1e3
    sep = separate_steps(d7, h100, du, pt)
    n["chunk_separate_decode_ms"] = sep.decode.step_s * 1e3
    n["chunk_separate_prefill_ms"] = sep.prefill.step_s * 1e3
    n["chunk_separate_ms"] = sep.total_s * 1e3
    cp = chunked_prefill(d7, h100, long, sc["long_prompt_chunk_tokens"])
    n["long_chunk_tokens"] = sc["long_prompt_chunk_tokens"]
    n["long_chunks"] = len(cp.chunks)
    n["long_chunks_memory_ms"] = cp.memory_s * 1e3
    n["long_chunks_compute_ms"] = cp.compute_s * 1e3
    # KV cache in bytes
    n["kv_bytes_per_token_qwen"] = kv_bytes_per_token(qwen)
    n["kv_bytes_per_token_d7"] = kv_bytes_per_token(d7)
    n["kv_d7_over_qwen"] = n["kv_bytes_per_token_d7"] / n["kv_bytes_per_token_qwen"]
    n["kv_qwen_without_gqa_factor"] = qwen.head_count // qwen.head_count_kv
    n["kv_qwen_without_hybrid_factor"] = qwen.layers // qwen.kv_layers
    growth = []
    for ctx in sc["kv_growth_contexts"]:
        growth.append({"context": ctx, "kv_gb": kv_cache_bytes(d7, ctx) / GB,
                       "tok_s": decode_ceiling_tok_s(d7, h100, ctx)})
    n["kv_growth"] = growth
    end = pre_tokens + out
    n["kv_example_context"] = end
    n["kv_example_step_gb"] = (d7.bytes_read_per_token + kv_cache_bytes(d7, end)) / GB
    n["kv_example_tok_s"] = decode_ceiling_tok_s(d7, h100, end)
    n["kv_long_gb"] = kv_cache_bytes(d7, long) / GB
    n["kv_long_tok_s"] = decode_ceiling_tok_s(d7, h100, long)
    n["mistral_kv_factor"] = d7.head_count // sc["mistral_kv_heads"]



def _laptop_group(n: dict, s: dict, c: dict, sc: dict, meas: dict) -> None:
    """The request on the laptop: the walk, the memory budget, the tricks, the shares."""
    from tokenwalk.physics.kv_cache import kv_bytes_per_element, kv_cache_bytes, kv_reservation_bytes
    from tokenwalk.timing.llama_bench import (bandwidth_share, published_bandwidth_shares, published_median_bandwidth_share,
                              published_run_count)
    from tokenwalk.physics.memory_budget import memory_budget
    from tokenwalk.physics.moe import max_distinct_experts
    from tokenwalk.physics.roofline import (achieved_tflops, balance_point_tokens, decode_ceiling_tok_s, flops_per_token,
                           machine_ops_per_byte, memory_time_s, model_ops_per_byte, step_time, weights_bytes)
    from tokenwalk.physics.speculative import expected_tokens_per_round, model_round_cost
    from article.toys import load_toy
    from tokenwalk.walk import Request, walk_request

    qwen, d27, laptop = s["qwen"], s["dense27"], s["laptop"]
    prompt, out = n["request_prompt_tokens"], n["request_output_tokens"]
    w = walk_request(qwen, laptop, Request(prompt_tokens=prompt, output_tokens=out, num_ctx=n["request_num_ctx"],
                                           chunk_tokens=n["request_chunk_tokens"], kv_type=n["request_kv_type"]))
    n["walk"] = w.to_dict()
    n["request_load_s"] = w.load_s
    n["request_prefill_s"] = w.prefill_s
    n["request_ttft_s"] = w.ttft_s
    n["request_prefill_tok_s"] = w.prefill_tok_s
    n["request_decode_s"] = w.decode_s
    n["request_decode_tok_s"] = w.decode_tok_s
    n["request_total_s"] = w.total_s
    stages = {x["name"]: x for x in n["walk"]["stages"]}
    dstage = stages["decode"]
    n["request_prefill_chunks"] = stages["prefill"].get("chunk_count", n["request_prefill_chunks"])
    n["request_step_gb"] = dstage["first_step_bytes"] / GB
    n["request_step_ms"] = dstage["first_step_s"] * 1e3
    n["request_kv_used_mb"] = w.kv_used_bytes / 1e6
    n["request_kv_prompt_mb"] = kv_cache_bytes(qwen, prompt) / 1e6
    n["request_history_kv_mb"] = kv_cache_bytes(qwen, n["request_history_tokens"]) / 1e6
    n["request_flops_t"] = step_time(qwen, laptop, prompt).flops / 1e12
    n["qwen_flops_per_token_g"] = flops_per_token(qwen) / 1e9
    # envelope: the simple divisions, with the measured speeds
    n["env_ttft_s"] = prompt / meas["prefill_tok_s_moe"]
    n["env_answer_s"] = out / meas["decode_tok_s_moe"]
    n["laptop_useful_tflops"] = achieved_tflops(meas["prefill_tok_s_moe"], qwen)
    n["env_prefill_tok_s"] = n["laptop_useful_tflops"] * 1e12 / flops_per_token(qwen)
    # ceilings and shares
    n["qwen_ceiling_tok_s"] = decode_ceiling_tok_s(qwen, laptop)
    n["dense27_ceiling_tok_s"] = decode_ceiling_tok_s(d27, laptop)
    n["moe_ceiling_share"] = meas["decode_tok_s_moe"] / n["qwen_ceiling_tok_s"]
    n["laptop_share_moe"] = bandwidth_share(meas["decode_tok_s_moe"], qwen.bytes_read_per_token, laptop.bandwidth_gbs)
    n["laptop_share_dense"] = bandwidth_share(meas["decode_tok_s_dense"], d27.size_bytes, laptop.bandwidth_gbs)
    n["published_share_median"] = published_median_bandwidth_share()
    n["published_run_count"] = published_run_count()
    runs = published_bandwidth_shares()
    slowest = min(runs, key=lambda r: r["bandwidth_gbs"])
    fastest = max(runs, key=lambda r: r["bandwidth_gbs"])
    n["published_slowest_machine"] = slowest["machine"].split(" (")[0]
    n["published_slowest_gbs"] = slowest["bandwidth_gbs"]
    n["published_fastest_machine"] = fastest["machine"].split(" (")[0]
    n["published_fastest_gbs"] = fastest["bandwidth_gbs"]
    n["dense_vs_moe_speed_ratio"] = meas["decode_tok_s_moe"] / meas["decode_tok_s_dense"]
    n["laptop_ops_per_byte"] = machine_ops_per_byte(laptop)
    n["qwen_decode_ops_per_byte"] = model_ops_per_byte(qwen)
    n["qwen_bytes_per_weight"] = qwen.bytes_read_per_token / qwen.active_params
    n["laptop_balance_tokens_q4km"] = balance_point_tokens(laptop, qwen.bits_per_weight / 8)
    n["dense_fit_gb"] = sc["dense_fit_laptop_bytes"] / GB
    n["dense_fit_ceiling_tok_s"] = 1 / memory_time_s(sc["dense_fit_laptop_bytes"], laptop.bandwidth_gbs)
    n["small_model_params_b"] = sc["small_moe_params"] / 1e9
    n["small_model_q4km_gb"] = weights_bytes(sc["small_moe_params"], qwen.bits_per_weight) / GB
    n["compute_unit_ratio_5090"] = s["rtx5090"].compute_units / laptop.compute_units
    n["bandwidth_ratio_5090"] = s["rtx5090"].bandwidth_gbs / laptop.bandwidth_gbs
    # memory budget: the context Ollama chose vs the one set by hand
    small = memory_budget(qwen, laptop, n["request_num_ctx"])
    big = memory_budget(qwen, laptop, meas["ollama_default_num_ctx"])
    n["budget_small_kv_mb"] = small.kv_cache_bytes / 1e6
    n["budget_small_free_gb"] = small.free_bytes / GB
    n["budget_big_kv_gb"] = big.kv_cache_bytes / GB
    n["budget_big_free_gb"] = big.free_bytes / GB
    n["budget_big_kv_all_layers_gb"] = kv_reservation_bytes(qwen, meas["ollama_default_num_ctx"],
                                                            kv_layer_count=qwen.layers) / GB
    n["budget_conversation_tokens"] = prompt + out
    n["kv_q8_over_f16"] = kv_bytes_per_element("q8_0") / kv_bytes_per_element("f16")
    # speculative decoding
    spec = load_toy("speculative")
    n["spec_alpha"], n["spec_gamma"] = spec["alpha"], spec["gamma"]
    n["spec_draft_params_b"] = spec["draft_params"] / 1e9
    n["spec_tokens_per_round"] = expected_tokens_per_round(spec["alpha"], spec["gamma"])
    dense_round, moe_round = model_round_cost(d27), model_round_cost(qwen)
    n["spec_dense_speedup"] = dense_round.speedup
    n["spec_moe_speedup"] = moe_round.speedup
    n["spec_moe_verify_over_step"] = moe_round.verify_bytes / moe_round.step_bytes
    n["spec_check_max_experts"] = max_distinct_experts(spec["gamma"] + 1, qwen.expert_count, qwen.expert_used_count)
    # prefix caching, retrieval, lifecycle
    n["prefix_recompute_tokens"] = sc["chat_turn_tokens"]
    n["prefix_recompute_s"] = sc["chat_turn_tokens"] / meas["prefill_tok_s_moe"]
    n["prefix_restore_s"] = memory_time_s(kv_cache_bytes(qwen, n["request_history_tokens"]), c["ssd_read_gbs_laptop"])
    n["rag_added_tokens"] = sc["rag_passages"] * sc["rag_passage_tokens"]
    n["rag_added_s"] = n["rag_added_tokens"] / meas["prefill_tok_s_moe"]
    n["rag_passages"], n["rag_passage_tokens"] = sc["rag_passages"], sc["rag_passage_tokens"]


def _settings_group(n: dict) -> None:
    data = data_refs.read_data_json("cited/article.json")["settings"]
    rows = []
    for row in data["rows"]:
        value = row["value"]
        if isinstance(value, dict) and "from_request" in value:
            value = str(n["request_" + value["from_request"]])
        rows.append({"name": row["name"], "value": value, "why": row["why"].format_map(n)})
    n["settings_rows"] = rows


def article_numbers(request_dir: str | Path | None = None) -> dict:
    """The namespace `n` of the article (see the module docstring)."""
    request_dir = Path(request_dir) if request_dir is not None else REQUEST_DIR
    n: dict = {}
    specs = _specs()
    cited = _values("cited/article.json")
    scenarios = _scenarios()
    meas = _values("measurements/laptop.json")
    _request_group(n, request_dir)
    _models_group(n, specs)
    _measurements_group(n, meas)
    _engine_group(n)
    _citations_group(n, cited, scenarios)
    _toy_group(n, specs, cited, request_dir)
    _hardware_group(n, specs, scenarios)
    _laptop_group(n, specs, cited, scenarios, meas)
    _settings_group(n)
    n["ref"] = references()
    from .prose_numbers_c import add as _add_c; _add_c(n)
    from .prose_numbers_b import add as _add_b; _add_b(n)
    from .prose_numbers_d import add as _add_d; _add_d(n)
    return n
