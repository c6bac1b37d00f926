"""The one context every figure receives: the namespace `n` and the scenario it was
computed for. The figure registry builds it once per build and hands it to each figure's
`inputs(ctx)`; a figure reads every number it draws from `ctx.n` (the curves and series too:
the namespace names them) and never loads a preset or calls tokenwalk beyond its format.
"""

from __future__ import annotations

from pathlib import Path


class Context:
    """`n`: the namespace (a dict); `scenario`: article.scenario.Scenario (loaded on first
    use when the namespace came from elsewhere, e.g. `build.py --numbers FILE.json`)."""

    def __init__(self, n: dict, scenario=None, request_dir: str | Path | None = None):
        self.n = n
        self._scenario = scenario
        self._request_dir = request_dir

    @property
    def scenario(self):
        if self._scenario is None:
            from article.scenario import load_scenario

            self._scenario = load_scenario(self._request_dir)
        return self._scenario


def build_context(request_dir: str | Path | None = None) -> Context:
    """The scenario, then the namespace computed for it."""
    from article.numbers import article_numbers
    from article.scenario import load_scenario

    scenario = load_scenario(request_dir)
    return Context(article_numbers(scenario=scenario), scenario)
