"""The Manim scene of figure 7, decode-head: DecodeHeadScene.

Every number drawn comes in `inputs` (the figure's inputs(ctx)); see figures/decode_head.py.
"""

from __future__ import annotations

from figures import _manim
from figures._manim import fmt_int
from figures.scenes.base import StillScene
from tokenwalk import format as fmt


class DecodeHeadScene(StillScene):
    """The decode step of one head; numbers from `self.inputs`."""

    TEXT = 22
    SMALL = _manim.MIN_LABEL_PX  # about 11 px where a phone shows the 640 px canvas at 358 px
    CELL_W, CELL_H = 14, 22
    # column centres (px): token, key, score, weight, value
    X_TOKEN_LEFT, X_KEY, X_SCORE, X_WEIGHT, X_VALUE = 22, 240, 350, 456, 572
    ROW_H = 46

    def cell_color(self, v):
        from manim import ManimColor, interpolate_color
        base = ManimColor(self.c["panel"])
        end = ManimColor(self.c["pos"] if v >= 0 else self.c["neg"])
        return interpolate_color(base, end, min(1.0, abs(v)))

    def strip(self, cx, cy, vec, *, outline=None, dashed=False):
        """Toy vector entries as coloured cells, then '…' for the numbers not drawn."""
        w, h = self.CELL_W, self.CELL_H
        total = len(vec) * w + 16
        x0 = cx - total / 2
        for i, v in enumerate(vec):
            self.rect(x0 + i * w, cy - h / 2, w, h, fill=self.cell_color(v), radius_px=0,
                      stroke="grid", stroke_px=1)
        self.t("…", self.SMALL, "muted", x=x0 + len(vec) * w + 9, y=cy + 2)
        if outline:
            self.rect(x0 - 4, cy - h / 2 - 4, len(vec) * w + 8, h + 8, fill=None, stroke=outline,
                      stroke_px=2.5, radius_px=4, dashed=dashed)
        return x0, total

    def draw(self):
        from manim import Circle

        n = self.inputs
        d, hd = fmt_int(n["embedding_length"]), fmt_int(n["head_dim"])
        tokens, weights = n["tokens"], n["weights"]
        W = self.canvas.width_px
        cv = self.canvas

        # top: the head's output, the weighted sum of the values
        self.t("head output = Σ weight × value", self.TEXT, x=self.X_TOKEN_LEFT, y=30, anchor="left")
        self.t(f"1 × {hd}", self.SMALL, "muted", x=self.X_TOKEN_LEFT, y=56, anchor="left")
        self.strip(self.X_VALUE, 40, n["output"], outline="accent")

        # table header
        y_head = 96
        self.line(16, y_head + 30, W - 16, y_head + 30, color="grid", width_px=1.5)
        self.t("token", self.TEXT, x=self.X_TOKEN_LEFT, y=y_head, anchor="left", weight="BOLD")
        # short sub-headers: columns are 100 px apart, and "128 numbers" at the
        # phone-readable size would run into "q·k/√128"
        for x, title, sub in [(self.X_KEY, "key", f"1 × {hd}"), (self.X_SCORE, "score", f"q·k/√{hd}"),
                              (self.X_WEIGHT, "weight", "softmax"), (self.X_VALUE, "value", f"1 × {hd}")]:
            self.t(title, self.TEXT, x=x, y=y_head - 8, weight="BOLD")
            self.t(sub, self.SMALL, "muted", x=x, y=y_head + 16)
        # arrow from the value column up into the output
        self.arrow(self.X_VALUE, y_head - 26, self.X_VALUE, 58, color="accent", width_px=2.5, tip_px=9)

        y0 = y_head + 34
        new = len(tokens) - 1
        top = max(range(len(tokens)), key=lambda i: weights[i])
        for i, tok in enumerate(tokens):
            cy = y0 + i * self.ROW_H + self.ROW_H / 2
            if i == new:
                self.rect(12, cy - self.ROW_H / 2 + 2, W - 24, self.ROW_H - 4, fill="highlight",
                          opacity=0.35, radius_px=6)
            label = f"{i + 1}  {tok}"
            self.t(label, self.TEXT, "fg", x=self.X_TOKEN_LEFT, y=cy, anchor="left",
                   weight="BOLD" if i == top else "NORMAL")
            self.strip(self.X_KEY, cy, n["keys"][i], outline="accent" if i == new else None)
            self.t(fmt.fixed(n["scores"][i], 1), self.TEXT, x=self.X_SCORE, y=cy)
            # the weight as a dot whose area is the weight (the dots sum to 1)
            r = 19 * weights[i] ** 0.5
            dot = Circle(radius=cv.u(r)).move_to(cv.at(self.X_WEIGHT - 24, cy))
            dot.set_fill(self.c["accent"], opacity=1).set_stroke(width=0)
            self.add(dot)
            self.t(fmt.pct(weights[i]), self.SMALL, x=self.X_WEIGHT + 4, y=cy, anchor="left")
            self.strip(self.X_VALUE, cy, n["values"][i], outline="accent" if i == new else None)
        y_end = y0 + len(tokens) * self.ROW_H
        self.line(16, y_end + 2, W - 16, y_end + 2, color="grid", width_px=1.5)

        # below: this token's projections, q k v
        y_vec = y_end + 52
        y_box = y_vec + 66
        box_w, box_h = 170, 54
        # order on the page: query, key, value, in three equal columns; the key and the
        # value go up into their table columns, the query into the scores
        cols = [(330, "Q", "q"), (130, "K", "k"), (530, "V", "v")]
        for cx, big, _small in cols:
            self.rect(cx - box_w / 2, y_box, box_w, box_h, fill="panel", stroke="weights", stroke_px=2.5)
            self.t(f"W<sub>{big}</sub>", self.TEXT, x=cx, y=y_box + 18, markup=True)
            self.t(f"{d} × {hd}", self.SMALL, "muted", x=cx, y=y_box + 40)
            self.arrow(cx, y_box, cx, y_vec + 42, color="fg", width_px=2, tip_px=8)
        xq, xk, xv = cols[0][0], cols[1][0], cols[2][0]
        self.t("q", self.TEXT, x=xq - 72, y=y_vec, weight="BOLD")
        self.strip(xq, y_vec, n["query"], outline="muted", dashed=True)
        self.arrow(xq, y_vec - 16, self.X_SCORE, y_end + 6, color="muted", width_px=2, tip_px=8)
        self.t("k", self.TEXT, x=xk - 72, y=y_vec, weight="BOLD")
        self.strip(xk, y_vec, n["keys"][new], outline="accent")
        self.arrow(xk, y_vec - 16, self.X_KEY, y_end - 4, color="accent", width_px=2.5, tip_px=9)
        self.t("v", self.TEXT, x=xv - 72, y=y_vec, weight="BOLD")
        self.strip(xv, y_vec, n["values"][new], outline="accent")
        self.arrow(xv, y_vec - 16, self.X_VALUE, y_end - 4, color="accent", width_px=2.5, tip_px=9)
        # notes on what is kept
        self.t("used once, not kept", self.SMALL, "muted", x=xq, y=y_vec + 29, slant="ITALIC")
        self.t("→ new row of K", self.SMALL, "accent", x=xk, y=y_vec + 29)
        self.t("→ new row of V", self.SMALL, "accent", x=xv, y=y_vec + 29)

        # bottom: the new token's residual
        y_res = y_box + box_h + 44
        for cx, _b, _s in cols:
            self.arrow(cx, y_res - 12, cx, y_box + box_h, color="fg", width_px=2, tip_px=8)
        self.rect(40, y_res - 12, W - 80, 24, fill="system", radius_px=4, opacity=0.6)
        self.t(f"“{tokens[new]}”, normalised residual: 1 × {d}", self.TEXT, x=W / 2, y=y_res + 32)
        self.t(f"toy numbers; strips show {len(n['query'])} of {hd}", self.SMALL, "muted", x=W / 2, y=y_res + 60)
        self.bottom_px = y_res + 70
