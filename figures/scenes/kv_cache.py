"""The Manim scenes of figure 8, kv-cache: KVCacheScene, KVGrowthAnimation.

Every number drawn comes in `inputs` (the figure's inputs(ctx)); see figures/kv_cache.py.
"""

from __future__ import annotations

from manim import ArcBetweenPoints, Create, FadeIn, FadeOut

from figures import _manim
from figures._manim import fmt_int
from figures.scenes.base import StillScene


class KVCacheScene(StillScene):
    """The cache grid, the induction lines, the arcs and prefill vs decode."""

    TEXT = 21
    SMALL = _manim.MIN_LABEL_PX
    GRID_X = 118          # left edge of the first column
    COL_W = 70
    ROW_H = 58
    GAP_ROW_H = 34        # the "⋮" row between layer 3 and the top layer
    CELL_W, CELL_H = 26, 40
    INDUCTION_GAP = 30    # extra space between layers 2 and 1

    def cell(self, cx, cy, fill, *, letters=False, ink="fg"):
        """A key and a value side by side, centred on (cx, cy)."""
        w, h = self.CELL_W, self.CELL_H
        for dx, letter in ((-w / 2 - 2, "K"), (w / 2 + 2, "V")):
            self.rect(cx + dx - w / 2, cy - h / 2, w, h, fill=fill, radius_px=4)
            if letters:
                self.t(letter, self.SMALL, ink, x=cx + dx, y=cy, weight="BOLD")

    def white_line(self, x1, y1, x2, y2):
        self.line(x1, y1, x2, y2, color="halo", width_px=7)
        self.line(x1, y1, x2, y2, color="#ffffff", width_px=4)

    def triangle(self, x0, y0, n, size, new_row_only):
        """An n x n causal score triangle; prefill fills every row, decode only the last."""
        for r in range(n):
            for c in range(r + 1):
                if new_row_only:
                    fill = "accent" if r == n - 1 else "cell_old"
                else:
                    fill = "compute"
                self.rect(x0 + c * size + 1, y0 + r * size + 1, size - 2, size - 2, fill=fill, radius_px=2)

    def draw(self):
        from manim import ArcBetweenPoints

        n = self.inputs
        layers, heads, hd = fmt_int(n["layers"]), fmt_int(n["head_count"]), fmt_int(n["head_dim"])
        tokens = n["tokens"]
        t = len(tokens)
        W = self.canvas.width_px
        gx, cw, rh = self.GRID_X, self.COL_W, self.ROW_H
        col_x = [gx + cw * (i + 0.5) for i in range(t)]

        # rows top-down: the top layer, a gap, then layers 3, 2, 1
        y_grid = 150
        rows = [(layers, y_grid + rh / 2)]
        y = y_grid + rh + self.GAP_ROW_H
        for label in ("3", "2", "1"):
            if label == "1":
                y += self.INDUCTION_GAP  # room for the white lines
            rows.append((label, y + rh / 2))
            y += rh
        y_grid_bottom = y
        row_y = {label: cy for label, cy in rows}

        # the new column's band, behind the cells
        new_x = col_x[-1]
        self.rect(new_x - cw / 2 + 2, y_grid - 6, cw - 4, y_grid_bottom - y_grid + 12, fill="highlight",
                  opacity=0.45, radius_px=8)

        for label, cy in rows:
            self.t(f"layer {label}", self.SMALL, "muted", x=gx - 12, y=cy, anchor="right")
            for i, cx in enumerate(col_x):
                new = i == t - 1
                self.cell(cx, cy, "accent" if new else "cell_old", letters=True,
                          ink="ink_on_accent" if new else "fg")
        gap_y = y_grid + rh + self.GAP_ROW_H / 2
        for cx in col_x:
            self.t("⋮", self.TEXT, "muted", x=cx, y=gap_y)

        # white lines: token 4 at layer 2 read tokens 1..4 at layer 1 (the causal mask)
        k = min(4, t - 1)
        top_y, bot_y = row_y["2"] + self.CELL_H / 2 + 2, row_y["1"] - self.CELL_H / 2 - 2
        for j in range(k):
            self.white_line(col_x[k - 1], top_y, col_x[j], bot_y)

        # arcs: the new query at the top layer reads every key of that layer
        y_arc = rows[0][1] - self.CELL_H / 2 - 3
        kx = -self.CELL_W / 2 - 2  # the K half of a cell
        q_y = y_arc - 40
        # the query above the new column: drawn dashed, it is not kept
        self.rect(new_x - 18, q_y - 15, 36, 30, fill=None, stroke="accent", stroke_px=2, dashed=True,
                  radius_px=4)
        self.t("q", self.TEXT, x=new_x, y=q_y - 2, weight="BOLD")
        for i in range(t):
            # from the query's left edge (its own key: straight down) to each key
            if i == t - 1:
                self.arrow(new_x + kx, q_y + 15, new_x + kx, y_arc, color="accent", width_px=2.2, tip_px=7)
                continue
            arc = ArcBetweenPoints(self.canvas.at(new_x - 18, q_y), self.canvas.at(col_x[i] + kx, y_arc),
                                   angle=0.9)
            arc.set_stroke(self.c["accent"], width=2.2 * _manim.STROKE_PER_PX)
            self.add(arc)
        self.t("the new query reads every key of its layer", self.SMALL, "fg", x=16, y=22,
               anchor="left")
        self.t("and is not kept", self.SMALL, "muted", x=16, y=46, anchor="left")

        # column labels under the grid
        y_tok = y_grid_bottom + 20
        for i, cx in enumerate(col_x):
            self.t(str(i + 1), self.SMALL, "accent" if i == t - 1 else "muted", x=cx, y=y_tok,
                   weight="BOLD" if i == t - 1 else "NORMAL")
        self.t("token", self.SMALL, "muted", x=gx - 12, y=y_tok, anchor="right")
        y_leg = y_tok + 34
        # from the left margin, not the grid: at the phone-readable size the two legends
        # would otherwise meet
        self.t(f"tokens 1–{t - 1}: stored, unchanged", self.SMALL, x=16, y=y_leg, anchor="left")
        self.t("new: computed now", self.SMALL, "accent", x=W - 18, y=y_leg, anchor="right")
        self.t(f"each cell: K and V of {heads} heads, {hd} numbers each", self.SMALL, "muted",
               x=W / 2, y=y_leg + 30)
        self.t(f"white lines: at layer 2, token {k} read only tokens 1–{k}", self.SMALL, "muted",
               x=W / 2, y=y_leg + 58)

        # the headline number
        y_big = y_leg + 104
        self.t(f"{layers} layers × {heads} heads = {fmt_int(n['softmaxes_per_step'])} softmaxes per step",
               21, x=W / 2, y=y_big, weight="BOLD")

        # prefill vs decode triangles
        size = 24
        tri = size * t
        y_tri = y_big + 40
        for x_c, title, subs, only_new in [
            (W * 0.27, "prefill", ("every row at once,", "one softmax per row"), False),
            (W * 0.73, "decode", ("one new row", "per step"), True),
        ]:
            self.triangle(x_c - tri / 2, y_tri, t, size, only_new)
            self.t(title, self.TEXT, x=x_c, y=y_tri + tri + 28, weight="BOLD", valign="baseline")
            for j, sub in enumerate(subs):
                self.t(sub, self.SMALL, "muted", x=x_c, y=y_tri + tri + 56 + 25 * j, valign="baseline")
        self.bottom_px = y_tri + tri + 88


