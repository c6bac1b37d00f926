"""The article layer: every decision the article makes about its numbers, outside the library.

    data files -> tokenwalk -> article -> figures and content -> publish/build.py -> site/

It imports tokenwalk; tokenwalk never imports it (nor names a path of content/). It is not
part of the `tokenwalk` distribution nor of the browser wheel: the reader's browser runs
the library, never the article's choices.

- `scenario.py`: which model on which machine each worked example uses (the request's,
  read once from content/request/; the H100 example; the comparisons) and the examples'
  sizes (data/scenario.json).
- `numbers/`: the namespace `n` the prose prints, one module per group of names, each named
  after the prefix of the names it owns (request, models, h100, laptop, toy, ...).
- `context.py`: the one context (n + scenario) the figure registry hands to every figure.
- `toys.py`: the drawings' toy inputs (data/toy/) and the numbers computed from them.
- `references.py`, `data/cited/`: the cited facts and works, with their sources.
- `_data.py`: reads article/data/ through tokenwalk's JSON reader given this root.

Why a package beside figures/ and not Observable-style data loaders next to the chapters:
the same numbers feed the prose of every chapter and the figures (a loader per chapter
would split one namespace across files that each chapter's Jinja must then merge, and
the figures would need a second route to the same values); one importable package gives
the build, the figures and the tests one function to call (`article.context.build_context`),
and keeps content/ free of Python. The six rooms of the layout stay as they are; `article/`
is the one new room, for the one layer that had none.
"""
