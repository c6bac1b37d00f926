"""Claims: `a chunk of 512 is past the balance point{?moe_chunk_past_balance}`.

The marker `{?name}` follows the sentence it guards and prints nothing; `name` is a
condition of the article layer (article/claims/). Each rendered marker is recorded in
env["article"].claims; once every chapter is rendered, `check_claims` evaluates them all and
a false or unknown one fails the build with one line: the chapter file, the line of the
marker in the chapter's source, the claim, its condition and the numbers it read.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import BuildError, shown

MARKER = re.compile(r"\{\?([a-z][a-z0-9_]*)\}")


def _claim_rule(state, silent: bool) -> bool:
    if state.src[state.pos] != "{":
        return False
    match = MARKER.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("claim", "", 0)
        token.meta["name"] = match.group(1)
        state.env["article"].claims.append((state.env["file"], match.group(1)))
    state.pos = match.end()
    return True


def claims_plugin(md) -> None:
    md.inline.ruler.before("emphasis", "claim", _claim_rule)
    md.add_render_rule("claim", lambda self, tokens, idx, options, env: "")


def marker_lines(path: Path) -> dict[str, int]:
    """Claim name -> the first source line of `path` that names it."""
    lines: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for name in MARKER.findall(line):
            lines.setdefault(name, number)
    return lines


def check_claims(recorded: list[tuple[str, str]], numbers: dict, files: list[Path]) -> int:
    """Evaluate every claim the chapters name (`recorded`: (shown file, claim) in page
    order); raise BuildError for the first false or unknown one. Returns how many distinct
    claims were checked."""
    from article.claims import ClaimError, evaluate, explain

    sources = {shown(path): path for path in files}
    checked: set[str] = set()
    for file, name in recorded:
        if name in checked:
            continue
        path = sources.get(file)
        line = marker_lines(path).get(name) if path is not None else None
        where = f"{file}:{line}" if line else file
        try:
            holds, _ = evaluate(name, numbers)
        except ClaimError as exc:
            raise BuildError(f"{where}: {exc}") from exc
        if not holds:
            raise BuildError(f"{where}: claim {name} is false: {explain(name, numbers)}")
        checked.add(name)
    return len(checked)
