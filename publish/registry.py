"""The figure registry: discover figure modules, key them, render only what changed.

A figure module follows the contract in figures/__init__.py (ID, KIND, RENDERER, ALT or
alt(), inputs(ctx), render()); every figure gets the same context (the build makes it once). Its cache key is the sha256 of:
  - the module's own source and that of every module it imports from figures/, tokenwalk/
    or article/, directly or through another (read from the import statements,
    `helper_modules`): what draws it, so an edit to _plot.py re-renders the matplotlib
    figures and no others, and one to tokenwalk_app/quant_view.py figure 10;
  - the JSON of inputs(ctx): every number it receives from tokenwalk and the data files;
  - the renderer's version (manim or matplotlib; "svg" is our own code, already hashed);
  - FORMAT, bumped when the registry changes what it stores.
An unchanged key reuses .cache/figures/<ID>/<key>/ (the files render() wrote, plus
figure.html, the HTML it returned). Any exception raised by a module, and any output that
breaks the contract (not a string, malformed SVG, an <img> whose file was not written)
becomes a BuildError naming the module file and line.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import importlib.util
import json
import os
import re
import shutil
import sys
import time
import types
import xml.etree.ElementTree as ET
from pathlib import Path

from . import BuildError
from .errors import fail as _fail  # the one traceback-to-location function
from .errors import shown as _shown

FORMAT = "2"  # 2: helpers are the modules a figure imports, not every figures/_*.py
KEEP_KEYS = 3  # cached renderings kept per figure (the newest); older ones are pruned


@dataclasses.dataclass
class Figure:
    id: str
    path: Path
    module: types.ModuleType
    key: str = ""
    inputs: dict | None = None
    html: str = ""
    alt: str = ""
    status: str = ""  # "cached" or "rendered"
    seconds: float = 0.0
    import_seconds: float = 0.0
    cache_dir: Path | None = None


def _package_for(folder: Path, root: Path) -> str:
    """The package name figure modules in `folder` import under.

    The project's figures/ is the package `figures` (so `from ._svg import Svg` and
    `from figures._svg import Svg` both work); another folder (a test's fake figures)
    gets a private package name of its own.
    """
    if folder.resolve() == (root / "figures").resolve():
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        return "figures"
    name = "_figures_" + hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    return name


def discover(folder: Path, root: Path) -> list[Figure]:
    """Import every figures/*.py not starting with '_', in name order."""
    if not folder.is_dir():
        return []
    package = _package_for(folder, root)
    found = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        start = time.perf_counter()
        try:
            module = importlib.import_module(f"{package}.{path.stem}")
        except BaseException as exc:  # a figure module may fail in any way
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise _fail(path, exc, "cannot import figure module") from exc
        import_seconds = time.perf_counter() - start
        for attr in ("ID", "render", "inputs"):
            if not hasattr(module, attr):
                raise BuildError(f"{_shown(path)}: figure module has no {attr} (see figures/__init__.py)")
        fig_id = module.ID
        if not isinstance(fig_id, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", fig_id):
            raise BuildError(f"{_shown(path)}: ID must be a lower-case id like 'balance-point', got {fig_id!r}")
        if fig_id in seen:
            raise BuildError(f"{_shown(path)}: ID {fig_id!r} is already used by {_shown(seen[fig_id])}")
        seen[fig_id] = path
        found.append(Figure(fig_id, path, module, import_seconds=import_seconds))
    return found


def renderer_version(name: str) -> str:
    """The version of the library that draws a figure, part of its cache key."""
    if name in ("matplotlib", "manim"):
        from importlib.metadata import PackageNotFoundError, version
        try:
            return f"{name}=={version(name)}"
        except PackageNotFoundError:
            return f"{name}==missing"
    return str(name)


PROJECT = Path(__file__).resolve().parent.parent
# Besides its own folder, the project's packages whose code may draw a figure (the browser
# views of tokenwalk draw the interactive figures; tokenwalk.format prints their numbers).
CODE_PACKAGES = ("tokenwalk", "tokenwalk_app", "article")
_PARSED: dict[tuple[Path, int], ast.AST] = {}


def _module_file(folder: Path, parts: list[str]) -> Path | None:
    """The file of the module `parts` (relative to `folder`), or None when it is not there."""
    if any(not p.isidentifier() for p in parts):
        return None
    base = folder.joinpath(*parts)
    candidates = (base / "__init__.py",) if not parts else (base.with_suffix(".py"), base / "__init__.py")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def _tree(path: Path) -> ast.AST:
    key = (path, path.stat().st_mtime_ns)
    if key not in _PARSED:
        _PARSED[key] = ast.parse(path.read_bytes(), filename=str(path))
    return _PARSED[key]


def _imports_in(path: Path, roots: dict[str, Path]) -> set[Path]:
    """The modules of the packages in `roots` (name -> folder) that the module at `path`
    imports, anywhere in it (inside functions too: a renderer imported by render())."""
    owner = next(name for name, folder in roots.items() if path.is_relative_to(folder))
    here = [owner, *path.parent.relative_to(roots[owner]).parts]  # its package
    found: set[Path] = set()

    def add(parts: list[str], names: list[str]) -> None:
        head, *rest = parts
        folder = roots.get(head)
        if folder is None:
            return
        target = _module_file(folder, rest)
        if target is not None:
            found.add(target)
        for name in names:  # `from figures import _manim` names a module too
            sub = _module_file(folder, [*rest, name])
            if sub is not None:
                found.add(sub)
        # the packages on the way (figures/__init__.py, figures/scenes/__init__.py) run on import too
        for depth in range(len(rest)):
            init = folder.joinpath(*rest[:depth], "__init__.py")
            if init.is_file():
                found.add(init)

    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name.split("."), [])
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names if alias.name != "*"]
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                if base:
                    add([*base, *(node.module.split(".") if node.module else [])], names)
            elif node.module:
                add(node.module.split("."), names)
    found.discard(path)
    return found


def helper_modules(path: Path, package: str = "figures") -> list[Path]:
    """The modules that the figure module at `path` imports, directly or through one
    another, from its own folder (the package `package`: figures/_plot.py, which imports
    figures/_svg.py; figures/scenes/kv_cache.py, imported by render() only) and from the
    project's code (tokenwalk_app/quant_view.py, which draws figure 10), in path order.

    Read from the import statements (`ast`), not by importing: a module that the figure
    does not import (another figure's helper) is not part of its key.
    """
    roots = {name: PROJECT / name for name in CODE_PACKAGES}
    roots[package] = path.parent
    seen: set[Path] = set()
    todo = [path]
    while todo:
        for found in _imports_in(todo.pop(), roots):
            if found not in seen:
                seen.add(found)
                todo.append(found)
    seen.discard(path)
    return sorted(seen)


def helpers_source(path: Path, package: str = "figures") -> bytes:
    """The source of the figure's helper modules (`helper_modules`), each after its path:
    an edit to one changes the keys of its importers only."""
    shown = {path.parent: package, **{PROJECT / name: name for name in CODE_PACKAGES}}

    def name(p: Path) -> str:
        folder = next(f for f in shown if p.is_relative_to(f))
        return f"{shown[folder]}/{p.relative_to(folder).as_posix()}"

    return b"".join(name(p).encode() + b"\0" + p.read_bytes() for p in helper_modules(path, package))


def compute_key(fig: Figure, ctx) -> str:
    """The figure's cache key; calls `inputs(ctx)` with the build's one context (the
    namespace and the scenario, article.context.Context)."""
    try:
        fig.inputs = fig.module.inputs(ctx)
        inputs_json = json.dumps(fig.inputs, sort_keys=True, separators=(",", ":"), allow_nan=True)
    except Exception as exc:
        raise _fail(fig.path, exc, "inputs() failed") from exc
    try:
        helpers = helpers_source(fig.path, fig.module.__name__.rpartition(".")[0])
    except SyntaxError as exc:  # a helper that does not parse would fail on import anyway
        raise _fail(Path(exc.filename or fig.path), exc, "cannot read the figure's imports") from exc
    digest = hashlib.sha256()
    for part in (FORMAT.encode(), fig.path.read_bytes(), helpers, inputs_json.encode(),
                 renderer_version(getattr(fig.module, "RENDERER", "svg")).encode()):
        digest.update(hashlib.sha256(part).digest())
    fig.key = digest.hexdigest()[:20]
    return fig.key


def _alt(fig: Figure) -> str:
    module = fig.module
    try:
        if callable(getattr(module, "alt", None)):
            return str(module.alt(fig.inputs))
        return str(getattr(module, "ALT", ""))
    except Exception as exc:
        raise _fail(fig.path, exc, "alt() failed") from exc


_SVG_BLOCK = re.compile(r"<svg\b.*?</svg>", re.S)
_IMG_SRC = re.compile(r"""<(?:img|source)\b[^>]*?\b(?:src|srcset|poster)\s*=\s*["']([^"']+)["']""", re.I)


def check_html(fig: Figure, html, out: Path) -> str:
    """Contract checks on what render() returned; the HTML goes into the page as is."""
    shown = _shown(fig.path)
    if not isinstance(html, str) or not html.strip():
        raise BuildError(f"{shown}: render() must return the figure's HTML as a non-empty string, got {type(html).__name__}")
    for block in _SVG_BLOCK.findall(html):
        try:
            ET.fromstring(block)
        except ET.ParseError as exc:
            raise BuildError(f"{shown}: render() returned malformed SVG ({exc})") from exc
    if "<svg" in html and not _SVG_BLOCK.search(html):
        raise BuildError(f"{shown}: render() returned an <svg> without its closing </svg>")
    prefix = f"figures/{fig.id}/"
    for src in _IMG_SRC.findall(html):
        for candidate in src.split(","):
            rel = candidate.strip().split(" ")[0]
            if not rel.startswith(prefix):
                raise BuildError(f"{shown}: image source {rel!r} must be relative to the page and start with {prefix!r}")
            if not (out / rel[len(prefix):]).is_file():
                raise BuildError(f"{shown}: render() refers to {rel!r} but did not write it")
    return html


def is_cached(fig: Figure, cache_root: Path) -> bool:
    """Whether `render_or_reuse` will take the figure from the cache (its key computed)."""
    return (cache_root / fig.id / fig.key / "figure.html").is_file()


def render_or_reuse(fig: Figure, cache_root: Path, force: bool = False) -> Figure:
    """Fill fig.html from the cache, or render the figure into the cache first."""
    cache_dir = cache_root / fig.id / fig.key
    fig.cache_dir = cache_dir
    fig.alt = _alt(fig)
    html_file = cache_dir / "figure.html"
    start = time.perf_counter()
    if html_file.is_file() and not force:
        fig.html, fig.status = html_file.read_text(encoding="utf-8"), "cached"
        fig.seconds = time.perf_counter() - start
        return fig
    work = cache_root / fig.id / f".tmp-{os.getpid()}-{fig.key}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "files").mkdir(parents=True)
    try:
        try:
            html = fig.module.render(fig.inputs, work / "files")
        except Exception as exc:
            raise _fail(fig.path, exc, "render() failed") from exc
        check_html(fig, html, work / "files")
        (work / "figure.html").write_text(html, encoding="utf-8")
        shutil.rmtree(cache_dir, ignore_errors=True)
        os.replace(work, cache_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    fig.html, fig.status = html, "rendered"
    fig.seconds = time.perf_counter() - start
    _prune(cache_root / fig.id, keep=cache_dir)
    return fig


def _prune(folder: Path, keep: Path) -> None:
    entries = sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP_KEYS:]:
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)


def with_alt(html: str, alt: str) -> str:
    """Give every <img> without alt text the figure's alt text."""
    from html import escape
    return re.sub(r"<img\b(?![^>]*\balt=)", f'<img alt="{escape(alt)}"', html)


def scope_ids(html: str, fig_id: str, seen: set) -> str:
    """Rename ids that another figure already uses (e.g. two SVGs both titled
    "fig-title"), with the references to them, so the page keeps ids unique."""
    ids = re.findall(r'\bid="([^"]+)"', html)
    for old in {i for i in ids if i in seen}:
        new = f"{fig_id}--{old}"
        html = re.sub(rf'\bid="{re.escape(old)}"', f'id="{new}"', html)
        html = re.sub(rf'(#){re.escape(old)}(?=["\')])', rf"\g<1>{new}", html)
        html = re.sub(rf'(aria-(?:labelledby|describedby)="[^"]*?)\b{re.escape(old)}\b', rf"\g<1>{new}", html)
    seen.update(re.findall(r'\bid="([^"]+)"', html))
    return html


def drop_repeated_styles(html: str, seen: set) -> str:
    """Remove a <style> block that an earlier figure already put on the page: a <style>
    inside inline SVG applies to the whole document, so one copy is enough."""
    def keep_first(match):
        if match.group(0) in seen:
            return ""
        seen.add(match.group(0))
        return match.group(0)
    return re.sub(r"<style>.*?</style>", keep_first, html, flags=re.S)


def extras_html(fig: Figure) -> str:
    """The disclosures under a figure, from its module's optional functions (drawn from the
    same inputs as the figure, never cached apart from them):

    - `steps(inputs) -> list[str]`: what an animated or layered drawing shows, step by step,
      for a reader who cannot or would rather not watch it ("What happens");
    - `data_table(inputs) -> {"caption", "columns", "rows"}`: the numbers a plot draws, each
      cell text already formatted by tokenwalk.format, so a reader can copy them.
    """
    from html import escape

    from tokenwalk.format import typeset

    module, parts = fig.module, []
    try:
        steps = module.steps(fig.inputs) if callable(getattr(module, "steps", None)) else None
        table = module.data_table(fig.inputs) if callable(getattr(module, "data_table", None)) else None
    except Exception as exc:
        raise _fail(fig.path, exc, "steps() or data_table() failed") from exc
    shown = _shown(fig.path)
    if steps is not None:
        if not steps or not all(isinstance(s, str) and s.strip() for s in steps):
            raise BuildError(f"{shown}: steps() must return a non-empty list of non-empty strings")
        items = "".join(f"<li>{escape(typeset(s))}</li>" for s in steps)
        parts.append(f'<details class="figure-steps"><summary>What happens, step by step</summary><ol>{items}</ol></details>')
    if table is not None:
        columns, rows = table.get("columns"), table.get("rows")
        if not columns or not rows or any(len(r) != len(columns) for r in rows):
            raise BuildError(f"{shown}: data_table() must give columns and rows of the same length")
        if not all(isinstance(c, str) for r in [columns, *rows] for c in r):
            raise BuildError(f"{shown}: data_table() cells must be text formatted by tokenwalk.format")
        head = "".join(f'<th scope="col">{escape(c)}</th>' for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
        caption = f"<caption>{escape(typeset(table['caption']))}</caption>" if table.get("caption") else ""
        parts.append(f'<details class="figure-data"><summary>The numbers drawn ({len(rows)} rows)</summary>'
                     f'<div class="table-wrap" tabindex="0" role="region" aria-label="The numbers drawn">'
                     f'<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></details>')
    return "".join(parts)
