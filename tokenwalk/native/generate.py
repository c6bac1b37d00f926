"""Generating text with the engine: loading a model with its tokenizer, the chat prompt,
sampling through the core's sampler, and streaming tokens as UTF-8 text.

Paths are given by the caller (the command line chooses defaults). Logits are float32
arrays over the vocabulary; token ids are ints.
"""

from __future__ import annotations

import codecs
import random

import numpy as np

from tokenwalk.text.chat_template import render_chat
from tokenwalk.text.tokenizer import Tokenizer, tokenizer_from_metadata


def load(path, device=None, ctx_tokens=None, chunk_tokens=None):
    """(engine, tokenizer) for the GGUF at ``path``, its header read once. The tokenizer comes
    first, from the header alone: a file whose tokenizer the core does not know is refused
    before any weight is read."""
    from tokenwalk.native.engine import DEFAULT_CHUNK_TOKENS, Engine
    from tokenwalk.native.model_file import read_header

    header = read_header(path)[1]
    tok = tokenizer_from_metadata(dict(header.metadata), source=str(path))
    engine = Engine(path, device=device, ctx_tokens=ctx_tokens, chunk_tokens=chunk_tokens or DEFAULT_CHUNK_TOKENS,
                    header=header)
    return engine, tok


def picker(temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int | None = None):
    """pick(logits) -> token id, through the core's sampler (tokenwalk.physics.sampling).

    Greedy at temperature 0. Otherwise the sampler gets the 1,000 largest logits only when
    no top-k is set: their softmax share left out is below 1e-6 for this kind of model and
    the draw stays a few milliseconds instead of tens.
    """
    from tokenwalk.physics.sampling import sample

    rng = random.Random(seed)
    if temperature <= 0:
        return lambda logits: int(np.argmax(logits))
    keep = top_k if top_k else 1000

    def pick(logits: np.ndarray) -> int:
        idx = np.argpartition(logits, -keep)[-keep:] if keep < len(logits) else np.arange(len(logits))
        idx = idx[np.argsort(-logits[idx], kind="stable")]
        j = sample(logits[idx].astype(float).tolist(), temperature=temperature, top_p=top_p, top_k=0, rng=rng)
        return int(idx[j])

    return pick


class TextStream:
    """Token ids to text as it arrives: holds back bytes of an unfinished UTF-8 character."""

    def __init__(self, tok: Tokenizer, skip_special: bool = True):
        self.tok = tok
        self.skip_special = skip_special
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __call__(self, token: int) -> str:
        if self.skip_special and self.tok.token_types[token] == 3:
            return ""
        return self.decoder.decode(self.tok.token_bytes(token))

    def flush(self) -> str:
        return self.decoder.decode(b"", final=True)


def chat_prompt(tok: Tokenizer, metadata: dict, prompt: str, system: str | None = None) -> str:
    """``prompt`` (and ``system``) in the model's chat template, ready for the assistant's turn."""
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    return render_chat(metadata.get("tokenizer.chat_template"), messages, add_generation_prompt=True)
