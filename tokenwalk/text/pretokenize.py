"""llama.cpp's pre-tokenizers for BPE vocabularies: the text cut into words before the merges.

One table, ``PRE_TOKENIZERS``, gives for every value of ``tokenizer.ggml.pre`` that llama.cpp
knows (``llama_vocab::impl::load`` in src/llama-vocab.cpp of llama-cpp-python 0.3.36) the
sequence of regular expressions its ``llm_tokenizer_bpe`` constructor applies, copied as
written there, and the flags the same branch sets (``ignore_merges``, ``add_bos``, spaces
written as ``▁``, GPT-2's byte-to-unicode map or raw UTF-8). A vocabulary with no ``pre`` key
gets llama.cpp's ``default`` (GPT-NeoX, Aquila and older conversions): punctuation runs first,
then GPT-2's pattern, then digits in groups of three from the left ("14159" -> "141" "59").

How llama.cpp runs them (``unicode_regex_split`` in src/unicode.cpp), and so how they run here:
each expression in turn is searched inside each piece the previous one left, and the text
between two matches stays a piece of its own. An expression with a Unicode class (``\\p{L}``,
``\\p{N}``...) runs on a *collapsed* text: ASCII characters stay, every other character becomes
one stand-in byte for its class (0xD1 number, 0xD2 letter, 0xD3 punctuation, 0xD4 mark,
0xD5 symbol, 0xD0 other; any whitespace becomes 0x0B), and each ``\\p{X}`` in the expression
becomes the class of its stand-in plus the ASCII characters of that class. That is also how
Python's ``re``, which has no ``\\p{..}``, can run them: the classes come from llama.cpp's own
table (tokenwalk.text.llama_unicode), not from this Python's Unicode version. Expressions
without a class run on the text itself, non-ASCII whitespace replaced by 0x0B. ``\\s`` means
ASCII whitespace (re.ASCII), as in the C++ regex; ``$`` means the end of the piece.

For a few expressions llama.cpp runs hand-written code instead of std::regex (GPT-2's,
Llama 3's, Qwen2's, Qwen3.5's, the newline split); that code follows the expression, and here
the expression itself runs. Three pre-tokenizers whose hand-written code does something no
expression in the table says (``kimi-k2``, ``afmoe``, ``tiny_aya``/``cohere2moe``) are refused
in one line.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from tokenwalk.errors import TokenwalkError, printable
from tokenwalk.text.llama_unicode import RANGES, WHITESPACE

# -- llama.cpp's regular expressions per pre-tokenizer type (llm_tokenizer_bpe) -------------
_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_LLAMA3 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
           "|\\s+(?!\\S)|\\s+")
_QWEN2 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
          "|\\s+(?!\\S)|\\s+")
_CJK_DEEPSEEK3 = "[一-龥぀-ゟ゠-ヿ]+"
_DEEPSEEK3_MAIN = ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                   "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")
_UPPER_LOWER = ("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+%s"
                "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*%s")
_NEWLINES = "[^\\n]+|[\\n]+"
_FINNISH = " ?[^(\\s|.,!?…。，、।۔،)]+"

REGEXES: dict[str, tuple[str, ...]] = {
    "default": ("[\\p{P}\\$\\+<=>\\^~\\|]+", _GPT2, "\\p{N}+", "[0-9][0-9][0-9]"),
    "llama3": (_LLAMA3,),
    "jais2": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
              "|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)"
              "|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",),
    "dbrx": (_LLAMA3,),
    "deepseek-llm": (
        "[\r\n]",
        # \s?[letters of the scripts llama.cpp lists]+ (written with escapes: the ranges hold
        # characters an editor could normalise)
        "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
        "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
        "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-"
        "\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d"
        "\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-"
        "\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113"
        "\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149"
        "\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b"
        "\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-"
        "\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0"
        "-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        "[一-龥ࠀ-一가-퟿]+",
        "\\p{N}+",
    ),
    "deepseek3-llm": ("\\p{N}{1,3}", _CJK_DEEPSEEK3, _DEEPSEEK3_MAIN),
    "spark2-5": ("\\p{N}{1,3}", _CJK_DEEPSEEK3,
                 "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                 "| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+", "\\p{N}"),
    "youtu": ("[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
              "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" + _CONTRACTIONS + "?"
              "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" + _CONTRACTIONS + "?"
              "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "deepseek-coder": ("[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"),
    "falcon": ("[\\p{P}\\$\\+<=>\\^~\\|`]+", _GPT2, "[0-9][0-9][0-9]"),
    "starcoder": ("\\p{N}", _GPT2),
    "gpt2": (_GPT2,),
    "qwen2": (_QWEN2,),
    "qwen35": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
               "|\\s+(?!\\S)|\\s+",),
    "poro": (_FINNISH,),
    "chatglm4": (_LLAMA3,),
    "viking": (_FINNISH, "\\p{N}"),
    "tekken": (_UPPER_LOWER % ("", "") + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "chameleon": ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
                  "[\\p{P}!-/:-@\\[-`{-~]", _GPT2),
    "gpt4o": (_UPPER_LOWER % (_CONTRACTIONS + "?", _CONTRACTIONS + "?")
              + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "granite-emb-multi": (
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+" + _CONTRACTIONS + "?"
        "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*" + _CONTRACTIONS + "?"
        "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "superbpe": ("\\p{N}+", "(?=(\\d{3})+(?!\\d))"),
    "bailingmoe": ("'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
                   "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",),
    "seed-coder": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+"
                   "|\\s+(?!\\S)|\\s+",),
    "ufakzeka": ("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "laguna": (_NEWLINES, _QWEN2),
    "exaone-moe": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}"
                   "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",),
    "gemma4": (_NEWLINES,),
    "minicpm5": ("\\p{N}{1,3}", _CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                 "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "whitespace": ("\\S+",),
}
# llama.cpp sends these through the same expressions as another type
for _same, _as in (("smaug", "dbrx"), ("hunyuan-dense", "deepseek3-llm"), ("joyai-llm", "deepseek3-llm"),
                   ("hy-v4", "deepseek3-llm"), ("refact", "starcoder"), ("command-r", "starcoder"),
                   ("smollm", "starcoder"), ("codeshell", "starcoder"), ("exaone", "starcoder"),
                   ("minerva", "starcoder"), ("mellum2", "starcoder"), ("mpt", "gpt2"), ("olmo", "gpt2"),
                   ("jais", "gpt2"), ("trillion", "gpt2"), ("granite-docling", "gpt2"), ("stablelm2", "qwen2"),
                   ("hunyuan", "qwen2"), ("solar-open", "qwen2"), ("grok-2", "qwen2"), ("bloom", "poro"),
                   ("gpt3-finnish", "poro"), ("minimax-m2", "gpt4o"), ("sarvam-moe", "gemma4")):
    REGEXES[_same] = REGEXES[_as]

# Types whose llama.cpp code is not an expression of the table: refused, with the reason.
REFUSED_TYPES = {
    "kimi-k2": "its split of Han characters is hand-written code in llama.cpp",
    "afmoe": "its digit grouping is hand-written code in llama.cpp",
    "tiny-aya": "its digit grouping from the right is hand-written code in llama.cpp",
}


@dataclass(frozen=True)
class PreTokenizer:
    """What one ``tokenizer.ggml.pre`` value means to llama.cpp."""

    name: str  # the value in the file ("" for a file without the key)
    kind: str  # llama.cpp's pre-tokenizer type (its regular expressions: REGEXES[kind])
    ignore_merges: bool = False  # a word that is a token is that token, unmerged
    add_bos: bool | None = None  # the BOS default the branch sets (None: the file or the model type decides)
    escape_spaces: bool = False  # spaces written as ▁ before the split
    byte_encode: bool = True  # words mapped through GPT-2's byte-to-unicode table

    @property
    def regexes(self) -> tuple[str, ...]:
        return REGEXES[self.kind]


def _table() -> dict[str, PreTokenizer]:
    """tokenizer.ggml.pre -> PreTokenizer, as the branches of llama_vocab::impl::load set them."""
    rows = [
        # (values, type, flags)
        (("default",), "default", {}),
        (("minicpm5",), "minicpm5", {"ignore_merges": True}),
        (("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"),
         "llama3", {"ignore_merges": True, "add_bos": True}),
        (("deepseek-llm",), "deepseek-llm", {}),
        (("deepseek-coder",), "deepseek-coder", {}),
        (("deepseek-v3",), "deepseek3-llm", {}),
        (("spark2_5",), "spark2-5", {}),
        (("youtu",), "youtu", {"ignore_merges": True}),
        (("falcon",), "falcon", {}),
        (("mpt",), "mpt", {}),
        (("starcoder",), "starcoder", {}),
        (("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
          "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4"), "gpt2", {}),
        (("jais-2",), "jais2", {}),
        (("gemma4", "granite-embed-multi-311m"), "gemma4", {"escape_spaces": True, "byte_encode": False}),
        (("sarvam-moe",), "sarvam-moe", {"escape_spaces": True, "byte_encode": False}),
        (("whitespace",), "whitespace", {"byte_encode": False}),
        (("refact",), "refact", {}),
        (("command-r",), "command-r", {}),
        (("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez"), "qwen2", {}),
        (("qwen35",), "qwen35", {}),
        (("stablelm2",), "stablelm2", {}),
        (("olmo",), "olmo", {}),
        (("dbrx",), "dbrx", {}),
        (("smaug-bpe",), "smaug", {}),
        (("poro-chat",), "poro", {}),
        (("chatglm-bpe",), "chatglm4", {}),
        (("glm4", "glm5"), "chatglm4", {"ignore_merges": True}),
        (("viking",), "viking", {}),
        (("jais",), "jais", {}),
        (("tekken",), "tekken", {"ignore_merges": True, "add_bos": True}),
        (("smollm",), "smollm", {}),
        (("codeshell",), "codeshell", {}),
        (("bloom",), "bloom", {}),
        (("gpt3-finnish",), "gpt3-finnish", {}),
        (("exaone",), "exaone", {}),
        (("exaone-moe",), "exaone-moe", {}),
        (("chameleon",), "chameleon", {"add_bos": True}),
        (("minerva-7b",), "minerva", {}),
        (("gpt-4o", "llama4", "kanana2", "talkie"), "gpt4o", {}),
        (("granite-embed-multi-97m",), "granite-emb-multi", {"ignore_merges": True}),
        (("tiny_aya", "cohere2moe"), "tiny-aya", {}),
        (("superbpe",), "superbpe", {}),
        (("trillion",), "trillion", {}),
        (("granite-docling",), "granite-docling", {}),
        (("bailingmoe", "bailingmoe2", "llada-moe"), "bailingmoe", {}),
        (("seed-coder",), "seed-coder", {}),
        (("hunyuan",), "hunyuan", {}),
        (("hunyuan-dense",), "hunyuan-dense", {}),
        (("hy_v4",), "hy-v4", {}),
        (("joyai-llm",), "joyai-llm", {}),
        (("kimi-k2",), "kimi-k2", {}),
        (("ufakzeka",), "ufakzeka", {}),
        (("grok-2",), "grok-2", {}),
        (("afmoe",), "afmoe", {}),
        (("laguna",), "laguna", {}),
        (("minimax-m2",), "minimax-m2", {}),
        (("solar-open",), "solar-open", {}),
        (("mellum2",), "mellum2", {}),
    ]
    return {name: PreTokenizer(name, kind, **flags) for names, kind, flags in rows for name in names}


PRE_TOKENIZERS = _table()
# A BPE vocabulary without tokenizer.ggml.pre: llama.cpp warns and uses 'default'.
MISSING_PRE = PreTokenizer("", "default")


def supported_pre_names() -> list[str]:
    """The tokenizer.ggml.pre values this module cuts as llama.cpp does, sorted."""
    return sorted(n for n, p in PRE_TOKENIZERS.items() if p.kind not in REFUSED_TYPES)


def pre_tokenizer(pre: str | None, source: str = "GGUF metadata") -> PreTokenizer:
    """The PreTokenizer of a ``tokenizer.ggml.pre`` value (None: the key is missing), or a one-line
    TokenwalkError naming the value: unknown to llama.cpp, or one of REFUSED_TYPES."""
    if pre is None or pre == "":
        return MISSING_PRE
    found = PRE_TOKENIZERS.get(pre) if isinstance(pre, str) else None
    if found is None:
        raise TokenwalkError(f"{source}: tokenizer.ggml.pre {printable(repr(pre)[:60])} is not a pre-tokenizer llama.cpp "
                             f"knows (known: {len(PRE_TOKENIZERS)} values; see `tokenwalk tokenize --help`)")
    if found.kind in REFUSED_TYPES:
        raise TokenwalkError(f"{source}: tokenizer.ggml.pre {pre!r} is not supported: {REFUSED_TYPES[found.kind]}")
    return found


# -- the collapsed text and expressions (unicode_regex_split) ---------------------------------
_STARTS = []
_CLASSES = []
for _entry in RANGES.split():
    _STARTS.append(int(_entry[:-1], 16))
    _CLASSES.append(_entry[-1])
_STAND_IN = {"N": "\xd1", "L": "\xd2", "P": "\xd3", "M": "\xd4", "S": "\xd5", "O": "\xd0"}
# \p{..} -> (stand-in, the ASCII characters of the class), as k_ucat_cpt / k_ucat_map
_UCAT = {"N": ("\xd1", "\x30-\x39"), "L": ("\xd2", "\x41-\x5a\x61-\x7a"),
         "P": ("\xd3", "\x21-\x23\x25-\x2a\x2c-\x2f\x3a-\x3b\x3f-\x40\\\x5b-\\\x5d\x5f\\\x7b\\\x7d"),
         "M": ("\xd4", ""), "S": ("\xd5", "\\\x24\\\x2b\x3c-\x3e\x5e\x60\\\x7c\\\x7e")}
_UCAT_NAMES = {"\\p{N}": "N", "\\p{L}": "L", "\\p{P}": "P", "\\p{M}": "M", "\\p{S}": "S",
               "\\p{Lu}": "L", "\\p{Ll}": "L", "\\p{Lt}": "L", "\\p{Lm}": "L", "\\p{Lo}": "L"}


def _uses_classes(regex: str) -> bool:
    return any(name in regex for name in _UCAT_NAMES)


def _collapse_regex(regex: str) -> str:
    r"""Each \p{X} as the class of its stand-in byte plus its ASCII members (llama.cpp's loop,
    including its way of telling a bracket that opens a class from an escaped one)."""
    out = []
    inside = False
    i = 0
    n = len(regex)
    while i < n:
        ch = regex[i]
        if ch == "[" and (i == 0 or regex[i - 1] != "\\"):
            out.append("[")
            inside = True
        elif inside and ch == "]" and regex[i - 1] != "\\":
            out.append("]")
            inside = False
        elif ch == "\\" and i + 3 < n and regex[i + 1] == "p" and regex[i + 2] == "{" \
                and 0 <= regex.find("}", i + 3) <= i + 10 and regex[i:regex.find("}", i + 3) + 1] in _UCAT_NAMES:
            close = regex.find("}", i + 3)
            stand_in, ascii_members = _UCAT[_UCAT_NAMES[regex[i:close + 1]]]
            out.append(stand_in + ascii_members if inside else "[" + stand_in + ascii_members + "]")
            i = close
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _end_anchor(regex: str) -> str:
    """ECMAScript's ``$`` (end of the input) as Python's ``\\Z``: Python's ``$`` also matches
    before a final newline."""
    out = []
    inside = False
    escaped = False
    for ch in regex:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[" and not inside:
            inside = True
        elif ch == "]" and inside:
            inside = False
        elif ch == "$" and not inside:
            out.append("\\Z")
            continue
        out.append(ch)
    return "".join(out)


_COMPILED: dict[str, tuple[re.Pattern, bool]] = {}


def _compiled(regex: str) -> tuple[re.Pattern, bool]:
    """(pattern, runs on the collapsed text?) for one of llama.cpp's expressions."""
    hit = _COMPILED.get(regex)
    if hit is None:
        collapsed = _uses_classes(regex)
        if collapsed and not regex.isascii():
            # llama.cpp throws here: "Regex includes both unicode categories and non-ASCII characters"
            raise TokenwalkError(f"pre-tokenizer expression {regex[:40]!r}... mixes Unicode classes and "
                                 "non-ASCII characters, which llama.cpp cannot run either")
        source = _collapse_regex(regex) if collapsed else regex
        hit = (re.compile(_end_anchor(source), re.ASCII), collapsed)
        _COMPILED[regex] = hit
    return hit


