"""What the committed fit was computed from: the published runs' files and the fit's code,
hashed (`inputs_sha256`), so that `make test` sees an edit that needs a refit.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from tokenwalk.timing.llama_bench import DATA_DIR


def code_modules(root: str = "tokenwalk.timing.fit.refit") -> list[str]:
    """The tokenwalk modules the fit runs: `root` and, transitively, every tokenwalk module
    it imports (read from their import statements, so a module is counted whether or not
    it happens to be loaded)."""
    seen, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse(Path(_module_file(name)).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.split(".")[0] == "tokenwalk"]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tokenwalk":
                # `from tokenwalk.timing import model` names a module, `from x import name` a name
                todo += [f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")]
                todo.append(node.module)
    return sorted(seen)


def _module_file(name: str) -> str:
    import importlib.util

    return importlib.util.find_spec(name).origin


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, AttributeError, ValueError):
        return False


def code_text(path: Path) -> str:
    """A module's code without its comments, docstrings and blank lines (what runs, not what
    explains it); positions from `ast` and `tokenize`, so the text is the same on every Python."""
    import io
    import tokenize

    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            for i in range(body[0].lineno - 1, body[0].end_lineno):
                lines[i] = ""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def inputs_sha256(data_dir: Path | None = None) -> dict:
    """What a refit depends on, hashed: {"runs": sha256 of the published runs' data files
    (every .json in the llama-bench folder, by name, and graph_launches.json), "code": sha256 of the fit's code (every
    tokenwalk module it runs, `code_modules`, comments and docstrings left out)}. Recorded in
    timing_fit.json; a test compares it with the current files, so a change to either is
    caught by `make test` and refitted by `make refit-check` (seven minutes), not on every run."""
    runs = hashlib.sha256()
    for path in sorted(Path(data_dir or DATA_DIR).glob("*.json")):
        runs.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    # the launches a run's step is charged for are data the fit reads too
    from tokenwalk.data_refs import DEFAULT_ROOT
    from tokenwalk.physics.launches import LAUNCHES_FILE

    runs.update(LAUNCHES_FILE.encode() + b"\0" + (DEFAULT_ROOT / LAUNCHES_FILE).read_bytes() + b"\0")
    code = hashlib.sha256()
    for name in code_modules():
        code.update(name.encode() + b"\0" + code_text(Path(_module_file(name))).encode() + b"\0")
    return {"runs": runs.hexdigest(), "code": code.hexdigest()}
