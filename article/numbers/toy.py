"""toy_*, attn_*, mask_*, sampling_*, quant_*, bpw_*: the figures' hand-written toys, through
article.toys and tokenwalk's functions."""

from __future__ import annotations

from collections import ChainMap

from article.numbers._words import and_list as _and_list
from article.numbers._words import words as _words

PREFIXES = ("toy_", "attn_", "decode_head_", "mask_", "sampling_", "quant_", "bpw_", "fp16_", "experts_")
NEEDS = ("request",)


def names(src, n) -> dict:
    """Hand-written toy numbers of the figures, through the toy-math modules."""
    sc, c = src.scenario, src.cited
    s = sc.presets
    out: dict = {}
    n = ChainMap(out, n)
    from article.toys import load_toy, toy_attention_row, toy_causal_grid, toy_quant_block, toy_sampling, toy_tokenizer
    from tokenwalk.gguf.ggml_types import bits_per_weight
    from tokenwalk.physics.attention import dot
    from tokenwalk.physics.moe import expected_distinct_experts
    from tokenwalk.physics.quantization import FORMAT_BITS_PER_WEIGHT, level_range, to_fp16

    n["toy_dot_x"], n["toy_dot_w"] = c["toy_dot_x"], c["toy_dot_w"]
    n["toy_dot_value"] = dot(c["toy_dot_x"], c["toy_dot_w"])

    tok = toy_tokenizer(sc.request.tokenizer_paragraph)
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
    n["decode_head_step"] = _decode_head_step()

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
    n["quant_levels_q4"] = n["quant_level_max_4bit"] - n["quant_level_min_4bit"] + 1  # values a Q4 integer takes
    n["bpw_f16"] = bits_per_weight("F16")
    n["bpw_q4_0"] = FORMAT_BITS_PER_WEIGHT["Q4_0"]
    n["bpw_q8_0"] = FORMAT_BITS_PER_WEIGHT["Q8_0"]
    n["bpw_q4_k"] = FORMAT_BITS_PER_WEIGHT["Q4_K"]
    n["bpw_q6_k"] = FORMAT_BITS_PER_WEIGHT["Q6_K"]
    n["fp16_of_tenth"] = to_fp16(0.1)

    qwen = s["qwen"]
    n["experts_woken_by_chunk"] = expected_distinct_experts(
        n["request_chunk_tokens"], qwen.expert_count, qwen.expert_used_count)
    return out


def _decode_head_step() -> dict:
    """The toy decode step figures 7 (decode-head) and 8 (kv-cache) draw: the tokens (the new one
    last), their scores (those of the attention-row figure), the softmax weights and the head's
    output (tokenwalk.physics.attention), and the toy query, keys and values
    (article/data/toy/decode_head.json)."""
    from article.toys import load_toy, toy_attention_row
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.physics.attention import attention_row

    toy = load_toy("decode_head")
    row, count = toy_attention_row(toy["scores_from"]), int(toy["new_token"])
    for field in ("keys", "values"):
        if len(toy[field]) != count:
            raise TokenwalkError(f"decode_head.json: {field}: {len(toy[field])} rows, expected {count} (new_token)")
    scores = row["scores"][:count]
    weights, output = attention_row(scores, toy["values"])
    return {"tokens": row["sentence"][:count], "scores": scores, "weights": weights, "output": output,
            "query": toy["query"], "keys": toy["keys"], "values": toy["values"]}
