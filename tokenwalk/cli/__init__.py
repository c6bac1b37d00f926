"""The `tokenwalk` command.

Each subcommand is one module in this package that defines::

    NAME = "inspect"                     # the subcommand
    HELP = "one line for --help"
    def add_arguments(parser): ...       # argparse arguments
    def run(args) -> int: ...            # exit status

Modules are discovered, so adding a subcommand touches no other file. A TokenwalkError
(bad path, bad file, bad field) becomes one line on stderr and exit status 2.
"""

import argparse
import importlib
import os
import pkgutil
import sys

from tokenwalk.errors import TokenwalkError, printable


def _subcommands():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            yield module


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block): `tokenwalk walk: argument ...`."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {printable(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tokenwalk",
        description="The numbers of 'Transformers and local inference', for any model and machine.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _subcommands():
        p = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


# Errors a hostile or broken input can raise deep in the arithmetic or the parsers (a
# 400-digit integer, JSON nested 100,000 deep, a list where a number belongs): one line
# and status 2 like a TokenwalkError, not a traceback. TOKENWALK_DEBUG=1 shows the traceback.
INPUT_ERRORS = (ArithmeticError, RecursionError, MemoryError, ValueError, TypeError, KeyError, IndexError,
                AttributeError)


class OutputError(Exception):
    """Standard output or error could not take a write (a full disk, /dev/full, a closed
    descriptor): the command says so in one line, exit status 2."""


class _Escaping:
    """A text stream whose writes have their non-printable characters escaped (ESC, BEL,
    CR, NUL, C1 controls, bidi overrides, lone surrogates), newlines and tabs kept: what a
    file says reaches the terminal as text, never as a command to it. A failed write or
    flush raises OutputError (a broken pipe stays BrokenPipeError: the reader left)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        if not text.isprintable():
            text = "\n".join("\t".join(printable(part) for part in line.split("\t")) for line in text.split("\n"))
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputError(error.strerror or str(error)) from None

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputError(error.strerror or str(error)) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def printable_strings(value):
    """`value` (dicts, lists, strings) with every string passed through `printable`: a
    report whose names come from a file, ready for a text layout (no raw newline or
    control character can add or move a line)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_strings(k): printable_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_strings(v) for v in value)
    return value


def dump_json(value, indent: int | None = 2) -> str:
    """`value` as strict JSON (RFC 8259: no NaN or Infinity) with every character that is not
    printable escaped as \\uXXXX (JSON allows it, and a terminal then shows the text).
    A value JSON cannot carry is a TokenwalkError naming the field, not `Infinity`."""
    import json
    import math

    def find(node, path):
        if isinstance(node, float) and not math.isfinite(node):
            return path, node
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, (list, tuple)) else ()
        for key, child in items:
            found = find(child, f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None

    try:
        text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:
        found = find(value, "")
        where = f"field '{printable(found[0])}' is {found[1]}" if found else "a number is not finite"
        raise TokenwalkError(f"--json: {where}, which JSON cannot carry: the input's numbers are out of "
                             f"range (too large or too small)") from None
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in "\n " else _json_escape(ord(ch)) for ch in text)


def _json_escape(cp: int) -> str:
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    high, low = divmod(cp - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def _discard_stdout() -> None:
    """Point the standard output's descriptor at /dev/null, so that the interpreter's own
    flush at exit finds nothing to fail on (what was left unwritten is lost either way)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if out is None:  # started with its standard output closed: nothing could be printed
        if err is not None:
            print(f"tokenwalk {args.command}: standard output is closed; nothing to write to", file=err)
        return 2
    sys.stdout, sys.stderr = _Escaping(out), _Escaping(err) if err is not None else _Escaping(open(os.devnull, "w"))
    try:
        status = int(args._run(args) or 0)
        sys.stdout.flush()  # a full disk shows here, not in the interpreter's flush at exit
        return status
    except TokenwalkError as error:
        print(f"tokenwalk {args.command}: {printable(error)}", file=err)
        return 2
    except OutputError as error:
        if out is sys.__stdout__:
            _discard_stdout()
        if err is not None:
            try:
                print(f"tokenwalk {args.command}: cannot write the output: {printable(error)}", file=err)
            except OSError:
                pass
        return 2
    except BrokenPipeError:
        if out is sys.__stdout__:
            _discard_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except INPUT_ERRORS as error:
        if os.environ.get("TOKENWALK_DEBUG"):
            raise
        text = printable(str(error))[:300]
        print(f"tokenwalk {args.command}: cannot use this input: {type(error).__name__}"
              + (f": {text}" if text else "") + " (TOKENWALK_DEBUG=1 shows where)", file=err)
        return 2
    finally:
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":
    sys.exit(main())
