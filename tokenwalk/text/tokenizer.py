"""The model's own tokenizer, built from a GGUF header (pure Python).

``tokenizer_from_metadata`` / ``load_tokenizer`` choose the tokenizer from
``tokenizer.ggml.model``, as llama.cpp does: ``gpt2`` is the byte-level BPE of this module,
``llama`` the SentencePiece-style tokenizer of tokenwalk.text.spm; any other is refused in
one line. Both give ``encode``/``decode``/``token_bytes``/``piece``/``is_end_of_turn``.

The byte-level BPE: GGUF files whose ``tokenizer.ggml.model`` is ``gpt2`` (GPT-2,
SmolLM2, Qwen, Llama 3 style vocabularies). The vocabulary (``tokenizer.ggml.tokens``),
the merge ranks (``tokenizer.ggml.merges``) and the token types
(``tokenizer.ggml.token_type``: 3 = control, 4 = user-defined) come from the file's
metadata; the pre-tokenizer is chosen by ``tokenizer.ggml.pre``.

Encoding follows llama.cpp, so that ids match the engine the article measures:

1. special tokens are cut out first (tokenwalk.text.special): control tokens when
   ``parse_special``, user-defined ones always;
2. the rest is split into words by the pre-tokenizer. llama.cpp applies its pre-tokenizer
   regular expressions one after the other, each inside the pieces left by the previous
   one, keeping the text between matches as pieces too. The patterns use Unicode classes
   (``\\p{L}``, ``\\p{N}``) that the standard ``re`` module lacks, so they are hand-written
   scanners over ``unicodedata`` categories here;
3. each word's UTF-8 bytes are mapped to printable characters (GPT-2's byte-to-unicode
   table) and merged pair by pair, lowest merge rank first, leftmost first on ties.
"""

from __future__ import annotations

import heapq
import unicodedata
from dataclasses import dataclass, field

from tokenwalk.errors import TokenwalkError, printable
from tokenwalk.gguf.header import read_gguf_header
from tokenwalk.text import check_text
from tokenwalk.text.bpe import bytes_to_unicode
from tokenwalk.text.special import (
    TOKEN_TYPE_CONTROL,
    TOKEN_TYPE_NORMAL,
    TOKEN_TYPE_USER_DEFINED,
    SpecialTokens,
    llamacpp_token_types,
)

# tokenizer.ggml.model -> what it is, for the one-line refusal of the others
SUPPORTED_MODELS = {"gpt2": "byte-level BPE", "llama": "SentencePiece-style"}

# llama.cpp's whitespace set (unicode.cpp), which differs from str.isspace on U+001C-U+001F.
_WHITESPACE = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                         0x2028, 0x2029, 0x202F, 0x205F, 0x3000])

# Character classes of the pre-tokenizer: letter, number, whitespace, other.
_LETTER, _NUMBER, _SPACE, _OTHER = "L", "N", "S", "O"


def _char_class(ch: str) -> str:
    cp = ord(ch)
    if cp in _WHITESPACE:
        return _SPACE
    if cp < 128:  # fast path for ASCII
        if ch.isalpha():
            return _LETTER
        if ch.isdigit():
            return _NUMBER
        return _OTHER
    cat = unicodedata.category(ch)
    if cat[0] == "L":
        return _LETTER
    if cat[0] == "N":
        return _NUMBER
    return _OTHER


def _split_each_number(pieces: list[str]) -> list[str]:
    r"""The pattern ``\p{N}``: every number character becomes its own piece."""
    out = []
    for piece in pieces:
        start = 0
        for i, ch in enumerate(piece):
            if _char_class(ch) == _NUMBER:
                if i > start:
                    out.append(piece[start:i])
                out.append(ch)
                start = i + 1
        if start < len(piece):
            out.append(piece[start:])
    return out


