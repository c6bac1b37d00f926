"""The build machinery: content/ + figures/ + the article's numbers -> site/.

`build.py` at the top of the project is the author's entry point (a few lines); everything
it runs lives here, so content/ holds only what the article is (Markdown, templates, CSS,
small JS) and `tokenwalk` never knows about publishing.

    pipeline.py   the build: numbers, figures, chapters, files, the atomic swap into site/;
                  the command line (build.py's flags) and the one-line failure report
    chapters.py   chapter files, Jinja (with `n` and the number filters), the page template
    markdown/     markdown-it-py set-up, one module per rule set (`<name>_plugin(md)`):
                  sidenotes, math, figures, containers (asides, tabs), anchors, code, tables,
                  front matter; cross-references between chapters
    registry.py   the figure registry: discovery, cache keys, rendering, checks
    assets.py     static files, the Pyodide runtime, the wheel of the tokenwalk core
    serve.py      `build.py --serve`: local HTTP server, file watcher, live reload
    filters.py    Jinja filters for numbers in the text (comma, fixed, gb, mb, pct)
    errors.py     BuildError and the one traceback-to-location function

This file imports nothing beyond the standard library: build.py reads REQUIRES before it
knows whether the build's packages are installed.
"""

from __future__ import annotations

import importlib.util

from .errors import BuildError

# import name -> distribution (the `build` extra of pyproject.toml)
REQUIRES = {
    "markdown_it": "markdown-it-py",
    "mdit_py_plugins": "mdit-py-plugins",
    "jinja2": "Jinja2",
    "pygments": "Pygments",
    "math_core": "math-core",
}


def missing_requirements() -> list[str]:
    """The distributions of REQUIRES that this Python cannot import."""
    return [dist for name, dist in REQUIRES.items() if importlib.util.find_spec(name) is None]


__all__ = ["BuildError", "REQUIRES", "missing_requirements"]
