"""The base class of the figures' Manim scenes: one still drawn from `inputs`, in a
theme, on a canvas laid out in CSS pixels (see figures._manim).

Imported only when a figure renders (it imports Manim); each scene is a top-level class
in its own module beside this one, in the manner of Manim Community's example scenes,
and receives every number it draws as `inputs`.
"""

from __future__ import annotations

from manim import Arrow, Line, Rectangle, RoundedRectangle, Scene, VGroup

from figures._manim import STROKE_PER_PX, Canvas, text


class StillScene(Scene):
    """A Scene that draws one still from `inputs`, in a theme, on a CSS-px canvas.

    Subclasses implement `draw()`; numbers come only from `self.inputs`.
    """

    def __init__(self, inputs: dict, palette: dict, canvas: Canvas, **kwargs):
        self.inputs, self.c, self.canvas = inputs, palette, canvas
        super().__init__(**kwargs)

    def construct(self):
        self.draw()

    def draw(self):  # pragma: no cover - subclasses
        raise NotImplementedError

    # --- drawing helpers in CSS px (top-left origin) ---
    def col(self, name):
        """A palette colour by name; anything else (a hex string, a ManimColor) as is."""
        return self.c.get(name, name) if isinstance(name, str) else name

    def t(self, s, size, color="fg", *, x=None, y=None, anchor="center", valign="center", **kw):
        """Text of `size` px at (x, y): anchor center, left or right edge; valign center,
        top or baseline (y is then the baseline: labels side by side line up whatever
        their letters)."""
        m = text(s, size, self.col(color), **kw)
        if x is not None:
            p = self.canvas.at(x, y)
            edge = [{"left": -1, "right": 1}.get(anchor, 0), 1 if valign == "top" else 0, 0]
            m.move_to(p, aligned_edge=edge)
            if valign == "baseline":
                # most glyphs sit on the baseline: the median glyph bottom is it
                bottoms = sorted(g.get_bottom()[1] for g in m.submobjects if len(g.points))
                if bottoms:
                    m.shift([0, p[1] - bottoms[len(bottoms) // 2], 0])
        self.add(m)
        return m

    def rect(self, x, y, w, h, *, fill="panel", stroke=None, stroke_px=2.0, radius_px=8.0,
             opacity=1.0, dashed=False):
        """A rounded rectangle with top-left (x, y), size (w, h) in px."""
        cv = self.canvas
        if radius_px > 0:
            r = RoundedRectangle(width=cv.u(w), height=cv.u(h),
                                 corner_radius=cv.u(min(radius_px, w / 2, h / 2)))
        else:  # rounding corners is the slow part of a rectangle: skip it for small cells
            r = Rectangle(width=cv.u(w), height=cv.u(h))
        r.set_fill(self.col(fill) if fill else None, opacity=opacity if fill else 0)
        if stroke:
            r.set_stroke(self.col(stroke), width=stroke_px * STROKE_PER_PX, opacity=1)
        else:
            r.set_stroke(width=0, opacity=0)
        r.move_to(cv.at(x + w / 2, y + h / 2))
        if dashed:
            from manim import DashedVMobject
            r = DashedVMobject(r, num_dashes=max(8, int((w + h) / 9)), dashed_ratio=0.55)
        self.add(r)
        return r

    def line(self, x1, y1, x2, y2, *, color="fg", width_px=2.0, opacity=1.0):
        ln = Line(self.canvas.at(x1, y1), self.canvas.at(x2, y2))
        ln.set_stroke(self.col(color), width=width_px * STROKE_PER_PX, opacity=opacity)
        self.add(ln)
        return ln

    def arrow(self, x1, y1, x2, y2, *, color="fg", width_px=2.5, tip_px=11.0):
        cv = self.canvas
        a = Arrow(cv.at(x1, y1), cv.at(x2, y2), buff=0, stroke_width=width_px * STROKE_PER_PX,
                  tip_length=cv.u(tip_px), max_tip_length_to_length_ratio=0.6,
                  max_stroke_width_to_length_ratio=100)
        a.set_color(self.col(color))
        self.add(a)
        return a

    def group(self, *mobjects):
        return VGroup(*mobjects)
