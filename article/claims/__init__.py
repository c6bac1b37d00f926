"""Claims: what the prose says about its numbers, as conditions the build checks.

A sentence such as "a chunk of 512 is past the balance point" stays true only while the
numbers agree. Each such sentence carries a marker, `{?claim_name}`, and the claim is a
condition on the namespace `n`, written once here (`article/claims/chNN.py`, one module per
chapter, in reading order). The build evaluates every claim the chapters name
(publish/markdown/claims.py); a false one stops the build with one line naming the chapter,
the line, the claim and the numbers.

A condition is one Python expression over the names of `n` (numbers, and lists of them
indexed with a constant), with + - * / ** %, comparisons (chained too), `and`, `or`, `not`,
and the functions abs, min, max, round, len. Nothing else is accepted: a claim reads numbers,
it does not run code. Standard library only.
"""

from __future__ import annotations

import ast
import operator

from article.claims import ch01, ch02, ch03, ch04, ch05, ch06, ch07

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow, ast.Mod: operator.mod}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}
_FUNCTIONS = {"abs": abs, "min": min, "max": max, "round": round, "len": len}


class ClaimError(ValueError):
    """A claim that cannot be evaluated: unknown, badly written, or naming what `n` lacks."""


CLAIMS: dict[str, str] = {}  # name -> condition, every chapter's
for _module in (ch01, ch02, ch03, ch04, ch05, ch06, ch07):
    if CLAIMS.keys() & _module.CLAIMS.keys():
        raise ClaimError(f"{_module.__name__}: claims named twice: {sorted(CLAIMS.keys() & _module.CLAIMS.keys())}")
    CLAIMS.update(_module.CLAIMS)


def _evaluate(node: ast.AST, n: dict, used: dict):
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, n, used)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in _FUNCTIONS:
            raise ClaimError(f"{node.id} is a function here")
        if node.id not in n:
            raise ClaimError(f"n has no {node.id}")
        used[node.id] = n[node.id]
        return n[node.id]
    if isinstance(node, ast.Subscript):  # a list of the namespace at a constant index
        index = ast.literal_eval(node.slice) if isinstance(node.slice, (ast.Constant, ast.UnaryOp)) else None
        if not isinstance(index, int):
            raise ClaimError(f"{ast.unparse(node)!r}: an index must be a whole number")
        return _evaluate(node.value, n, used)[index]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left, n, used), _evaluate(node.right, n, used))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        value = _evaluate(node.operand, n, used)
        return -value if isinstance(node.op, ast.USub) else not value
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _evaluate(node.left, n, used)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, n, used)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, n, used) for v in node.values]  # all of them: every number is shown
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS \
            and not node.keywords:
        return _FUNCTIONS[node.func.id](*(_evaluate(a, n, used) for a in node.args))
    raise ClaimError(f"{ast.unparse(node)!r} is not allowed in a claim")


def evaluate(name: str, n: dict) -> tuple[bool, dict]:
    """(whether claim `name` holds for `n`, the names it read with their values)."""
    if name not in CLAIMS:
        raise ClaimError(f"no claim named {name} in article/claims/")
    try:
        tree = ast.parse(CLAIMS[name], mode="eval")
    except SyntaxError as exc:
        raise ClaimError(f"claim {name}: {CLAIMS[name]!r} is not an expression") from exc
    used: dict = {}
    try:
        holds = _evaluate(tree, n, used)
    except ClaimError as exc:
        raise ClaimError(f"claim {name}: {exc}") from exc
    except (TypeError, IndexError, KeyError, ZeroDivisionError) as exc:
        raise ClaimError(f"claim {name}: {type(exc).__name__}: {exc}") from exc
    return bool(holds), used


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def explain(name: str, n: dict) -> str:
    """`condition (name = value, ...)`: the claim and the numbers it read."""
    _, used = evaluate(name, n)
    numbers = ", ".join(f"{k} = {_shown(v)}" for k, v in used.items())
    return f"{CLAIMS[name]} ({numbers})"
