"""The model's own tokenizer, built from a GGUF header (pure Python).

``tokenizer_from_metadata`` / ``load_tokenizer`` choose the tokenizer from
``tokenizer.ggml.model``, as llama.cpp does: ``gpt2`` (byte-level BPE) and ``gemma4`` (BPE
over raw UTF-8) are the ``Tokenizer`` of this module, ``llama`` the SentencePiece-style
tokenizer of tokenwalk.text.spm; the others llama.cpp knows (WordPiece, Unigram, RWKV...) and
anything else are refused in one line (SUPPORTED_MODELS, REFUSED_MODELS). All give
``encode``/``decode``/``token_bytes``/``piece``/``is_end_of_turn``.

The BPE: the vocabulary (``tokenizer.ggml.tokens``), the merge ranks
(``tokenizer.ggml.merges``) and the token types (``tokenizer.ggml.token_type``: 3 = control,
4 = user-defined, 6 = byte) come from the file's metadata; the pre-tokenizer is llama.cpp's
for ``tokenizer.ggml.pre`` (tokenwalk.text.pretokenize, which also says what a missing key means).

Encoding follows llama.cpp (llm_tokenizer_bpe_session), so that ids match the engine the
article measures:

1. special tokens are cut out first (tokenwalk.text.special): control tokens when
   ``parse_special``, user-defined ones always;
2. the rest (spaces written as ``▁`` for Gemma 4) is split into words by the pre-tokenizer's
   regular expressions;
3. each word's UTF-8 bytes are mapped to printable characters (GPT-2's byte-to-unicode
   table; Gemma 4 keeps its characters) and merged pair by pair, lowest merge rank first,
   leftmost first on ties. Where the pre-tokenizer says so (Llama 3's), a word that is a
   token is taken whole; a final symbol with no token falls back to byte tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import repeat

from tokenwalk.errors import TokenwalkError, printable
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.text import check_text
from tokenwalk.text.bpe import bytes_to_unicode
from tokenwalk.text.merge import merge_symbols
from tokenwalk.text.pretokenize import pre_tokenize, pre_tokenizer, split_words  # noqa: F401 (pre_tokenize: the API)
from tokenwalk.text.special import (
    TOKEN_TYPE_BYTE,
    TOKEN_TYPE_CONTROL,
    TOKEN_TYPE_NORMAL,
    TOKEN_TYPE_USER_DEFINED,
    SpecialTokens,
    llamacpp_token_types,
)

# tokenizer.ggml.model -> what it is: the vocabularies tokenized here, as llama.cpp does.
SUPPORTED_MODELS = {
    "gpt2": "byte-level BPE (GPT-2, Llama 3, Qwen, SmolLM2, Falcon, DeepSeek...)",
    "llama": "SentencePiece-style (Llama 2, Mistral, Gemma 3, Phi-3...)",
    "gemma4": "BPE over raw UTF-8 (Gemma 4)",
}
# the ones llama.cpp has and this module does not build: refused in one line
REFUSED_MODELS = {
    "bert": "WordPiece tokenizer (WPM: BERT, BGE)",
    "t5": "Unigram tokenizer (UGM: T5, Nomic's multilingual BERT)",
    "rwkv": "RWKV tokenizer",
    "plamo2": "PLaMo-2 tokenizer",
    "hybriddna": "HybridDNA tokenizer",
    "whitespace": "whitespace-split tokenizer",
    "no_vocab": "marker for a file without a vocabulary",
    "none": "marker for a file without a vocabulary",
}


def model_refusal(model, source: str = "GGUF metadata") -> str:
    """The one-line refusal for a tokenizer.ggml.model this module does not tokenize."""
    known = ", ".join(f"{k!r} {v}" for k, v in SUPPORTED_MODELS.items())
    line = f"{source}: tokenizer.ggml.model {printable(repr(model)[:60])} is not supported (supported: {known})"
    if isinstance(model, str) and model in REFUSED_MODELS:
        line += f"; {model!r} is llama.cpp's {REFUSED_MODELS[model]}, which is not built here"
    return line


def merge_ranks(merges: list[str]) -> tuple[dict[str, int], str]:
    """(rank of each pair, keyed ``left + sep + right``; sep) from ``tokenizer.ggml.merges``.

    llama.cpp cuts each merge at its first space after the first character and keeps the
    first rank of a pair that appears twice. When every merge has exactly one such space the
    merge strings are the keys as they stand (sep " "), which costs one dict built in C; a
    vocabulary whose tokens hold spaces gets keys joined by a character no merge contains.
    """
    n = len(merges)
    spaces = sum(map(str.count, merges, repeat(" ", n)))  # counted in C: ~20 ms for 500,000 merges
    if spaces == n and not any(map(str.startswith, merges, repeat(" ", n))):
        ranks = dict(zip(merges, range(len(merges)), strict=True))
        sep = " "
        if len(ranks) != len(merges):  # a repeated merge: the first rank wins, as in llama.cpp
            ranks = {}
            for rank, merge in enumerate(merges):
                ranks.setdefault(merge, rank)
        return ranks, sep
    joined = "".join(merges)
    sep = next(ch for ch in ("\x00", "\uffff", "\U0010ffff") if ch not in joined)
    ranks = {}
    for rank, merge in enumerate(merges):
        cut = merge.find(" ", 1)
        key = merge[:cut] + sep + merge[cut + 1:] if cut >= 0 else sep
        ranks.setdefault(key, rank)
    return ranks, sep


# GPT-2's byte-to-unicode map as a str.translate table over the bytes read as Latin-1
_BYTE_TABLE = {b: c for b, c in bytes_to_unicode().items()}


@dataclass
class Tokenizer:
    """BPE with the vocabulary, merges and special tokens of one model (tokenizer.ggml.model
    ``gpt2``: byte-level; ``gemma4``: raw UTF-8 with spaces as ``▁`` and ``<0xNN>`` byte tokens).

    ``tokens[i]`` is the text of token id ``i`` as the file writes it; ``merges`` are
    ``"left right"`` strings in rank order (rank = position); ``pre`` is the file's
    ``tokenizer.ggml.pre`` (None: the key is missing, llama.cpp's ``default``).
    """

    tokens: list[str]
    merges: list[str]
    token_types: list[int]
    pre: str | None = "smollm"
    bos_id: int | None = None
    eos_id: int | None = None
    eot_ids: tuple[int, ...] = ()
    add_bos: bool = False
    add_eos: bool = False
    source: str = "GGUF metadata"
    kind: str = "gpt2"
    _ranks: dict = field(default_factory=dict, repr=False)
    _sep: str = field(default=" ", repr=False)
    _ids: dict = field(default_factory=dict, repr=False)
    _special: SpecialTokens | None = field(default=None, repr=False)
    _byte_dec: dict = field(default_factory=dict, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.pre_tokenizer = pre_tokenizer("gemma4" if self.kind == "gemma4" else self.pre, self.source)
        self._regexes = self.pre_tokenizer.regexes
        # text -> id: the last id of a text wins, as llama.cpp's token_to_id
        self._ids = dict(zip(self.tokens, range(len(self.tokens)), strict=True))
        self._ranks, self._sep = merge_ranks(self.merges)
        self._special = SpecialTokens(self.tokens, self.token_types)
        self._byte_dec = {c: b for b, c in bytes_to_unicode().items()}
        get = self._ids.get
        if self.pre_tokenizer.byte_encode:
            # a symbol with no token falls back to its UTF-8 bytes, each looked up as a
            # one-byte string (llama.cpp: only ASCII bytes can be tokens that way)
            self._fallback = [get(chr(b)) if b < 0x80 else get(chr(0xDC00 + b)) for b in range(256)]
        else:
            self._fallback = [get(f"<0x{b:02X}>") for b in range(256)]

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def token_id(self, text: str) -> int | None:
        return self._ids.get(text)

    # -- encoding -----------------------------------------------------------------------
    def _bpe(self, word: str) -> list[int]:
        """Token ids of one word of the pre-tokenizer (as the text has it)."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        pre = self.pre_tokenizer
        symbol_text = word.encode("utf-8").decode("latin-1").translate(_BYTE_TABLE) if pre.byte_encode else word
        get = self._ids.get
        whole = get(symbol_text) if (pre.ignore_merges or (pre.kind == "gemma4" and not word.strip("\n"))) else None
        if whole is not None:
            ids = [whole]
        else:
            ids = []
            fallback = self._fallback
            for s in merge_symbols(symbol_text, self._ranks, self._sep):
                i = get(s)
                if i is not None:
                    ids.append(i)
                    continue
                # as llama.cpp: the symbol's bytes, each a token where one exists
                raw = s.encode("utf-8", "surrogateescape")
                ids.extend(fallback[b] for b in raw if fallback[b] is not None)
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def encode(self, text: str, parse_special: bool = True, add_special: bool = False) -> list[int]:
        """Token ids of ``text``; ``add_special`` adds BOS/EOS where the file's
        ``add_bos_token``/``add_eos_token`` (or llama.cpp's default for the vocabulary) say so."""
        check_text(text)
        ids: list[int] = []
        if add_special and self.add_bos and self.bos_id is not None:
            ids.append(self.bos_id)
        escape = self.pre_tokenizer.escape_spaces
        bpe = self._bpe
        for part in self._special.partition(text, parse_special):
            if isinstance(part, int):
                ids.append(part)
                continue
            if escape:
                part = part.replace(" ", "\u2581")
            for word in split_words(part, self._regexes):
                ids.extend(bpe(word))
        if add_special and self.add_eos and self.eos_id is not None:
            ids.append(self.eos_id)
        return ids

    # -- decoding -----------------------------------------------------------------------
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes token ``token_id`` stands for (special tokens: their text)."""
        text = self.tokens[token_id]
        if self.token_types[token_id] in (TOKEN_TYPE_CONTROL, TOKEN_TYPE_USER_DEFINED):
            return text.encode("utf-8", "surrogateescape")
        if not self.pre_tokenizer.byte_encode:
            if self.token_types[token_id] == TOKEN_TYPE_BYTE and text.startswith("<0x") and len(text) == 6:
                try:
                    return bytes([int(text[3:5], 16)])
                except ValueError:
                    pass
            return text.replace("\u2581", " ").encode("utf-8", "surrogateescape")
        dec = self._byte_dec
        return bytes(dec[c] if c in dec else 0x3F for c in text)

    def piece(self, token_id: int) -> str:
        """A readable piece for one token (invalid UTF-8 fragments are replaced)."""
        return self.token_bytes(token_id).decode("utf-8", errors="replace")

    def decode(self, ids, skip_special: bool = False) -> str:
        data = b"".join(self.token_bytes(i) for i in ids
                        if not (skip_special and self.token_types[i] == TOKEN_TYPE_CONTROL))
        return data.decode("utf-8", errors="replace")

    def is_end_of_turn(self, token_id: int) -> bool:
        return token_id in self.eot_ids or token_id == self.eos_id


def tokenizer_from_metadata(metadata: dict, source: str = "GGUF metadata"):
    """The model's tokenizer from a GGUF metadata dict (key -> python value): a ``Tokenizer``
    (BPE) for ``tokenizer.ggml.model = gpt2`` or ``gemma4``, a ``SentencePieceTokenizer`` for
    ``llama``; any other model, or a ``tokenizer.ggml.pre`` llama.cpp does not know, is a
    one-line TokenwalkError naming it."""
    model = metadata.get("tokenizer.ggml.model")
    if not isinstance(model, str) or model not in SUPPORTED_MODELS:
        raise TokenwalkError(model_refusal(model, source))
    pre = metadata.get("tokenizer.ggml.pre")
    if model == "gpt2":
        pre_tokenizer(pre, source)  # refuse an unknown pre-tokenizer before reading the vocabulary
    needed = ("tokenizer.ggml.tokens",) if model == "llama" else ("tokenizer.ggml.tokens", "tokenizer.ggml.merges")
    for key in needed:
        if key not in metadata:
            raise TokenwalkError(f"{source}: {key} is missing; the file has no {SUPPORTED_MODELS[model]} vocabulary")
    tokens = _list_of(metadata, "tokenizer.ggml.tokens", str, source)
    if "tokenizer.ggml.token_type" in metadata:
        types = _list_of(metadata, "tokenizer.ggml.token_type", int, source)
        if len(types) != len(tokens):
            raise TokenwalkError(f"{source}: tokenizer.ggml.token_type has {len(types)} entries for "
                                 f"{len(tokens)} tokens")
    else:
        types = [TOKEN_TYPE_NORMAL] * len(tokens)
    special = {}
    for name in ("bos", "eos", "eot", "eom", "fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep"):
        key = f"tokenizer.ggml.{name}_token_id"
        value = metadata.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 <= value < len(tokens)):
            raise TokenwalkError(f"{source}: {key} should be a token id (0 to {len(tokens) - 1}), "
                                 f"not {printable(repr(value)[:40])}")
        special[name] = value
    if model == "llama":
        from tokenwalk.text.spm import spm_from_metadata

        return spm_from_metadata(metadata, tokens, types, special, source=source)
    # llama.cpp's defaults where the file names no BOS/EOS: token 11 for gpt2 vocabularies
    # (GPT-NeoX's and Falcon's end of text), none for gemma4
    if model == "gpt2" and len(tokens) > 11:
        special["bos"] = 11 if special["bos"] is None else special["bos"]
        special["eos"] = 11 if special["eos"] is None else special["eos"]
    types, eog = llamacpp_token_types(tokens, types, special)
    merges = _list_of(metadata, "tokenizer.ggml.merges", str, source)
    branch = pre_tokenizer("gemma4" if model == "gemma4" else pre, source)
    flags = {}
    for name, default in (("add_bos", bool(branch.add_bos)), ("add_eos", False)):
        value = metadata.get(f"tokenizer.ggml.{name}_token", default)
        if not isinstance(value, bool):
            raise TokenwalkError(f"{source}: tokenizer.ggml.{name}_token should be true or false, "
                                 f"not {printable(repr(value)[:40])}")
        flags[name] = value
    if model == "gemma4":
        flags["add_bos"] = True  # llama.cpp overrides the file for Gemma 4
    return Tokenizer(tokens=tokens, merges=merges, token_types=types, pre=pre, kind=model,
                     bos_id=special["bos"], eos_id=special["eos"], eot_ids=eog, source=source, **flags)


def _list_of(metadata: dict, key: str, kind: type, source: str) -> list:
    """metadata[key] as a list whose items are all `kind` (str or int), else one line."""
    value = metadata[key]
    if not isinstance(value, list):
        raise TokenwalkError(f"{source}: {key} should be an array, not {type(value).__name__}")
    if set(map(type, value)) <= {kind}:  # the common case, checked in C (150,000 items: ~5 ms)
        return list(value)
    for i, item in enumerate(value):
        if not isinstance(item, kind) or isinstance(item, bool):
            raise TokenwalkError(f"{source}: {key}: item {i + 1} of {len(value)} should be "
                                 f"{'a string' if kind is str else 'an integer'}, not {type(item).__name__}")
    return list(value)


def load_tokenizer(path):
    """The tokenizer of the GGUF file at ``path`` (either kind, chosen by tokenizer.ggml.model)."""
    return tokenizer_from_metadata(dict(read_gguf_header(path).metadata), source=str(path))
