"""GFM tables, each wrapped in a <div class="table-wrap"> that scrolls sideways on phones.

A table whose top-left header cell is empty has row headers: its first column names each
row (`|  | Prefill | Decode |`). There the first cell of every body row becomes
`<th scope="row" class="row-name">`, the column headers get `scope="col"` and the empty
corner is a plain cell (`td.table-corner`), all drawn as before (style.css); a screen
reader announces each value with its row and its column.
"""


def _render_table_open(self, tokens, idx, options, env):
    return '<div class="table-wrap" tabindex="0"><table>\n'  # it may scroll: reachable by keyboard


def _render_table_close(self, tokens, idx, options, env):
    return "</table></div>\n"


def _cells(tokens, start, end, kind):
    """(open index, close index, inline content) of each `kind` cell in tokens[start:end]."""
    out, i = [], start
    while i < end:
        if tokens[i].type == f"{kind}_open":
            close = next(j for j in range(i, end) if tokens[j].type == f"{kind}_close")
            text = "".join(t.content for t in tokens[i + 1:close] if t.type == "inline").strip()
            out.append((i, close, text))
            i = close
        i += 1
    return out


def _retag(tokens, open_i, close_i, kind, scope=None, css_class=None):
    for i in (open_i, close_i):
        tokens[i].type = f"{kind}_{tokens[i].type.rsplit('_', 1)[1]}"
        tokens[i].tag = kind
    if scope:
        tokens[open_i].attrSet("scope", scope)
    if css_class:
        tokens[open_i].attrSet("class", css_class)


def row_headers(state) -> None:
    """Core rule: mark the row and column headers of tables with an empty corner."""
    tokens = state.tokens
    for start, token in enumerate(tokens):
        if token.type != "table_open":
            continue
        end = next(j for j in range(start, len(tokens)) if tokens[j].type == "table_close")
        head = _cells(tokens, start, end, "th")
        if not head or head[0][2]:
            continue
        _retag(tokens, head[0][0], head[0][1], "td", css_class="table-corner")
        for open_i, _close, _ in head[1:]:
            tokens[open_i].attrSet("scope", "col")
        body = next((j for j in range(start, end) if tokens[j].type == "tbody_open"), end)
        for i in range(body, end):
            if tokens[i].type == "tr_open":
                row_end = next(j for j in range(i, end) if tokens[j].type == "tr_close")
                first = _cells(tokens, i, row_end, "td")
                if first:
                    _retag(tokens, first[0][0], first[0][1], "th", scope="row", css_class="row-name")


def tables_plugin(md) -> None:
    md.enable("table")
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("table_close", _render_table_close)
    md.core.ruler.push("table_row_headers", row_headers)