def _split_gpt2(pieces: list[str]) -> list[str]:
    r"""GPT-2's pattern, inside each piece::

        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    """
    out = []
    for piece in pieces:
        classes = [_char_class(ch) for ch in piece]
        n = len(piece)
        pos = 0
        while pos < n:
            ch = piece[pos]
            if ch == "'" and pos + 1 < n:
                nxt = piece[pos + 1]
                if nxt in "stmd":
                    out.append(piece[pos:pos + 2])
                    pos += 2
                    continue
                if pos + 2 < n and piece[pos + 1:pos + 3] in ("re", "ve", "ll"):
                    out.append(piece[pos:pos + 3])
                    pos += 3
                    continue
            # an optional leading space joins the word that follows it
            if ch == " ":
                cls = classes[pos + 1] if pos + 1 < n else _SPACE
            else:
                cls = classes[pos]
            if cls in (_LETTER, _NUMBER, _OTHER):
                end = pos + (ch == " ")
                while end < n and classes[end] == cls:
                    end += 1
                out.append(piece[pos:end])
                pos = end
                continue
            spaces = 0
            while pos + spaces < n and classes[pos + spaces] == _SPACE:
                spaces += 1
            if spaces > 1 and pos + spaces < n:
                # \s+(?!\S): leave the last space to prefix the next word
                out.append(piece[pos:pos + spaces - 1])
                pos += spaces - 1
                continue
            if spaces > 0:
                out.append(piece[pos:pos + spaces])
                pos += spaces
                continue
            out.append(ch)
            pos += 1
    return out


# tokenizer.ggml.pre -> the sequence of splitters llama.cpp applies (llama-vocab.cpp).
PRE_TOKENIZERS = {
    "smollm": (_split_each_number, _split_gpt2),
    "starcoder": (_split_each_number, _split_gpt2),
    "refact": (_split_each_number, _split_gpt2),
    "codeshell": (_split_each_number, _split_gpt2),
    "gpt-2": (_split_gpt2,),
    "gpt2": (_split_gpt2,),
    "default": (_split_gpt2,),
}


def _merge_word(word: str, ranks: dict) -> list[str]:
    """The symbols of ``word`` after BPE: merge the adjacent pair of lowest rank, the
    leftmost on ties, until no pair has a rank.

    As llama.cpp's llm_tokenizer_bpe_session: the symbols are a linked list and the
    candidate pairs a heap ordered by (rank, position of the left symbol); a popped pair
    whose symbols have changed since it was pushed is stale and skipped. Each merge
    pushes at most two pairs, so a word of n characters costs O(n log n), not the O(n^2)
    of rescanning every pair after every merge (20,000 letters: ~0.1 s instead of ~50 s).
    """
    n = len(word)
    if n < 2:
        return list(word)
    text = list(word)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    get = ranks.get
    heap = []
    for i in range(n - 1):
        r = get((text[i], text[i + 1]))
        if r is not None:
            heap.append((r, i, i + 1, len(text[i]) + len(text[i + 1])))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        _, left, right, size = pop(heap)
        a, b = text[left], text[right]
        # Stale: a side was merged away (empty) or grew since the pair was pushed.
        if not a or not b or len(a) + len(b) != size:
            continue
        merged = a + b
        text[left] = merged
        text[right] = ""
        after = nxt[right]
        nxt[left] = after
        if after >= 0:
            prev[after] = left
            r = get((merged, text[after]))
            if r is not None:
                push(heap, (r, left, after, len(merged) + len(text[after])))
        before = prev[left]
        if before >= 0:
            r = get((text[before], merged))
            if r is not None:
                push(heap, (r, before, left, len(text[before]) + len(merged)))
    out = []
    i = 0
    while i >= 0:
        out.append(text[i])
        i = nxt[i]
    return out


def pre_tokenize(text: str, pre: str = "smollm") -> list[str]:
    """Split ``text`` into the words the BPE merges work inside (no piece crosses two)."""
    try:
        splitters = PRE_TOKENIZERS[pre]
    except KeyError:
        raise TokenwalkError(f"tokenizer.ggml.pre: pre-tokenizer {pre!r} is not supported "
                             f"(supported: {', '.join(sorted(PRE_TOKENIZERS))})") from None
    pieces = [text] if text else []
    for split in splitters:
        pieces = split(pieces)
    return pieces


