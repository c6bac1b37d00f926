"""GFM tables, each wrapped in a <div class="table-wrap"> that scrolls sideways on phones."""

from __future__ import annotations


def _render_table_open(self, tokens, idx, options, env):
    return '<div class="table-wrap"><table>\n'


def _render_table_close(self, tokens, idx, options, env):
    return "</table></div>\n"


def tables_plugin(md) -> None:
    md.enable("table")
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("table_close", _render_table_close)
