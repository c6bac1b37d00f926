"""Every number a figure prints goes through tokenwalk.format (DESIGN.md, "The one route"): in
figures/, a format spec (f"{x:.1f}", "{x:,}") stands only where a number is written for a
machine, never for a reader: a data-* attribute the tests read back, an SVG coordinate or
path, a colour. The SVG and plot writers (_svg.py, _plot.py) write attributes only."""

from __future__ import annotations

import ast
from pathlib import Path

FIGURES = Path(__file__).resolve().parents[2] / "figures"
WRITERS = ("_svg.py", "_plot.py")
GEOMETRY = ("rect", "path", "line", "circle")


def _machine_context(parents: list[ast.AST]) -> bool:
    """The f-string (parents[0]) is a data-* attribute's value, a geometry argument or a colour."""
    fstring, holder = parents[0], parents[1]
    if isinstance(holder, ast.Dict):
        key = holder.keys[holder.values.index(fstring)] if fstring in holder.values else None
        return isinstance(key, ast.Constant) and str(key.value).startswith("data-")
    if isinstance(holder, ast.keyword):
        return (holder.arg or "").startswith("data_")
    if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Attribute):
        if holder.func.attr in GEOMETRY and fstring in holder.args:
            return True
        first = holder.args[0] if holder.args else None
        return holder.func.attr == "set" and isinstance(first, ast.Constant) and str(first.value).startswith("data-")
    return False


def format_specs_for_readers(folder: Path) -> list[str]:
    bad = []
    for path in sorted(folder.rglob("*.py")):
        if path.name in WRITERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.FormattedValue) and node.format_spec is not None):
                continue
            fstring = parent[node]
            if parent.get(fstring) is not None and isinstance(parent[fstring], ast.FormattedValue):
                continue  # a spec inside a spec
            if not _machine_context([fstring, parent[fstring]]):
                bad.append((str(path.relative_to(folder.parent)), node.lineno, ast.unparse(fstring)))
    return [f"{where}:{line}: {text}" for where, line, text in sorted(bad)]


def test_figures_print_numbers_only_through_tokenwalk_format():
    assert format_specs_for_readers(FIGURES) == []


def test_the_rule_names_a_label_formatted_in_place(tmp_path):
    folder = tmp_path / "figures"
    folder.mkdir()
    (folder / "fig.py").write_text(
        "def render(svg, a):\n"
        "    svg.text(4, 18, f'{a:.1f} ms', 'label', **{'data-ms': f'{a:.6g}'})\n"
        "    svg.rect(f'{a:.3f}', 0, 1, 1, 'bus', data_s=f'{a:g}')\n"
        "    svg.root.set('data-px', f'{a:.6g}')\n"
        "    return f'{a:,} tokens'\n")
    assert format_specs_for_readers(folder) == ["figures/fig.py:2: f'{a:.1f} ms'", "figures/fig.py:5: f'{a:,} tokens'"]
