"""A small byte-level BPE tokenizer: train merges on a text, then cut any text with them.

This is the tokenizer of the article's interactive figure (pure Python, it runs in the
reader's browser). It works like GPT-2's and Qwen's, at toy scale:

1. **Pre-split** the text into chunks: a run of letters, of digits or of other symbols,
   each with at most one leading space, and runs of whitespace. A leading space belongs
   to the word after it, which is why pieces look like ``·patient``.
2. **Bytes, shown as characters**: each chunk's UTF-8 bytes are mapped to printable
   characters with GPT-2's byte-to-unicode table, so a space shows as ``Ġ`` and every
   one of the 256 byte values has a symbol (any text can be cut, nothing is unknown).
3. **Train**: start from the byte symbols present in the training text, count every
   adjacent pair inside the chunks, glue the most frequent pair into a new symbol, and
   repeat ``n_merges`` times. Ties go to the pair that sorts first (as strings), so
   training is deterministic.
4. **Encode**: cut a chunk into bytes and apply the merges in the order they were
   learned (lowest rank first). Decoding concatenates the bytes back: lossless for any
   Unicode text.

Vocabulary: the byte symbols seen in training plus one entry per merge. A byte never seen
in training still encodes (byte-level BPE cannot fail); it gets an id after the
vocabulary, ``vocab_size + byte value``, and does not count in the vocabulary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from tokenwalk.text import check_text

# Letters ([^\W\d_]: word characters that are neither digits nor '_'), digits, other
# symbols, each with an optional leading space; then whitespace (a run before a word
# leaves its last space to the word, as in GPT-2's pattern).
_CHUNK = re.compile(r" ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+")


@lru_cache(maxsize=1)
def _byte_table() -> tuple[dict[int, str], dict[str, int]]:
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:  # control bytes, space, DEL, NBSP, soft hyphen: shift above 255
            table[b] = chr(256 + extra)
            extra += 1
    return table, {c: b for b, c in table.items()}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from the 256 byte values to printable Unicode characters.

    Printable Latin-1 bytes map to themselves; the other 68 (space, control bytes...)
    map to U+0100 and up, in byte order: space (0x20) becomes 'Ġ', newline 'Ċ'.
    """
    return dict(_byte_table()[0])


def unicode_to_bytes() -> dict[str, int]:
    """The inverse of bytes_to_unicode()."""
    return dict(_byte_table()[1])


def pre_tokenize(text: str) -> list[str]:
    """The chunks BPE works inside; their concatenation is the text."""
    return _CHUNK.findall(text)


def _to_symbols(chunk: str) -> tuple[str, ...]:
    table = _byte_table()[0]
    return tuple(table[b] for b in chunk.encode("utf-8"))


def symbol_text(symbol: str) -> str:
    """A token's bytes as text (invalid UTF-8, i.e. a cut inside a character, as U+FFFD)."""
    inverse = _byte_table()[1]
    return bytes(inverse[c] for c in symbol).decode("utf-8", errors="replace")


def _merge_pair(word: tuple[str, ...], a: str, b: str) -> tuple[str, ...]:
    out, i, n = [], 0, len(word)
    while i < n:
        if i < n - 1 and word[i] == a and word[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


@dataclass
class BPE:
    """A trained byte-level BPE: base symbols, merges in order, and the vocabulary."""

    base: list[str]  # byte symbols seen in training, in byte order
    merges: list[tuple[str, str]]  # in the order learned (rank 0 first)
    vocab: dict[str, int] = field(init=False)
    _ranks: dict[tuple[str, str], int] = field(init=False, repr=False)
    _cache: dict[str, tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.vocab = {}
        for s in self.base:
            self.vocab.setdefault(s, len(self.vocab))
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self._ranks = {pair: r for r, pair in enumerate(self.merges)}
        self._cache = {}
        self._id_to_symbol = {i: s for s, i in self.vocab.items()}

    @property
    def vocab_size(self) -> int:
        """Entries learned: byte symbols seen in training + one per merge."""
        return len(self.vocab)

    def _bpe(self, chunk: str) -> tuple[str, ...]:
        cached = self._cache.get(chunk)
        if cached is not None:
            return cached
        word = _to_symbols(chunk)
        ranks = self._ranks
        while len(word) > 1:
            # Lowest-rank pair present = the earliest merge that still applies.
            best = min(zip(word, word[1:], strict=False), key=lambda p: ranks.get(p, 1 << 60))
            if best not in ranks:
                break
            word = _merge_pair(word, *best)
        self._cache[chunk] = word
        return word

    def encode_pieces(self, text: str) -> list[str]:
        """The tokens of ``text`` as byte-level symbols (a space shows as 'Ġ')."""
        check_text(text)
        pieces: list[str] = []
        for chunk in pre_tokenize(text):
            pieces.extend(self._bpe(chunk))
        return pieces

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``. A byte never seen in training: vocab_size + its value."""
        inverse = _byte_table()[1]
        ids = []
        for piece in self.encode_pieces(text):
            i = self.vocab.get(piece)
            ids.append(i if i is not None else self.vocab_size + inverse[piece])
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """The text of token ids (inverse of encode, for any Unicode text)."""
        table, inverse = _byte_table()
        out = bytearray()
        for i in ids:
            symbol = self._id_to_symbol.get(i)
            if symbol is None:
                if not 0 <= i - self.vocab_size < 256:
                    raise ValueError(f"decode: token id {i} is outside the vocabulary and the byte range")
                symbol = table[i - self.vocab_size]
            out.extend(inverse[c] for c in symbol)
        return out.decode("utf-8")

    def pieces_text(self, text: str) -> list[str]:
        """The tokens of ``text`` as readable text, one string per token."""
        return [symbol_text(p) for p in self.encode_pieces(text)]


def train_bpe(text: str, n_merges: int) -> BPE:
    """Learn up to ``n_merges`` merges on ``text`` (fewer if no adjacent pair is left).

    Each merge glues the most frequent adjacent pair of symbols inside the pre-split
    chunks (counted over every occurrence of each chunk); ties go to the pair that sorts
    first. Deterministic: the same text gives the same merges.
    """
    if n_merges < 0:
        raise ValueError(f"train_bpe: n_merges must be >= 0, got {n_merges}")
    check_text(text, "the training text")
    chunk_counts = Counter(pre_tokenize(text))
    words = {_to_symbols(c): n for c, n in chunk_counts.items()}
    inverse = _byte_table()[1]
    base = sorted({s for w in words for s in w}, key=lambda s: inverse[s])
    merges: list[tuple[str, str]] = []
    for _ in range(n_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for w, n in words.items():
            for p in zip(w, w[1:], strict=False):
                pairs[p] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        merged: dict[tuple[str, ...], int] = {}
        for w, n in words.items():
            nw = _merge_pair(w, *best) if best[0] in w else w
            merged[nw] = merged.get(nw, 0) + n
        words = merged
    return BPE(base, merges)


def count_text(text: str, bpe: BPE) -> dict[str, int]:
    """The tokenizer figure's counters for ``text``.

    characters: Unicode code points; utf8_bytes: bytes in UTF-8; words: runs of
    non-whitespace; tokens: pieces after BPE; vocabulary: the tokenizer's vocab_size.
    """
    check_text(text)
    return {
        "characters": len(text),
        "utf8_bytes": len(text.encode("utf-8")),
        "words": len(text.split()),
        "tokens": len(bpe.encode_pieces(text)),
        "vocabulary": bpe.vocab_size,
    }