_CLASS_CACHE: dict[str, str] = {}


def _stand_in(ch: str) -> str:
    """The collapsed character of a non-ASCII character."""
    got = _CLASS_CACHE.get(ch)
    if got is None:
        cp = ord(ch)
        if cp in WHITESPACE:
            got = "\x0b"
        else:
            got = _STAND_IN[_CLASSES[bisect_right(_STARTS, cp) - 1]]
        _CLASS_CACHE[ch] = got
    return got


def char_class(ch: str) -> str:
    """llama.cpp's class of one character: N, L, P, M, S, O, or W (whitespace)."""
    cp = ord(ch)
    if cp in WHITESPACE:
        return "W"
    return _CLASSES[bisect_right(_STARTS, cp) - 1]


def collapse(text: str) -> str:
    """The collapsed text: ASCII kept, every other character its class's stand-in byte."""
    if text.isascii():
        return text
    stand_in = _stand_in
    return "".join(ch if ch < "\x80" else stand_in(ch) for ch in text)


def _plain(text: str) -> str:
    """The text for expressions without classes: non-ASCII whitespace as 0x0B."""
    if text.isascii():
        return text
    return "".join("\x0b" if ch >= "\x80" and ord(ch) in WHITESPACE else ch for ch in text)


def split_words(text: str, regexes: tuple[str, ...]) -> list[str]:
    """``text`` cut by llama.cpp's expressions, one after the other (unicode_regex_split)."""
    if not text:
        return []
    ends = [len(text)]
    subjects: dict[bool, str] = {}
    for regex in regexes:
        pattern, collapsed = _compiled(regex)
        subject = subjects.get(collapsed)
        if subject is None:
            subject = subjects[collapsed] = collapse(text) if collapsed else _plain(text)
        finditer = pattern.finditer
        out = []
        append = out.append
        start = 0
        for end in ends:
            # each piece on its own, as llama.cpp's regex_iterator over [start, end)
            piece = subject[start:end] if (start or end != len(subject)) else subject
            pos = 0
            for m in finditer(piece):
                s, e = m.span()
                if s > pos:
                    append(start + s)
                if e > s:
                    append(start + e)
                pos = e
            if start + pos < end:
                append(end)
            start = end
        ends = out
    words = []
    start = 0
    for end in ends:
        words.append(text[start:end])
        start = end
    return words


def pre_tokenize(text: str, pre: str | None = "smollm") -> list[str]:
    """Split ``text`` into the words BPE merges work inside (no piece crosses two), as llama.cpp
    does for ``tokenizer.ggml.pre = pre`` (None: a file without the key)."""
    return split_words(text, pre_tokenizer(pre).regexes)
