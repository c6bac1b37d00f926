"""Errors meant for a person: one line that names the file, the field and the cause."""

import os
import stat


class TokenwalkError(Exception):
    """A problem with the user's input (a file, a field, an option).

    The CLI and build.py print ``str(error)`` as one line and exit with status 2 (CLI) or
    1 (build), never a traceback. Subclasses say which kind of input was wrong.

    The message passes through `printable`: a key name, a value or a file name from a
    file cannot put a newline, an escape sequence or a lone surrogate into it.
    """

    def __init__(self, message="", *args):
        super().__init__(printable(message) if isinstance(message, str) else message, *args)


class GGUFError(TokenwalkError):
    """A GGUF file that cannot be read: names the file, the byte offset and the field."""


class SpecError(TokenwalkError):
    """A model or machine spec (JSON file or preset) with a missing or bad field."""


def printable(value) -> str:
    """`value` as text safe to print on a terminal: every character that is not printable
    (control bytes such as ESC, BEL, CR, NUL and newlines, C1 controls, bidirectional
    overrides, lone surrogates from bytes that were not UTF-8) is written as a Python
    escape (``\\x1b``, ``\\n``, ``\\u202e``, ``\\udcff``). Printable text, accents and
    CJK included, is unchanged. Used wherever a string from a file reaches a terminal
    or an error message."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    cp = ord(ch)
    if ch in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def check_regular_file(path, error=TokenwalkError) -> None:
    """Raise `error` (one line) unless `path` is a regular file: opening a FIFO waits for a
    writer for ever, and a device or a socket is never a model or a spec. A missing file is
    left to the caller's open(), which names it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        return
    what = ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    raise error(f"{printable(os.fspath(path))}: is {what}, not a regular file; give the path of a file")
