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


# llama.cpp finds some special tokens by their text and marks them control, whatever type
# the file gives (llama_vocab::impl::load in llama-vocab.cpp). Where the file names no id,
# the first token found with one of these texts becomes the end-of-turn / FIM token;
# llama.cpp takes the first in a hash map's order, here the lowest id.
_FOUND_BY_TEXT = {
    "eot": ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
            "_<EOT>", "[EOT]", "<\uff5cend\u2581of\u2581sentence\uff5c>", "<end_of_utterance>"),
    "eom": ("<|eom_id|>",),
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>",
                "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>",
                "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>",
                "\u2581<MID>", "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
# Texts that end a generation (special_eog_ids); they become control tokens too.
END_OF_GENERATION_NAMES = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
))
_ALWAYS_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")


def llamacpp_token_types(tokens: list[str], token_types: list[int], ids: dict) -> tuple[list[int], tuple[int, ...]]:
    """(token types, end-of-generation ids) as llama.cpp sees the vocabulary after loading it.

    ``ids`` holds the special ids the file names (``eos``, ``eot``, ``eom``, ``fim_pre``...;
    None where it names none). llama.cpp marks as control the tokens it recognises by their
    text (end of turn, fill-in-the-middle, end of generation): Gemma 3's ``</s>``, a
    user-defined HTML tag in the file, becomes a control token that ends the generation and
    is no longer cut from a text when special tokens are not parsed.
    """
    types = list(token_types)
    index: dict[str, int] = {}
    wanted = set(END_OF_GENERATION_NAMES).union(*_FOUND_BY_TEXT.values(), _ALWAYS_USER_DEFINED)
    for i, t in enumerate(tokens):
        if t in wanted:
            index.setdefault(t, i)
    found = dict(ids)
    for name, texts in _FOUND_BY_TEXT.items():
        if found.get(name) is None:
            hits = [index[t] for t in texts if t in index]
            if hits:
                found[name] = min(hits)
                types[found[name]] = TOKEN_TYPE_CONTROL
    eog = {found[k] for k in ("fim_pad", "fim_rep", "fim_sep") if found.get(k) is not None}
    for t in END_OF_GENERATION_NAMES:
        if t in index:
            eog.add(index[t])
            types[index[t]] = TOKEN_TYPE_CONTROL
    for t in _ALWAYS_USER_DEFINED:
        if t in index:
            types[index[t]] = TOKEN_TYPE_USER_DEFINED
    eog.update(found[k] for k in ("eos", "eot", "eom") if found.get(k) is not None)
    texts = {tokens[i] for i in eog}
    calls = "<|call|>" in texts or "<|calls|>" in texts
    if "<|end|>" in texts and calls and ("<|return|>" in texts or "<|flush|>" in texts):
        eog.discard(index["<|end|>"])
        types[index["<|end|>"]] = TOKEN_TYPE_USER_DEFINED
    if "<|tool_response>" in texts and "</s>" in texts:
        eog.discard(index["</s>"])
        types[index["</s>"]] = TOKEN_TYPE_NORMAL
    return types, tuple(sorted(eog))
