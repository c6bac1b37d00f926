"""Math: `$...$`, `$$...$$` inline and display blocks -> MathML Core (math-core) at build
time. The converter is env["math"] (one per build: it numbers equations); an error names
the chapter line and the formula."""

from __future__ import annotations

from mdit_py_plugins.dollarmath import dollarmath_plugin

from .state import token_error

INLINE = ("math_inline", "math_inline_double")
BLOCK = ("math_block", "math_block_label")


def _math(converter, latex: str, display: bool, env, token) -> str:
    from math_core import LatexError
    try:
        mathml = converter.convert_with_local_state(latex, displaystyle=display)
    except LatexError as exc:
        raise token_error(env, token, f"math ${latex.strip()[:40]}$: {str(exc).splitlines()[0]}") from exc
    # a long formula scrolls sideways: reachable by keyboard
    return f'<div class="math-display" tabindex="0">{mathml}</div>' if display else mathml


def _convert_inline(converter, token, env) -> None:
    for child in token.children or []:
        if child.type in INLINE:
            child.meta["html"] = _math(converter, child.content, child.type == "math_inline_double", env, token)


def _core_math(state) -> None:
    env = state.env
    converter = env["math"]
    for note in env.get("sidenote_tokens", {}).values():  # notes lifted out of the stream
        for token in note:
            for child in token.children or []:
                if child.type in INLINE:  # inline math in a note stays inline
                    child.meta["html"] = _math(converter, child.content, False, env, token)
    for token in state.tokens:
        if token.type in BLOCK:
            token.meta["html"] = _math(converter, token.content, True, env, token)
        elif token.type == "inline":
            _convert_inline(converter, token, env)


def _render_math(self, tokens, idx, options, env):
    return tokens[idx].meta["html"]


def math_plugin(md) -> None:
    dollarmath_plugin(md, allow_space=True, allow_digits=False, double_inline=True)
    md.core.ruler.push("math", _core_math)
    for name in INLINE + BLOCK:
        md.add_render_rule(name, _render_math)
