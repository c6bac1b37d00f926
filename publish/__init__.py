"""The build machinery: content/ + figures/ + the article's numbers -> site/.

`build.py` at the top of the project is the author's entry point; everything it runs lives
here, so content/ holds only what the article is (Markdown, templates, CSS, small JS) and
`tokenwalk` never knows about publishing.

    filters.py    Jinja filters for numbers in the text (comma, fixed, gb, mb, pct)
    markdown.py   markdown-it-py set-up: sidenotes, math, figures, asides, tabs, anchors
    registry.py   the figure registry: discovery, cache keys, rendering, checks
    assets.py     static files, the Pyodide runtime, the wheel of the tokenwalk core
    serve.py      `build.py --serve`: local HTTP server, file watcher, live reload
"""


class BuildError(Exception):
    """A failed build, as one line for a person: `file[:line]: cause`."""
