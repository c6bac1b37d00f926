"""The Manim scene of figure 4, residual-layer: ResidualLayerScene.

Every number drawn comes in `inputs` (the figure's inputs(ctx)); see figures/residual_layer.py.
"""

from __future__ import annotations

from figures import _manim
from figures._manim import fmt_int
from figures.scenes.base import StillScene


class ResidualLayerScene(StillScene):
    """One layer on the residual stream; sizes from `self.inputs`. Laid out top-down."""

    STREAM_X = 320
    COL_W = 268      # width of a branch column
    COL_OFF = 26     # gap between the stream and a branch column
    BOX_H = 40
    GAP = 18         # between boxes of a branch
    STEP = 26        # between boxes on the stream
    TEXT = 22
    SMALL = _manim.MIN_LABEL_PX
    CARD_H = 56      # a box with two lines

    def box(self, x, y, w, h, lines, *, stroke="muted", markup=False):
        """A box with one or two centred lines (the second smaller, muted)."""
        heavy = stroke != "muted"
        self.rect(x, y, w, h, fill="panel", stroke=stroke, stroke_px=2.5 if heavy else 1.5)
        if len(lines) == 1:
            self.t(lines[0], self.TEXT, x=x + w / 2, y=y + h / 2, markup=markup)
        else:
            self.t(lines[0], self.TEXT, x=x + w / 2, y=y + h / 2 - 12, markup=markup)
            self.t(lines[1], self.SMALL, "muted", x=x + w / 2, y=y + h / 2 + 13)

    def plus(self, y):
        from manim import Circle
        cv, r = self.canvas, 15
        c = Circle(radius=cv.u(r)).move_to(cv.at(self.STREAM_X, y))
        c.set_fill(self.c["bg"], opacity=1).set_stroke(self.c["accent"], width=3 * _manim.STROKE_PER_PX)
        self.add(c)
        self.line(self.STREAM_X - 8, y, self.STREAM_X + 8, y, color="accent", width_px=3)
        self.line(self.STREAM_X, y - 8, self.STREAM_X, y + 8, color="accent", width_px=3)

    def branch(self, side, y_sum, items, label):
        """A branch returning into the sum at y_sum; items top-down as (height, draw(x, y, w, h)).

        Returns the y where it leaves the stream (below its last box)."""
        sx, w = self.STREAM_X, self.COL_W
        x = sx + self.COL_OFF if side == "right" else sx - self.COL_OFF - w
        cx = x + w / 2
        y = y_sum + 26
        top = y
        for i, (h, draw) in enumerate(items):
            if i:
                self.arrow(cx, y, cx, y - self.GAP, color="muted", width_px=2, tip_px=8)
            draw(x, y, w, h)
            y += h + self.GAP
        bottom = y - self.GAP
        y_leave = bottom + 26
        # leave the stream sideways, go up into the first box (drawn from the bottom)
        self.line(sx, y_leave, cx, y_leave, color="fg", width_px=2)
        self.arrow(cx, y_leave, cx, bottom, color="fg", width_px=2, tip_px=8)
        # return from the top box across into the sum
        self.line(cx, top, cx, y_sum, color="fg", width_px=2)
        edge = sx + 15 if side == "right" else sx - 15
        self.arrow(cx, y_sum, edge, y_sum, color="fg", width_px=2, tip_px=9)
        self.t(label, self.SMALL, "muted", x=(cx + edge) / 2, y=y_sum - 15, slant="ITALIC")
        return y_leave

    def draw(self):
        n = self.inputs
        d, heads, hd = fmt_int(n["embedding_length"]), fmt_int(n["head_count"]), fmt_int(n["head_dim"])
        ff, vocab, layers = fmt_int(n["feed_forward_length"]), fmt_int(n["vocab_size"]), fmt_int(n["layers"])
        sx, W = self.STREAM_X, self.canvas.width_px
        bh, ch, wide, step = self.BOX_H, self.CARD_H, 400, self.STEP
        x_wide = sx - wide / 2

        def stream_arrow(y_from, y_to):
            self.arrow(sx, y_from, sx, y_to, color="fg", width_px=4, tip_px=12)

        # top: the softmax over the vocabulary, the unembedding, the final LayerNorm
        y = 16
        self.box(x_wide, y, wide, ch, [f"softmax over {vocab} tokens", "the vocabulary, not attention"],
                 stroke="accent")
        y_sm_bottom = y + ch
        y = y_sm_bottom + step
        self.box(x_wide, y, wide, ch, ["unembedding", f"{d} × {vocab}"], stroke="weights")
        stream_arrow(y, y_sm_bottom)
        y_un_bottom = y + ch
        y += ch + step
        self.box(x_wide, y, wide, bh, ["final LayerNorm"])
        stream_arrow(y, y_un_bottom)
        y_ln_bottom = y + bh
        # the other layers, as a stack of cards
        y += bh + step + 14
        for k in (2, 1, 0):
            self.rect(x_wide + 7 * k, y - 7 * k, wide, ch, fill="panel", stroke="muted", stroke_px=1.5)
        self.box(x_wide, y, wide, ch, [f"layers 2 to {layers}", "the same shape, one after another"])
        stream_arrow(y - 14, y_ln_bottom)
        y_stack_bottom = y + ch

        # layer 1: MLP branch (left) above the attention branch (right)
        panel_top = y_stack_bottom + 22
        self.t(f"layer 1 of {layers}", self.TEXT, x=W - 28, y=panel_top + 24, anchor="right", weight="BOLD")
        y_sum2 = panel_top + 62

        def simple(lines, stroke="muted", markup=False, h=bh):
            return (h, lambda x, yy, w, hh: self.box(x, yy, w, hh, lines, stroke=stroke, markup=markup))

        def heads_box(x, yy, w, h):
            self.rect(x, yy, w, h, fill="panel", stroke="kv", stroke_px=2.5)
            self.t(f"{heads} heads in parallel", self.TEXT, x=x + w / 2, y=yy + 20)
            labels = ["1", "2", "3", "…", heads]
            cw, gap = 42, 8
            total = len(labels) * cw + (len(labels) - 1) * gap
            x0 = x + (w - total) / 2
            for i, lab in enumerate(labels):
                xi = x0 + i * (cw + gap)
                if lab == "…":
                    self.t(lab, self.TEXT, x=xi + cw / 2, y=yy + 52)
                else:
                    self.rect(xi, yy + 38, cw, 28, fill="kv", radius_px=5)
                    self.t(lab, self.SMALL, "ink_on_accent", x=xi + cw / 2, y=yy + 52)
            self.t(f"each {hd} numbers wide", self.SMALL, "muted", x=x + w / 2, y=yy + 82)

        mlp = [
            simple([f"W<sub>2</sub>  {ff} × {d}"], "weights", True),
            simple(["GELU"]),
            simple([f"W<sub>1</sub>  {d} × {ff}"], "weights", True),
            simple(["LayerNorm"]),
        ]
        y_leave_mlp = self.branch("left", y_sum2, mlp, "MLP")
        y_sum1 = y_leave_mlp + 40
        attn = [
            simple([f"W<sub>O</sub>  {d} × {d}"], "weights", True),
            simple(["concatenate", f"{heads} × {hd} = {d}"], h=ch),
            (96, heads_box),
            simple(["LayerNorm"]),
        ]
        y_leave_attn = self.branch("right", y_sum1, attn, "attention")
        panel_bottom = y_leave_attn + 44
        self.rect(12, panel_top, W - 24, panel_bottom - panel_top, fill=None, stroke="muted",
                  stroke_px=1.5, radius_px=14, dashed=True)
        self.t("residual stream", self.SMALL, "muted", x=sx - 12, y=panel_bottom - 20, anchor="right",
               slant="ITALIC")

        # bottom: the embedding enters the stream
        y_emb = panel_bottom + 24
        self.box(x_wide, y_emb, wide, ch, ["token embedding + position", f"1 × {d} per token"],
                 stroke="weights")

        # the stream, in segments so the sums sit on it
        for y0, y1 in [(y_emb, y_sum1 + 15), (y_sum1 - 15, y_sum2 + 15)]:
            self.line(sx, y0, sx, y1, color="fg", width_px=4)
        stream_arrow(y_sum2 - 15, y_stack_bottom)
        self.plus(y_sum1)
        self.plus(y_sum2)
        self.bottom_px = y_emb + ch  # read by the test of the layout
