"""Shared pieces of the time-lane schematics (14 overlap, 15 three-steps, 17 accounting-execution,
20 chunked-prefill): lanes of bars drawn to scale on one time axis in milliseconds.

`TimeScale` holds the one scale of a figure (viewBox units per second, from x0 to x1 for
the longest step) and draws what these figures share: a bar whose width is its
milliseconds (with `data-part` and `data-ms`, which the tests read back), the time axis
with its ticks and unit, and the legend row. `ms_text` prints a duration with the
precision the article uses.
"""

from __future__ import annotations

from tokenwalk import format as fmt

# Notes under the lanes (axis numbers, legend): 13 units, legible on a 360 px phone.
NOTE = {"style": "font-size:13px"}


ms_text = fmt.ms  # one formatting module (tokenwalk.format) for the prose and the figures


class TimeScale:
    """One time axis for a figure: x = x0 + t * px_per_unit, t_max spanning x0..x1.

    Times are in seconds, or in milliseconds with ms_per_unit=1 (a figure whose inputs are
    milliseconds already). Sets the SVG's `data-px-per-ms` (the scale the tests use to
    check that bars are to scale).
    """

    def __init__(self, svg, x0: float, x1: float, t_max: float, lane_h: float, *, ms_per_unit: float = 1e3):
        self.svg, self.x0, self.x1, self.lane_h = svg, x0, x1, lane_h
        self.t_max, self.ms_per_unit = t_max, ms_per_unit
        self.px_per_unit = (x1 - x0) / t_max
        svg.root.set("data-px-per-ms", f"{self.px_per_unit / ms_per_unit:.6g}")

    def x_at(self, t: float) -> float:
        return self.x0 + t * self.px_per_unit

    def bar(self, g, t0: float, length: float, y: float, cls: str, part: str, **extra):
        """A bar from t0 lasting `length`, lane_h high, with its data-part and data-ms; three
        decimals so that a 0.014 ms bar (a quarter of a unit) stays to scale. None for a bar
        of no length."""
        if length <= 0:
            return None
        return self.svg.rect(f"{self.x_at(t0):.3f}", y, f"{length * self.px_per_unit:.3f}", self.lane_h, cls,
                             parent=g, **{"data-part": part, "data-ms": f"{length * self.ms_per_unit:.6g}", **extra})

    def lane_names(self, g, lanes, dy: float) -> None:
        """Each lane's name ("bus", "SMs") right-aligned before x0; lanes: (top y, name) pairs."""
        for y, name in lanes:
            self.svg.text(self.x0 - 8, y + dy, name, "label", anchor="end", parent=g)

    def axis(self, y: float, step_ms: float) -> None:
        """The shared axis at y: a line from x0 to x1, a tick every step_ms with its number,
        and the unit at the right end (numbers too close to it are left out)."""
        svg = self.svg
        svg.line(self.x0, y, self.x1, y, "stroke-muted")
        t = 0
        while t <= self.t_max * self.ms_per_unit + 1e-9:
            x = self.x_at(t / self.ms_per_unit)
            svg.line(x, y, x, y + 5, "stroke-muted")
            if x < self.x1 - 24:  # leave room for the unit
                svg.text(x, y + 20, f"{t}", "note num", anchor="middle", **NOTE)
            t += step_ms
        svg.text(self.x1, y + 20, "ms", "note", anchor="end", **NOTE)

    def legend(self, y: float, items, *, pad: float = 40, per_char: float = 7.2) -> None:
        """A row of swatches from x0 at baseline y; items: (class, word) or (class, word, rect attrs).
        Each entry takes pad + per_char × its word's length."""
        x = self.x0
        for cls, word, *extra in items:
            self.svg.rect(x, y - 11, 14, 14, cls, **(extra[0] if extra else {}))
            self.svg.text(x + 20, y, word, "note", **NOTE)
            x += pad + per_char * len(word)
