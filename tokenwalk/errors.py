"""Errors meant for a person: one line that names the file, the field and the cause."""


class TokenwalkError(Exception):
    """A problem with the user's input (a file, a field, an option).

    The CLI and build.py print ``str(error)`` as one line and exit with status 2 (CLI) or
    1 (build), never a traceback. Subclasses say which kind of input was wrong.
    """


class GGUFError(TokenwalkError):
    """A GGUF file that cannot be read: names the file, the byte offset and the field."""


class SpecError(TokenwalkError):
    """A model or machine spec (JSON file or preset) with a missing or bad field."""
