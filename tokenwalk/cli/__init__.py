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
import pkgutil
import sys

from tokenwalk.errors import TokenwalkError


def _subcommands():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            yield module


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except TokenwalkError as error:
        print(f"tokenwalk {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