class KVGrowthAnimation(StillScene):
    """The optional animation: the new token's column climbs the layers, then is stored."""

    TEXT = 21
    SMALL = _manim.MIN_LABEL_PX
    GRID_X = 118
    COL_W = 62
    ROW_H = 58
    CELL_W, CELL_H = 22, 38

    def cell(self, cx, cy, fill):
        """A key and a value side by side; returns them (already added)."""
        w, h = self.CELL_W, self.CELL_H
        return [self.rect(cx + dx - w / 2, cy - h / 2, w, h, fill=fill, radius_px=4)
                for dx in (-w / 2 - 2, w / 2 + 2)]

    def construct(self):
        n = self.inputs
        layers = fmt_int(n["layers"])
        t = len(n["tokens"])
        gx, cw, rh = self.GRID_X, self.COL_W, self.ROW_H
        col_x = [gx + cw * (i + 0.5) for i in range(t + 1)]
        labels = [layers, "⋮", "3", "2", "1"]  # top-down
        y0 = 92
        row_y = {lab: y0 + rh * (i + 0.5) for i, lab in enumerate(labels)}
        title = self.t(f"token {t} climbs the {layers} layers", self.TEXT, x=16, y=26, anchor="left")
        sub = self.t("at each layer its query reads that layer's keys", self.SMALL, "muted",
                     x=16, y=54, anchor="left")
        for lab, cy in row_y.items():
            if lab != "⋮":
                self.t(f"layer {lab}", self.SMALL, "muted", x=gx - 12, y=cy, anchor="right")
            for i in range(t - 1):
                if lab == "⋮":
                    self.t("⋮", self.TEXT, "muted", x=col_x[i], y=cy)
                else:
                    self.cell(col_x[i], cy, "cell_old")
        y_tok = y0 + rh * len(labels) + 18
        for i in range(t):
            self.t(str(i + 1), self.SMALL, "accent" if i == t - 1 else "muted", x=col_x[i], y=y_tok)
        new_x = col_x[t - 1]
        marker = self.rect(new_x - cw / 2 + 3, row_y["1"] - rh / 2 + 3, cw - 6, rh - 6, fill=None,
                           stroke="accent", stroke_px=3, radius_px=8)
        self.wait(0.4)
        new_cells = []
        kx = -self.CELL_W / 2 - 2
        for lab in reversed(labels):
            cy = row_y[lab]
            self.play(marker.animate.move_to(self.canvas.at(new_x, cy)), run_time=0.35)
            if lab == "⋮":
                dots = self.t("⋮", self.TEXT, "accent", x=new_x, y=cy)
                self.remove(dots)
                self.play(FadeIn(dots), run_time=0.2)
                continue
            arcs = []
            for i in range(t - 1):
                arc = ArcBetweenPoints(self.canvas.at(new_x - cw / 2 + 6, cy - self.CELL_H / 2),
                                       self.canvas.at(col_x[i] + kx, cy - self.CELL_H / 2), angle=0.8)
                arc.set_stroke(self.c["accent"], width=2 * _manim.STROKE_PER_PX)
                arcs.append(arc)
            self.play(*[Create(a) for a in arcs], run_time=0.4)
            cells = self.cell(new_x, cy, "accent")
            self.remove(*cells)
            new_cells += cells
            self.play(FadeIn(*cells), FadeOut(*arcs), run_time=0.3)
        self.wait(0.3)
        # stored: the column joins the cache, the next token's slot opens
        self.play(*[c.animate.set_fill(self.c["cell_old"]) for c in new_cells], FadeOut(marker),
                  dots.animate.set_color(self.c["muted"]), run_time=0.5)
        slot = self.rect(col_x[t] - cw / 2 + 3, y0 + 3, cw - 6, rh * len(labels) - 6, fill=None,
                         stroke="muted", stroke_px=1.5, radius_px=8, dashed=True)
        nxt = self.t(str(t + 1), self.SMALL, "muted", x=col_x[t], y=y_tok)
        self.remove(slot, nxt)
        note = self.t(f"stored for good; token {t + 1} comes next", self.SMALL, "accent",
                      x=16, y=54, anchor="left")
        self.remove(note)
        self.play(FadeIn(slot), FadeIn(nxt), FadeOut(sub), FadeIn(note), run_time=0.5)
        self.wait(1.0)
        del title
