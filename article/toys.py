"""Toy inputs of the drawings (hand-written scores, logits, a block of weights) and the
toy numbers computed from them with tokenwalk's functions.

They live as JSON files in ``article/data/toy/`` so that no drawing code carries a
literal number; each file says that it is a toy and where its numbers come from. The
library functions take the numbers as parameters; this module is where the article's
toys are read and passed to them (the figures and the namespace both call it).
"""

from __future__ import annotations

import math

from article import _data
from tokenwalk.errors import TokenwalkError


def load_toy(name: str) -> dict:
    """The toy data file ``article/data/toy/<name>.json`` as a dict."""
    try:
        return _data.read(f"toy/{name}.json")
    except TokenwalkError as exc:
        raise TokenwalkError(f"article/data/toy/{name}.json: no such toy data file ({exc})") from None


def toy_attention_row(name: str = "attention_row") -> dict:
    """The attention-row figure's numbers: sentence, query_token (1-based), scores (the
    masked keys as -inf), weights (summing to 1) and value_width."""
    from tokenwalk.physics.attention import attention_row, causal_mask

    data = load_toy(name)
    q = data["query_token"]
    scores = causal_mask(data["scores"], q)
    return {"sentence": data["sentence"], "query_token": q, "scores": scores,
            "weights": attention_row(scores), "value_width": data["value_width"]}


def toy_causal_grid(name: str = "causal_mask") -> dict:
    """The causal-mask figure's numbers: sentence, the score triangle and its weights."""
    from tokenwalk.physics.attention import causal_weights

    data = load_toy(name)
    return {"sentence": data["sentence"], "step_adds_token": data["step_adds_token"],
            "scores": data["scores"], "weights": causal_weights(data["scores"])}


def tokenizer_paragraph(name: str = "tokenizer") -> str:
    """The paragraph the toy BPE learns from (its file is named in the toy's settings,
    relative to the repository: content/request/tokenizer-paragraph.txt)."""
    return (_data.ROOT / load_toy(name)["paragraph_file"]).read_text(encoding="utf-8")


def toy_tokenizer(paragraph: str | None = None, name: str = "tokenizer") -> dict:
    """The tokenizer figure's numbers: train on ``paragraph`` (default: the toy's own) with
    the toy's n_merges and cut its sentence. Returns sentence, pieces (text), counts (see
    tokenwalk.text.bpe.count_text), n_merges, base_symbols."""
    from tokenwalk.text.bpe import count_text, train_bpe

    settings = load_toy(name)
    paragraph = tokenizer_paragraph(name) if paragraph is None else paragraph
    tok = train_bpe(paragraph, settings["n_merges"])
    sentence = settings["sentence"]
    return {"sentence": sentence, "pieces": tok.pieces_text(sentence), "counts": count_text(sentence, tok),
            "n_merges": len(tok.merges), "base_symbols": len(tok.base)}


def toy_quant_block(name: str = "quant_block") -> dict:
    """The quantization figure's block quantized at each of its bit widths: weights,
    bit_widths, blocks (bits as text -> QuantizedBlock.to_dict()), formats (bits per weight)."""
    from tokenwalk.physics.quantization import FORMAT_BITS_PER_WEIGHT, quantize_block

    data = load_toy(name)
    weights = data["weights"]
    return {"weights": weights, "bit_widths": data["bit_widths"],
            "blocks": {str(b): quantize_block(weights, b).to_dict() for b in data["bit_widths"]},
            "formats": dict(FORMAT_BITS_PER_WEIGHT)}


def toy_sampling(name: str = "sampling_logits") -> dict:
    """The sampling figure's numbers: candidates, logits, probs (temperature as text ->
    probabilities), the top-p cut at its temperature (kept indices, kept mass, probs)."""
    from tokenwalk.physics.sampling import softmax_with_temperature, top_p, top_p_kept

    data = load_toy(name)
    logits = data["logits"]
    probs = {str(t): softmax_with_temperature(logits, t) for t in data["temperatures"]}
    base = softmax_with_temperature(logits, data["top_p_temperature"])
    kept = top_p_kept(base, data["top_p"])
    return {"context": data["context"], "candidates": data["candidates"], "logits": logits,
            "temperatures": data["temperatures"], "probs": probs, "top_p": data["top_p"],
            "top_p_temperature": data["top_p_temperature"], "top_p_kept": kept,
            "top_p_kept_mass": math.fsum(base[i] for i in kept), "top_p_probs": top_p(base, data["top_p"])}


def speculative() -> dict:
    """The speculative-decoding example's assumptions: alpha, gamma, draft_params."""
    data = load_toy("speculative")
    return {"alpha": data["alpha"], "gamma": data["gamma"], "draft_params": data["draft_params"]}


def model_round_cost(model):
    """tokenwalk.physics.speculative.model_round_cost with the article's assumptions."""
    from tokenwalk.physics.speculative import model_round_cost as cost

    return cost(model, **speculative())
