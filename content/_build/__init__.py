"""The build's internals, imported only by build.py (and its tests).

Why here: the top-level layout is fixed (content/, figures/, tokenwalk/, site/, build.py,
tests/), `tokenwalk` must never know about publishing, and figures/ holds figure modules
only. Publishing turns content/ into a page, so its machinery sits beside the templates
and static files it works with, under a private, underscored name that is not content.

    filters.py    Jinja filters for numbers in the text (comma, fixed, gb, mb, pct)
    markdown.py   markdown-it-py set-up: sidenotes, math, figures, asides, tabs, anchors
    figures.py    the figure registry: discovery, cache keys, rendering, checks
    assets.py     static files, the Pyodide runtime, the wheel of the tokenwalk core
    serve.py      `build.py --serve`: local HTTP server, file watcher, live reload
"""


class BuildError(Exception):
    """A failed build, as one line for a person: `file[:line]: cause`."""