@dataclass
class Tokenizer:
    """Byte-level BPE with the vocabulary, merges and special tokens of one model.

    ``tokens[i]`` is the text of token id ``i`` in byte-to-unicode form; ``merges`` are
    ``"left right"`` strings in rank order (rank = position).
    """

    tokens: list[str]
    merges: list[str]
    token_types: list[int]
    pre: str = "smollm"
    bos_id: int | None = None
    eos_id: int | None = None
    eot_ids: tuple[int, ...] = ()
    add_bos: bool = False
    add_eos: bool = False
    source: str = "GGUF metadata"
    kind: str = "gpt2"
    _ranks: dict = field(default_factory=dict, repr=False)
    _ids: dict = field(default_factory=dict, repr=False)
    _special: SpecialTokens | None = field(default=None, repr=False)
    _byte_enc: dict = field(default_factory=dict, repr=False)
    _byte_dec: dict = field(default_factory=dict, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.pre not in PRE_TOKENIZERS:
            raise TokenwalkError(f"{self.source}: tokenizer.ggml.pre {self.pre!r} is not supported "
                                 f"(supported: {', '.join(sorted(PRE_TOKENIZERS))})")
        self._ids = {t: i for i, t in enumerate(self.tokens)}
        for rank, merge in enumerate(self.merges):
            left, _, right = merge.partition(" ")
            self._ranks[(left, right)] = rank
        self._special = SpecialTokens(self.tokens, self.token_types)
        self._byte_enc = bytes_to_unicode()
        self._byte_dec = {c: b for b, c in self._byte_enc.items()}

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def token_id(self, text: str) -> int | None:
        return self._ids.get(text)

    # -- encoding -----------------------------------------------------------------------
    def _bpe(self, word: str) -> list[int]:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        symbols = _merge_word(word, self._ranks)
        ids = []
        for s in symbols:
            i = self._ids.get(s)
            if i is not None:
                ids.append(i)
            else:  # as llama.cpp: fall back to single-byte tokens that exist
                ids.extend(self._ids[c] for c in s if c in self._ids)
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def encode(self, text: str, parse_special: bool = True, add_special: bool = False) -> list[int]:
        """Token ids of ``text``; ``add_special`` adds BOS/EOS where the file's
        ``add_bos_token``/``add_eos_token`` say so (SmolLM2: neither)."""
        check_text(text)
        ids: list[int] = []
        if add_special and self.add_bos and self.bos_id is not None:
            ids.append(self.bos_id)
        enc = self._byte_enc
        for part in self._special.partition(text, parse_special):
            if isinstance(part, int):
                ids.append(part)
                continue
            for word in pre_tokenize(part, self.pre):
                ids.extend(self._bpe("".join(enc[b] for b in word.encode("utf-8"))))
        if add_special and self.add_eos and self.eos_id is not None:
            ids.append(self.eos_id)
        return ids

    # -- decoding -----------------------------------------------------------------------
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes token ``token_id`` stands for (special tokens: their text)."""
        text = self.tokens[token_id]
        if self.token_types[token_id] in (TOKEN_TYPE_CONTROL, TOKEN_TYPE_USER_DEFINED):
            return text.encode("utf-8")
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
    (byte-level BPE) for ``tokenizer.ggml.model = gpt2``, a ``SentencePieceTokenizer`` for
    ``llama``; any other model is a one-line TokenwalkError naming it."""
    model = metadata.get("tokenizer.ggml.model")
    if model not in SUPPORTED_MODELS:
        known = ", ".join(f"{k!r} ({v})" for k, v in SUPPORTED_MODELS.items())
        raise TokenwalkError(f"{source}: tokenizer.ggml.model {printable(repr(model)[:60])} is not supported "
                             f"(supported: {known})")
    needed = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges") if model == "gpt2" else ("tokenizer.ggml.tokens",)
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
    types, eog = llamacpp_token_types(tokens, types, special)
    merges = _list_of(metadata, "tokenizer.ggml.merges", str, source)
    eos = special["eos"]
    flags = {}
    for name in ("add_bos", "add_eos"):
        value = metadata.get(f"tokenizer.ggml.{name}_token", False)
        if not isinstance(value, bool):
            raise TokenwalkError(f"{source}: tokenizer.ggml.{name}_token should be true or false, "
                                 f"not {printable(repr(value)[:40])}")
        flags[name] = value
    pre = metadata.get("tokenizer.ggml.pre", "default")
    return Tokenizer(tokens=tokens, merges=merges, token_types=types,
                     pre=pre if isinstance(pre, str) else repr(pre),
                     bos_id=special["bos"], eos_id=eos, eot_ids=eog, source=source, **flags)


def _list_of(metadata: dict, key: str, kind: type, source: str) -> list:
    """metadata[key] as a list whose items are all `kind` (str or int), else one line."""
    value = metadata[key]
    if not isinstance(value, list):
        raise TokenwalkError(f"{source}: {key} should be an array, not {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, kind) or isinstance(item, bool):
            raise TokenwalkError(f"{source}: {key}: item {i + 1} of {len(value)} should be "
                                 f"{'a string' if kind is str else 'an integer'}, not {type(item).__name__}")
    return list(value)


def load_tokenizer(path):
    """The tokenizer of the GGUF file at ``path`` (either kind, chosen by tokenizer.ggml.model)."""
    return tokenizer_from_metadata(dict(read_gguf_header(path).metadata), source=str(path))
