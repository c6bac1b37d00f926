"""The SentencePiece-style tokenizer of GGUF files whose ``tokenizer.ggml.model`` is ``llama``
(Llama 1/2, Mistral, Gemma...), as llama.cpp runs it (pure Python).

What the file gives: every token's text (``tokenizer.ggml.tokens``, a space written as
``▁``), a score per token (``tokenizer.ggml.scores``: higher merges first), the token types
(1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte: ``<0x0A>``), the BOS/EOS
ids and the flags ``add_bos_token``, ``add_eos_token`` and ``add_space_prefix``.

Encoding, as llama.cpp's ``llama_vocab::impl::tokenize`` (type SPM) and ``llm_tokenizer_spm``:

1. special tokens are cut out of the text first (tokenwalk.text.special): control tokens
   such as ``<start_of_turn>`` when ``parse_special``, user-defined ones always;
2. each piece of plain text gets a leading space when ``add_space_prefix`` and it opens the
   text or follows a special token, then every space becomes ``▁``;
3. the piece starts as one symbol per character; every adjacent pair whose concatenation is
   a token goes on a heap, best score first, leftmost first on equal scores. The best pair is
   merged, its neighbours' pairs pushed, until no pair is left (the BPE's loop,
   `tokenwalk.text.merge.merge_symbols`, with minus the scores for ranks);
4. each final symbol is its token, or, when no token has its text (a character outside the
   vocabulary), the byte tokens ``<0xNN>`` of its UTF-8 bytes (byte fallback);
5. with ``add_special``: BOS before (``add_bos_token``), EOS after (``add_eos_token``).

Decoding: normal tokens with ``▁`` read as a space, byte tokens as their byte, control and
user-defined tokens as their text; the bytes joined are read as UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tokenwalk.errors import TokenwalkError, printable
from tokenwalk.text import check_text
from tokenwalk.text.merge import merge_symbols
from tokenwalk.text.special import (
    TOKEN_TYPE_BYTE,
    TOKEN_TYPE_CONTROL,
    TOKEN_TYPE_NORMAL,
    TOKEN_TYPE_UNKNOWN,
    TOKEN_TYPE_USER_DEFINED,
    SpecialTokens,
    llamacpp_token_types,
)

SPACE = "\u2581"  # ▁, SentencePiece's visible space


def score_priorities(tokens: list[str], scores: list[float]) -> dict[str, float]:
    """Each token's text -> minus its score (the first id of a text repeated), the priority
    `merge_symbols` merges a pair into that token by: the best score first."""
    out: dict[str, float] = {}
    for text, score in zip(tokens, scores, strict=True):
        out.setdefault(text, -score)
    return out


@dataclass
class SentencePieceTokenizer:
    """SentencePiece-style tokenizer with the vocabulary, scores and flags of one model."""

    tokens: list[str]
    scores: list[float]
    token_types: list[int]
    bos_id: int | None = None
    eos_id: int | None = None
    eot_ids: tuple[int, ...] = ()
    add_bos: bool = True
    add_eos: bool = False
    add_space_prefix: bool = True
    source: str = "GGUF metadata"
    kind: str = "llama"
    _ids: dict = field(default_factory=dict, repr=False)
    _priorities: dict = field(default_factory=dict, repr=False)
    _bytes: list = field(default_factory=list, repr=False)
    _special: SpecialTokens | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self._ids = {}
        for i, t in enumerate(self.tokens):
            self._ids.setdefault(t, i)
        self._priorities = score_priorities(self.tokens, self.scores)
        # byte -> token: "<0xNN>", else the one-character token (llama_vocab::byte_to_token)
        self._bytes = [self._ids.get(f"<0x{b:02X}>", self._ids.get(chr(b)) if b < 0x80 else None) for b in range(256)]
        self._special = SpecialTokens(self.tokens, self.token_types)

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def token_id(self, text: str) -> int | None:
        return self._ids.get(text)

    # -- encoding -----------------------------------------------------------------------
    def _piece_ids(self, text: str) -> list[int]:
        """Token ids of one piece of plain text, spaces already written as ▁."""
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        ids = []
        get = self._ids.get
        for symbol in merge_symbols(text, self._priorities):
            t = get(symbol)
            if t is not None:
                ids.append(t)
                continue
            for b in symbol.encode("utf-8"):
                t = self._bytes[b]
                if t is None:
                    raise TokenwalkError(f"{self.source}: the character {printable(repr(symbol))} is not in the vocabulary and "
                                         f"the byte 0x{b:02X} has no <0x{b:02X}> token to fall back to")
                ids.append(t)
        if len(text) < 64 and len(self._cache) < 100_000:
            self._cache[text] = ids
        return ids

    def encode(self, text: str, parse_special: bool = True, add_special: bool = False) -> list[int]:
        """Token ids of ``text``; ``add_special`` adds BOS/EOS as the file's flags say."""
        check_text(text)
        ids: list[int] = []
        if add_special and self.add_bos and self.bos_id is not None:
            ids.append(self.bos_id)
        prev_special = True  # a space prefix for the first piece
        for part in self._special.partition(text, parse_special):
            if isinstance(part, int):
                ids.append(part)
                prev_special = True
                continue
            if self.add_space_prefix and prev_special:
                part = " " + part
            ids.extend(self._piece_ids(part.replace(" ", SPACE)))
            prev_special = False
        if add_special and self.add_eos and self.eos_id is not None:
            ids.append(self.eos_id)
        return ids

    # -- decoding -----------------------------------------------------------------------
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes token ``token_id`` stands for (special tokens: their text), as
        llama.cpp's token_to_piece with special tokens shown (a token text that was not
        UTF-8 in the file gives its bytes back)."""
        kind = self.token_types[token_id]
        text = self.tokens[token_id]
        if kind == TOKEN_TYPE_NORMAL:
            return text.replace(SPACE, " ").encode("utf-8", "surrogateescape")
        if kind == TOKEN_TYPE_BYTE:
            try:  # "<0xNN>"
                return bytes([int(text[3:5], 16)])
            except ValueError:  # a byte token that is not written <0xNN>: its text
                return text.encode("utf-8", "surrogateescape")
        if kind in (TOKEN_TYPE_CONTROL, TOKEN_TYPE_USER_DEFINED, TOKEN_TYPE_UNKNOWN):
            return text.encode("utf-8", "surrogateescape")
        return b""  # unused and undefined tokens print nothing

    def piece(self, token_id: int) -> str:
        """A readable piece for one token (invalid UTF-8 fragments are replaced)."""
        return self.token_bytes(token_id).decode("utf-8", errors="replace")

    def decode(self, ids, skip_special: bool = False) -> str:
        """The text of ``ids``; the space the encoder put before the text is taken off again."""
        parts = []
        for k, i in enumerate(ids):
            if skip_special and self.token_types[i] in (TOKEN_TYPE_CONTROL, TOKEN_TYPE_UNKNOWN):
                continue
            data = self.token_bytes(i)
            if k == 0 and self.add_space_prefix and data.startswith(b" "):
                data = data[1:]
            parts.append(data)
        return b"".join(parts).decode("utf-8", errors="replace")

    def is_end_of_turn(self, token_id: int) -> bool:
        return token_id in self.eot_ids or token_id == self.eos_id


def spm_from_metadata(metadata: dict, tokens: list[str], token_types: list[int], special: dict,
                      source: str = "GGUF metadata") -> SentencePieceTokenizer:
    """The tokenizer of a ``llama`` (SentencePiece-style) GGUF vocabulary.

    ``tokens``, ``token_types`` and the ``special`` ids (bos, eos, eot) are checked by the
    caller (tokenwalk.text.tokenizer.tokenizer_from_metadata). Defaults as llama.cpp's for
    this tokenizer type: BOS 1, EOS 2, BOS added, space prefix added.
    """
    scores = metadata.get("tokenizer.ggml.scores")
    if scores is None:
        scores = [0.0] * len(tokens)
    elif (not isinstance(scores, list) or len(scores) != len(tokens)
          or not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores)):
        raise TokenwalkError(f"{source}: tokenizer.ggml.scores should be {len(tokens)} numbers, one per token")

    def flag(key: str, default: bool) -> bool:
        value = metadata.get(f"tokenizer.ggml.{key}", default)
        if not isinstance(value, bool):
            raise TokenwalkError(f"{source}: tokenizer.ggml.{key} should be true or false, not {value!r:.40}")
        return value

    n = len(tokens)
    bos = special["bos"] if special["bos"] is not None else (1 if n > 1 else None)
    eos = special["eos"] if special["eos"] is not None else (2 if n > 2 else None)
    # llama.cpp writes "[EMPTY_i]" for an empty token text, so that no text maps to it
    tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
    token_types, eog = llamacpp_token_types(tokens, token_types, {**special, "eos": eos})
    return SentencePieceTokenizer(
        tokens=tokens, scores=[float(s) for s in scores], token_types=token_types,
        bos_id=bos, eos_id=eos, eot_ids=eog,
        add_bos=flag("add_bos_token", True), add_eos=flag("add_eos_token", False),
        add_space_prefix=flag("add_space_prefix", True), source=source)
