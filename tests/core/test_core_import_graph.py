"""The imports run one way: walked with ast over every core module (all of
tokenwalk/ but its edge packages), the graph of imports between core modules has no cycle,
and no core module imports the native edge, the command line, the article layer, the build
or the figures; above the core, no room imports a room after it. Imports inside functions
count too."""

from __future__ import annotations

import ast
from pathlib import Path

import tokenwalk

PACKAGE = Path(tokenwalk.__file__).resolve().parent
CORE = set(tokenwalk.core_module_names(PACKAGE))
EDGES = tuple(f"tokenwalk.{edge}" for edge in tokenwalk.EDGE_PACKAGES)
FORBIDDEN = EDGES + ("article", "publish", "figures", "content")


def _within(name: str, packages: tuple) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _path(name: str) -> Path:
    rel = Path(*name.split(".")[1:])
    return PACKAGE / rel / "__init__.py" if (PACKAGE / rel).is_dir() else PACKAGE / f"{rel}.py"


def _imports(name: str) -> set[str]:
    """Dotted names `name` imports (a `from pkg import mod` counts as pkg.mod when that is a module)."""
    return _names_imported(ast.parse(_path(name).read_text(encoding="utf-8")))


def _names_imported(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names
                       if f"{node.module}.{alias.name}" in CORE or _within(f"{node.module}.{alias.name}", EDGES))
    return out


GRAPH = {name: _imports(name) for name in CORE}


def test_no_core_module_imports_the_edge_or_the_article():
    bad = sorted((name, target) for name, targets in GRAPH.items() for target in targets
                 if _within(target, FORBIDDEN))
    assert bad == []


def test_the_timing_fit_is_an_edge_package_inside_the_core():
    """The fit sits beside the model it trains (tokenwalk/timing/fit/) but needs numpy and
    scipy: it is no core module, its parent is, and no core module imports it."""
    assert "tokenwalk.timing.fit" in EDGES and tokenwalk.is_edge("timing/fit/solve.py")
    assert not tokenwalk.is_edge("timing/model.py") and not tokenwalk.is_edge("timing/fitness.py")
    fit_modules = {p.stem for p in (PACKAGE / "timing" / "fit").glob("*.py")}
    assert {"__init__", "solve", "folds", "inputs", "refit"} <= fit_modules
    assert not [m for m in CORE if _within(m, ("tokenwalk.timing.fit",))]
    assert {"tokenwalk.timing", "tokenwalk.timing.model"} <= CORE
    assert sorted(name for name, targets in GRAPH.items() if any(_within(t, ("tokenwalk.timing.fit",))
                                                                 for t in targets)) == []
    # `from tokenwalk.timing import fit` names the edge too (a stand-in module, walked as GRAPH's are)
    assert "tokenwalk.timing.fit" in _names_imported(ast.parse("from tokenwalk.timing import fit"))


def test_the_core_import_graph_is_acyclic():
    edges = {name: {t for t in targets if t in CORE and t != name and not name.startswith(t + ".")}
             for name, targets in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_the_timing_cycle_stays_broken():
    assert "tokenwalk.timing.model" not in GRAPH["tokenwalk.timing.calibration"]


# The rooms above the core, and what each may not import (DESIGN.md, "Which room imports which").
ROOMS = {"tokenwalk": ("tokenwalk_app", "article", "figures", "publish", "content", "build"),
         "tokenwalk_app": ("article", "figures", "publish", "content", "build"),
         "article": ("tokenwalk_app", "figures", "publish", "content", "build"),
         "figures": ("publish", "content", "build")}


def _room_imports(path: Path, names: bool = False) -> set[str]:
    """Dotted names a module imports (absolute imports); with `names`, `from a import b` counts
    as a.b (b a module or a name in a), else as a."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.update([f"{node.module}.{alias.name}" for alias in node.names] if names else [node.module])
    return out


def test_the_rooms_import_one_way():
    """data -> tokenwalk (edge included) -> tokenwalk_app (the page's app) and article ->
    figures -> publish: no room imports a room after it, the app and the article layer know
    nothing of each other (imports inside functions count too)."""
    root = PACKAGE.parent
    bad = []
    for room, forbidden in ROOMS.items():
        for path in sorted((root / room).rglob("*.py")):
            for name in _room_imports(path):
                if name.split(".")[0] in forbidden:
                    bad.append(f"{path.relative_to(root)} imports {name}")
    assert bad == []


# What the figures may import (DESIGN.md, "Figures"): they only draw. Of the core, the one
# formatting module; an interactive figure (KIND "I") also the page's app, tokenwalk_app,
# whose view draws its static state as the worker draws the live one. Besides: the standard
# library, the article layer, other figure modules and the drawing libraries.
FIGURE_CORE = ("tokenwalk.format",)
INTERACTIVE_CORE = ("tokenwalk_app",)
DRAWING = ("matplotlib", "manim", "numpy", "PIL")


def _kind(path: Path) -> str | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "KIND" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _figure_import_breaches(folder: Path) -> list[str]:
    import sys

    bad = []
    for path in sorted(folder.rglob("*.py")):
        core = FIGURE_CORE + (INTERACTIVE_CORE if _kind(path) == "I" else ())
        for name in sorted(_room_imports(path, names=True)):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in ("article", "figures") or top in DRAWING:
                continue
            if not any(name == allowed or name.startswith(allowed + ".") for allowed in core):
                bad.append(f"{path.relative_to(folder.parent)} imports {name}")
    return bad


def test_figures_import_of_the_core_only_the_format():
    """A figure reads its numbers from the context it receives (ctx.n) and prints them with
    tokenwalk.format: it neither computes nor reads data through the core."""
    assert _figure_import_breaches(PACKAGE.parent / "figures") == []


def test_the_figure_import_rule_names_a_breach(tmp_path):
    """The rule fails where it should: a schematic that walks a request itself, and one that
    borrows the app's view without being interactive."""
    folder = tmp_path / "figures"
    folder.mkdir()
    (folder / "trace.py").write_text('KIND = "S"\nfrom tokenwalk import format as fmt\n'
                                     'def inputs(ctx):\n    from tokenwalk.walk import walk_request\n')
    (folder / "live.py").write_text('KIND = "I"\nfrom tokenwalk_app.view import walk_html\n')
    (folder / "still.py").write_text('KIND = "P"\nfrom tokenwalk_app import quant_view\nimport json, matplotlib\n')
    assert _figure_import_breaches(folder) == ["figures/still.py imports tokenwalk_app.quant_view",
                                               "figures/trace.py imports tokenwalk.walk.walk_request"]


def test_the_pages_app_imports_the_core_alone():
    """tokenwalk_app runs in the reader's browser beside the core: of tokenwalk it imports the
    core only (no engine, command line or fit), and the core never imports it."""
    root = PACKAGE.parent
    app = sorted((root / "tokenwalk_app").glob("*.py"))
    assert {p.stem for p in app} >= {"entry", "view", "quant_view"}
    bad = [f"{p.relative_to(root)} imports {name}" for p in app for name in sorted(_room_imports(p, names=True))
           if _within(name, EDGES)]
    assert bad == []
