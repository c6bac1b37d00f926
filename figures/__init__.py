"""The figures of the article, one module per figure (ids from FIGURES.md).

Contract every figure module follows (the build's registry discovers them):

    ID = "balance-point"         # FIGURES.md id; the page shows it as <figure id="fig-ID">
    KIND = "P"                   # M Manim, S SVG schematic, P plot, I interactive (static part)
    RENDERER = "svg"             # "svg", "matplotlib" or "manim": its version joins the cache key
    ALT = "..."                  # or def alt(inputs) -> str: alt text, states the domain

    def inputs(ctx) -> dict:
        '''Every number the figure draws, from the article's context (article.context):
        `ctx.n`, the namespace the prose prints, and `ctx.scenario`, the models and machines
        of the worked examples (article.scenario). JSON-serialisable. Cheap: the build calls
        it on every run, with the same context for every figure, to form the cache key.'''

    def render(inputs: dict, out: pathlib.Path) -> str:
        '''Write any files into `out` (an empty folder that becomes site/figures/ID/)
        and return the HTML that goes inside <figure> before the caption: an inline
        <svg> (so it follows the page's colours), or <img>/<picture> tags whose src is
        relative to the page, i.e. "figures/ID/name.webp".'''

A figure never chooses a preset, reads no data file, and never computes physics or arithmetic
itself: every number it draws comes from `ctx.n` (a curve or series it needs is a name of the
namespace, article/numbers/) and every number it prints goes through tokenwalk.format (the
prose's filters are the same functions); `render()` only draws the numbers it is given. Of the
core a figure imports tokenwalk.format alone (an interactive one also tokenwalk_app, the
view the worker runs): tests/core/test_core_import_graph.py. The cache key is a hash of the module's
source, `inputs(ctx)` (the numbers it receives) and the renderer's version, so a change in a
data file re-renders exactly the figures whose numbers changed.

Captions live in the article (content/), next to the text that refers to the figure.
Shared drawing helpers are in `_svg.py` (schematics) and `_plot.py` (matplotlib).
"""
