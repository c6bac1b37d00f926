"""Asides, tabs and folded details.

    ::: aside                         a boxed aside
    :::
    :::: tabs                         tabs (outer marker longer than the panes');
    ::: tab Speculative decoding      without JavaScript the panes are shown one
    :::                               after the other under their labels
    ::::
    ::: details 12 numbers moved      folded under its summary (<details>), closed until
    :::                               the reader opens it
"""

from __future__ import annotations

import html

from mdit_py_plugins.container import container_plugin


def _render_aside(self, tokens, idx, options, env):
    # a note within the chapter, not a landmark: <aside> inside <main> would be one (axe-core)
    return '<div class="aside" role="note">\n' if tokens[idx].nesting == 1 else "</div>\n"


def _render_tabs(self, tokens, idx, options, env):
    return '<div class="tabs">\n' if tokens[idx].nesting == 1 else "</div>\n"


def _render_tab(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.nesting == -1:
        return "</section>\n"
    label = html.escape(token.info.strip()[3:].strip() or "Tab")
    return f'<section class="tab-pane" data-label="{label}">\n<h4 class="tab-label">{label}</h4>\n'


def _render_details(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.nesting == -1:
        return "</details>\n"
    summary = html.escape(token.info.strip()[len("details"):].strip() or "Details")
    return f'<details class="folded">\n<summary>{summary}</summary>\n'


def containers_plugin(md) -> None:
    container_plugin(md, "aside", render=_render_aside)
    container_plugin(md, "tabs", render=_render_tabs)
    container_plugin(md, "tab", render=_render_tab)
    container_plugin(md, "details", render=_render_details)
