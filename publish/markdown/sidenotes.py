"""Footnotes as sidenotes: `claim.[^src]` + `[^src]: text` (or `^[inline]`) ->
the checkbox-and-label pattern of Tufte CSS: in the margin on wide screens, tap to open
inline on phones, no JavaScript. Numbered across the whole article.

The checkbox is hidden visually but stays in the tab order (Tab reaches every note, Space
opens it on a phone), named "Note N" and described by the note's text, so a screen reader
reads the note at its mark whether or not it is open.

On paper a note inside a sentence would cut it in two, so a paragraph's notes are also
written after it, in a block only print shows (`print-notes`, hidden from screen readers:
they have the note at its mark); the print stylesheet then hides that paragraph's inline
notes. A note outside a paragraph (a table cell, a tight list) prints at its mark."""

from __future__ import annotations

from mdit_py_plugins.footnote import footnote_plugin


def _core_sidenotes(state) -> None:
    """Lift the footnote block that footnote_tail appends into env, keyed by note id."""
    notes = state.env.setdefault("sidenote_tokens", {})
    kept, current, inside = [], None, False
    for token in state.tokens:
        if token.type == "footnote_block_open":
            inside = True
        elif token.type == "footnote_block_close":
            inside = False
        elif inside and token.type == "footnote_open":
            current = notes.setdefault(token.meta["id"], [])
        elif inside and token.type not in ("footnote_close", "footnote_anchor"):
            current.append(token)
        elif not inside:
            kept.append(token)
    state.tokens = kept


def _render_footnote_ref(self, tokens, idx, options, env):
    article = env["article"]
    article.sidenotes += 1
    number = article.sidenotes
    body = env.get("sidenote_tokens", {}).get(tokens[idx].meta["id"], [])
    inner = "<br>".join(self.renderInline(t.children, options, env) for t in body if t.type == "inline")
    note_id = f"sn-{number}"
    if env.get("open_paragraph"):
        env.setdefault("paragraph_notes", []).append((number, inner))
    return (f'<label for="{note_id}" class="sidenote-ref" aria-hidden="true">{number}</label>'
            f'<input type="checkbox" id="{note_id}" class="margin-toggle" aria-label="Note {number}" '
            f'aria-describedby="{note_id}-text">'
            f'<span class="sidenote" id="{note_id}-text"><span class="sidenote-number">{number}</span> {inner}</span>')


def _render_paragraph_open(self, tokens, idx, options, env):
    env["open_paragraph"] = not tokens[idx].hidden  # a tight list's items have no <p> to follow
    return self.renderToken(tokens, idx, options, env)


def _render_paragraph_close(self, tokens, idx, options, env):
    env["open_paragraph"] = False
    notes = env.pop("paragraph_notes", [])
    out = self.renderToken(tokens, idx, options, env)
    if notes:
        items = "".join(f'<p><span class="sidenote-number">{n}</span> {inner}</p>' for n, inner in notes)
        out += f'<div class="print-notes" aria-hidden="true">{items}</div>\n'
    return out


def sidenotes_plugin(md) -> None:
    footnote_plugin(md)
    # after the typographer's rules, so a note gets curly quotes and dashes like the text it annotates
    md.core.ruler.after("text_join", "sidenotes", _core_sidenotes)
    md.add_render_rule("footnote_ref", _render_footnote_ref)
    md.add_render_rule("paragraph_open", _render_paragraph_open)
    md.add_render_rule("paragraph_close", _render_paragraph_close)
