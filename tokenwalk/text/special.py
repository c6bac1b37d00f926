"""Special tokens: cutting them out of a text as llama.cpp does, and the end-of-generation set.

Both of the model tokenizers (byte-level BPE and SentencePiece-style) first cut the text at
the vocabulary's special tokens, then tokenize the plain text between them. llama.cpp
(``tokenizer_st_partition`` in llama-vocab.cpp) takes the special tokens longest first and,
for each one in turn, cuts its leftmost non-overlapping occurrences out of the pieces of
plain text still left. Control and unknown tokens are cut only when the caller parses
special tokens; user-defined tokens (Gemma's ``\\n``, runs of spaces, ``<b>``...) always are.

Done literally, that is one scan of the text per special token (Gemma has 6,414 of them).
Here one pass over the text with a trie finds every occurrence of every special token, and
the occurrences are then accepted in llama.cpp's order (token priority, then position),
skipping any that overlaps one already accepted. That is the same partition: within a piece
of plain text llama.cpp finds the leftmost occurrence that fits, then looks again to its
right, and an occurrence that would cross into an accepted token is one that does not fit.
The cost is the number of occurrences, not the vocabulary times the text.
"""

from __future__ import annotations

import re

TOKEN_TYPE_NORMAL = 1
TOKEN_TYPE_UNKNOWN = 2
TOKEN_TYPE_CONTROL = 3
TOKEN_TYPE_USER_DEFINED = 4
TOKEN_TYPE_UNUSED = 5
TOKEN_TYPE_BYTE = 6

# Tokens llama.cpp treats as ending the generation, found by their text (llama-vocab.cpp).
END_OF_GENERATION_NAMES = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                           "<|eom_id|>", "<EOT>", "<|end_of_text|>", "<end_of_utterance>")

_END = ""  # trie key of a complete token (no character is the empty string)


class SpecialTokens:
    """The special tokens of one vocabulary, ready to cut texts.

    ``tokens`` and ``token_types`` are the GGUF arrays; control (3), user-defined (4) and
    unknown (2) tokens are special. Priority: longer text first, then lower id (llama.cpp
    sorts by length only, with std::sort, so the order of two special tokens of the same
    length that overlap in a text is not defined there).
    """

    def __init__(self, tokens: list[str], token_types: list[int]):
        special = [i for i, k in enumerate(token_types)
                   if k in (TOKEN_TYPE_CONTROL, TOKEN_TYPE_USER_DEFINED, TOKEN_TYPE_UNKNOWN) and tokens[i]]
        special.sort(key=lambda i: (-len(tokens[i]), i))
        self.rank = {i: r for r, i in enumerate(special)}
        self.size = {i: len(tokens[i]) for i in special}
        self.always = {i for i in special if token_types[i] == TOKEN_TYPE_USER_DEFINED}
        self.trie: dict = {}
        for i in special:
            node = self.trie
            for ch in tokens[i]:
                node = node.setdefault(ch, {})
            node[_END] = i
        firsts = sorted(ch for ch in self.trie if ch != _END)
        self._starts = re.compile("[" + "".join(re.escape(ch) for ch in firsts) + "]") if firsts else None

    def _occurrences(self, text: str, parse_special: bool) -> dict[int, list[int]]:
        """token id -> the starts of its occurrences in ``text``, in order."""
        found: dict[int, list[int]] = {}
        if self._starts is None:
            return found
        trie, always, n = self.trie, self.always, len(text)
        for m in self._starts.finditer(text):
            start = m.start()
            node = trie
            j = start
            while j < n:
                node = node.get(text[j])
                if node is None:
                    break
                j += 1
                token = node.get(_END)
                if token is not None and (parse_special or token in always):
                    starts = found.get(token)
                    if starts is None:
                        found[token] = [start]
                    else:
                        starts.append(start)
        return found

    def partition(self, text: str, parse_special: bool = True) -> list[str | int]:
        """``text`` as a list of plain-text pieces (str) and special token ids (int), in order."""
        found = self._occurrences(text, parse_special)
        if not found:
            return [text] if text else []
        covered = bytearray(len(text))
        accepted = []
        for token in sorted(found, key=self.rank.__getitem__):
            size = self.size[token]
            for start in found[token]:
                end = start + size
                if covered.find(1, start, end) >= 0:
                    continue
                covered[start:end] = b"\x01" * size
                accepted.append((start, token))
        accepted.sort()
        out: list[str | int] = []
        pos = 0
        for start, token in accepted:
            if start > pos:
                out.append(text[pos:start])
            out.append(token)
            pos = start + self.size[token]
        if pos < len(text):
            out.append(text[pos:])
        return out


def end_of_generation_ids(tokens: list[str], *ids: int | None) -> tuple[int, ...]:
    """The ids that end a generation: the given ones (the file's eos/eot) and the chat
    markers llama.cpp recognises by their text (``special_eog_ids``)."""
    out = {int(x) for x in ids if x is not None}
    out.update(i for i, t in enumerate(tokens) if t in END_OF_GENERATION_NAMES)
    return tuple(sorted(out))
