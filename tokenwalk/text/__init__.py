"""Text: the toy byte-level BPE, the model tokenizers (byte-level BPE and SentencePiece-style,
chosen by the GGUF header), special tokens and chat templates."""

from tokenwalk.errors import TokenwalkError


def check_text(text: str, label: str = "the text") -> str:
    """`text` if it can be encoded as UTF-8, else a TokenwalkError of one line.

    A Python str can hold lone surrogates (U+D800-U+DFFF): half of an emoji cut by a
    JavaScript string slice, or a byte that was not UTF-8 in a command-line argument
    (Python maps it to U+DC80-U+DCFF). Neither is a character a tokenizer can cut.
    """
    if not isinstance(text, str):
        raise TokenwalkError(f"{label} must be a string, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        cp = ord(text[error.start])
        if 0xDC80 <= cp <= 0xDCFF:
            what = f"the byte 0x{cp - 0xDC00:02X}, which is not UTF-8 (an input that is not UTF-8 text?)"
        else:
            what = f"a lone surrogate U+{cp:04X} (half of a character such as an emoji)"
        raise TokenwalkError(f"{label}: character {error.start + 1} is {what}; remove it") from None
    return text
