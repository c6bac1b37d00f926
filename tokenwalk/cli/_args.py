"""Number options of the commands, checked against the schema's domains
(`tokenwalk.specs.schema`): the same bounds as the spec files and the page's form, and
one line from argparse (exit status 2) when a value is outside them."""

from __future__ import annotations

import argparse

from tokenwalk.errors import TokenwalkError


def checked(field: str, domains: dict):
    """An argparse type: text -> a number within `domains[field]`, or an ArgumentTypeError
    saying what the number must be."""
    from tokenwalk.specs.schema import check_value

    domain = domains[field]

    def convert(text: str):
        try:
            value = int(text) if domain.whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'an integer' if domain.whole else 'a number'}: {text!r}") from None
        try:
            return check_value(value, domain, "")
        except TokenwalkError as error:
            raise argparse.ArgumentTypeError(str(error).strip()) from None

    return convert
