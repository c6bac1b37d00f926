"""request_*, walk, token_count_*, chat_template_*: the article's request, its token counts (a
real tokenizer over content/request/), its walk on the laptop (tokenwalk.walk: every stage's
time and bytes) and what a cache saves on it.

The counts are made with request.json's count_vocab_file, llama.cpp's test vocabulary for the
qwen35 pre-tokenizer: the closest to Qwen3.6's own that the project can read (Qwen3.6's ships
only inside its 21.7 GB model file). The engine's measured runs (article/numbers/engine.py)
keep the counts of the models they ran, made by those models' own tokenizers."""

from __future__ import annotations

from collections import ChainMap
from functools import lru_cache

from article import _data
from tokenwalk.errors import TokenwalkError


@lru_cache(maxsize=2)
def _tokenizer(vocab_file: str):
    from tokenwalk.text.tokenizer import load_tokenizer

    path = _data.ROOT / vocab_file
    if not path.is_file():
        raise TokenwalkError(f"content/request/request.json: count_vocab_file {vocab_file}: no such file "
                             "(run `make setup` to fetch it)")
    return load_tokenizer(path)


def _chat_text(system: str, user: str) -> tuple[str, str]:
    """The request flattened by the ChatML template (Qwen's and SmolLM2's family); (text, how)."""
    from tokenwalk.text.chat_template import render_chat

    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return render_chat(None, messages, add_generation_prompt=True), "tokenwalk.text.chat_template (ChatML)"


@lru_cache(maxsize=4)
def _request_tokens(system: str, history: str, question: str, vocab_file: str) -> dict:
    """Token counts of the request's texts (cached per process: they do not change during a build)."""
    user = history + "\n\n" + question
    text, template_source = _chat_text(system, user)
    tok = _tokenizer(vocab_file)
    return {
        "chat_text": text,
        "template_source": template_source,
        "history_tokens": len(tok.encode(history, parse_special=False)),
        "system_tokens": len(tok.encode(system, parse_special=False)),
        "question_tokens": len(tok.encode(question, parse_special=False)),
        "prompt_tokens": len(tok.encode(text, parse_special=True)),
        "tokenizer_vocab": tok.vocab_size,
        "tokenizer_pre": tok.pre,
    }


def _shortened_chat_text(text: str, history: str, keep_head: int = 8, keep_tail: int = 3) -> str:
    """The flattened request with the history cut to its first and last lines (for figure 2)."""
    lines = history.splitlines()
    if len(lines) <= keep_head + keep_tail:
        return text
    cut = len(lines) - keep_head - keep_tail
    short = "\n".join(lines[:keep_head] + [f"[... {cut} more lines of the record ...]"] + lines[-keep_tail:])
    return text.replace(history, short)


PREFIXES = ("request_", "walk", "token_count_", "chat_template_", "no_cache_", "with_cache_")
NEEDS: tuple[str, ...] = ()
GB = 1e9


def names(src, n) -> dict:
    """The request, its tokens and its walk on the laptop (the scenario's request example)."""
    from tokenwalk.physics.roofline import token_passes_without_cache

    sc = src.scenario
    out: dict = {}
    n = ChainMap(out, n)
    r = sc.request
    t = _request_tokens(r.system, r.history, r.question, r.count_vocab_file)
    n["request_model"] = r.model
    n["request_machine"] = r.machine
    n["request_question"] = r.question
    n["request_history_tokens"] = t["history_tokens"]
    n["request_system_tokens"] = t["system_tokens"]
    n["request_question_tokens"] = t["question_tokens"]
    n["request_prompt_tokens"] = t["prompt_tokens"]
    n["request_output_tokens"] = r.output_tokens
    n["request_num_ctx"] = r.num_ctx
    n["request_chunk_tokens"] = r.chunk_tokens
    n["request_kv_type"] = r.kv_type
    n["token_count_tokenizer"] = r.count_vocab_name
    n["token_count_file"] = r.count_vocab_file.rsplit("/", 1)[-1]
    n["token_count_pre"] = t["tokenizer_pre"]  # the file's tokenizer.ggml.pre: the rule that cuts the text first
    n["token_count_note"] = f"a vocabulary of {t['tokenizer_vocab']:,} entries"
    n["token_count_vocab"] = t["tokenizer_vocab"]
    n["request_chars_per_token"] = len(r.history) / t["history_tokens"]
    n["chat_template_text"] = _shortened_chat_text(t["chat_text"], r.history)
    n["chat_template_full_text"] = t["chat_text"]
    n["chat_template_source"] = t["template_source"]
    _walk(n, sc)
    # Without a KV cache each new token reruns the network over everything before it.
    p, o = n["request_prompt_tokens"], n["request_output_tokens"]
    n["no_cache_token_passes_m"] = token_passes_without_cache(p, o) / 1e6
    n["with_cache_token_passes"] = p + o
    return out


def _walk(n, sc) -> None:
    """The request on the laptop, from disk to last token (tokenwalk.walk): the article's
    request_*_s and request_*_tok_s, and the walk itself (`n.walk`, which the simulator and
    figure 29 draw)."""
    from tokenwalk.physics.kv_cache import kv_cache_bytes
    from tokenwalk.physics.roofline import step_time
    from tokenwalk.walk import Request, walk_request

    qwen, laptop = sc.presets["qwen"], sc.presets["laptop"]
    prompt, out = n["request_prompt_tokens"], n["request_output_tokens"]
    w = walk_request(qwen, laptop, Request(prompt_tokens=prompt, output_tokens=out, num_ctx=n["request_num_ctx"],
                                           chunk_tokens=n["request_chunk_tokens"], kv_type=n["request_kv_type"]))
    n["walk"] = w.to_dict()
    n["request_model_title"] = qwen.title or qwen.name
    n["request_machine_title"] = laptop.title or laptop.name
    n["request_load_s"] = w.load_s
    n["request_prefill_s"] = w.prefill_s
    n["request_ttft_s"] = w.ttft_s
    n["request_prefill_tok_s"] = w.prefill_tok_s
    n["request_decode_s"] = w.decode_s
    n["request_decode_tok_s"] = w.decode_tok_s
    n["request_total_s"] = w.total_s
    stages = {x["name"]: x for x in n["walk"]["stages"]}
    dstage = stages["decode"]
    n["request_prefill_chunks"] = stages["prefill"]["chunk_count"]
    n["request_step_gb"] = dstage["first_step_bytes"] / GB
    n["request_step_ms"] = dstage["first_step_s"] * 1e3
    n["request_kv_used_mb"] = w.kv_used_bytes / 1e6
    n["request_kv_prompt_mb"] = kv_cache_bytes(qwen, prompt) / 1e6
    n["request_history_kv_mb"] = kv_cache_bytes(qwen, n["request_history_tokens"]) / 1e6
    n["request_flops_t"] = step_time(qwen, laptop, prompt).flops / 1e12
