"""Pyodide's standard library made quick to start: the page's Python spends most of its
start compiling the standard library's modules from source (the package's
python_stdlib.zip holds .py files only), under WebAssembly, at every cold start.

`prepare_stdlib` writes a python_stdlib.zip with the same files, stored rather than
deflated, except that every module Python imports at start-up or for the core wheel's own
imports is there precompiled: a .pyc (unchecked hash) in place of its .py, as in Pyodide's
own "pyc" distribution (a traceback through those modules shows file and line, not the
line's text). The .pyc files are compiled by Pyodide itself under Node
(publish/stdlib.mjs), so their format is the interpreter's. Measured in Chromium: Python's
start (loadPyodide after its wasm is compiled) takes about half as long; the file sent with
Brotli is smaller than the package's deflated zip (a stored zip compresses better as a
whole). Cached by content under .cache/stdlib/ (Node takes seconds); without Node the
package's zip is used as is.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

SCRIPT = Path(__file__).with_name("stdlib.mjs")


def imported_names(wheel: Path) -> list[str]:
    """The absolute imports (dotted names) of the wheel's own modules, itself excluded."""
    names = set()
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not name.endswith(".py"):
                continue
            for node in ast.walk(ast.parse(archive.read(name), filename=name)):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module)
        own = {name.split("/")[0] for name in archive.namelist() if name.endswith(".py")}
    return sorted(n for n in names if n.split(".")[0] not in own)


def prepare_stdlib(package: Path, wheel: Path, cache: Path) -> tuple[Path | None, str]:
    """(the prepared python_stdlib.zip in the cache, "") or (None, why not) when Node is
    missing or fails; the caller then keeps the package's own zip."""
    node = shutil.which("node")
    if node is None:
        return None, "node is missing: Pyodide's standard library is served as the package ships it (slower start)"
    stdlib = package / "python_stdlib.zip"
    names = imported_names(wheel)
    digest = hashlib.sha256()
    for part in (stdlib.read_bytes(), SCRIPT.read_bytes(), (package / "pyodide.asm.wasm").read_bytes()[:1 << 20],
                 json.dumps(names).encode()):
        digest.update(hashlib.sha256(part).digest())
    cached = cache / f"python_stdlib.{digest.hexdigest()[:16]}.zip"
    if cached.is_file():
        return cached, ""
    cache.mkdir(parents=True, exist_ok=True)
    names_file = cache / f"names.{os.getpid()}.json"
    part = cached.with_name(f"{cached.name}.{os.getpid()}.part")
    names_file.write_text(json.dumps(names))
    try:
        try:
            done = subprocess.run([node, str(SCRIPT), str(package), str(part), str(names_file)],
                                  capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return None, f"{SCRIPT.name} ran past 300 s: Pyodide's standard library is served as the package ships it"
        if done.returncode != 0 or not part.is_file():
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"{SCRIPT.name} failed ({last}): Pyodide's standard library is served as the package ships it"
        os.replace(part, cached)
    finally:
        names_file.unlink(missing_ok=True)
        part.unlink(missing_ok=True)
    return cached, ""
