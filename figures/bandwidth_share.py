"""Figure 19, bandwidth-share: the share of the spec-sheet bandwidth one decoding stream uses.

Grey: every published llama-bench decode run of a dense model with a known bandwidth
(tokenwalk/data/llama-bench), share = tok/s x bytes a token reads / spec GB/s, placed at its
machine's spec bandwidth; a token reads the file less its embedding table, of which it takes
one row (the whole file where the output head is that table). Blue: the article's laptop, its
measured speeds with each model's bytes read per token (the MoE's file holds every expert, a
token reads only the ones it wakes). A dashed line marks the published runs' median.
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "bandwidth-share"
KIND = "P"
RENDERER = "matplotlib"


def alt(inputs: dict) -> str:
    laptop = ", ".join(f"the {p['label']} {fmt.pct(p['share'])} ({fmt.rate(p['tok_s'])})" for p in inputs["laptop"])
    return (f"Scatter plot of the share of the spec-sheet memory bandwidth one decoding stream uses, against the "
            f"machine's bandwidth: {inputs['published_runs']} published llama-bench runs of dense models in grey, "
            f"median {fmt.pct(inputs['median_share'])}; the laptop's Radeon 860M at "
            f"{fmt.comma(inputs['laptop_bandwidth_gbs'])} GB/s "
            f"in blue: {laptop}.")


def inputs(ctx) -> dict:
    """The published runs and the laptop's two measured points, as the namespace holds them
    (article/numbers/laptop.py: n.published_runs, n.laptop_share_points)."""
    n = ctx.n
    return {
        "published": n["published_runs"],
        "published_runs": n["published_run_count"],
        "median_share": n["published_share_median"],
        "laptop_bandwidth_gbs": n["laptop_bandwidth_gbs"],
        "laptop": n["laptop_share_points"],
    }


def data_table(inputs: dict) -> dict:
    """Every point the plot draws: the laptop's first, then the published runs by bandwidth."""
    rows = [[f"laptop, {p['label']} ({p['model']}, {fmt.rate(p['tok_s'])})", "measured",
             f"{fmt.comma(inputs['laptop_bandwidth_gbs'])} GB/s", fmt.pct(p["share"])] for p in inputs["laptop"]]
    for i, (bw, share, backend) in enumerate(sorted(inputs["published"], key=lambda p: (p[0], p[1]))):
        rows.append([f"published run {i + 1}", backend, f"{fmt.comma(bw)} GB/s", fmt.pct(share)])
    return {
        "caption": f"Share of the spec bandwidth used; median of the {inputs['published_runs']} published "
                   f"runs {fmt.pct(inputs['median_share'])}",
        "columns": ["run", "backend", "spec bandwidth", "share used"],
        "rows": rows,
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._plot import colour, new_figure, to_svg

    n = inputs
    fig, ax = new_figure(640, 380)
    fig.subplots_adjust(left=0.11, right=0.97, top=0.95, bottom=0.15)
    xs = [p[0] for p in n["published"]]
    ys = [p[1] * 100 for p in n["published"]]
    ax.scatter(xs, ys, s=22, color=colour("system"), alpha=0.55, linewidths=0, gid="points-published",
               label=f"published llama-bench runs ({fmt.comma(n['published_runs'])})")
    median = n["median_share"] * 100
    ax.axhline(median, color=colour("muted"), lw=1.2, ls=(0, (4, 3)), gid="line-median")
    ax.text(max(xs) * 1.05, median + 1.5, f"median {fmt.pct(n['median_share'])}", color=colour("muted"), fontsize=13,
            ha="right", va="bottom")
    bw = n["laptop_bandwidth_gbs"]
    for point in n["laptop"]:
        share = point["share"] * 100
        ax.plot([bw], [share], "o", ms=9, color=colour("bus"), gid=f"point-laptop-{point['label'].lower()}")
        # Three significant figures, as the article prints them: 16.8 GB (the dense file), 1.98 GB (the MoE).
        ax.annotate(f"laptop, {point['label']}: {fmt.pct(point['share'])}\n({fmt.rate(point['tok_s'])} × "
                    f"{fmt.bytes_si(point['bytes_per_token'])})", (bw, share), xytext=(14, 0),
                    textcoords="offset points", color=colour("bus"), fontsize=12, va="center")
    ax.set_xscale("log")
    ax.set_xlim(min(min(xs), bw) / 1.3, max(xs) * 1.3)
    ax.set_ylim(0, 105)
    ticks = [t for t in (50, 100, 200, 500, 1000, 2000) if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt.comma(t) for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(range(0, 101, 20))
    ax.set_xlabel("spec-sheet memory bandwidth, GB/s (log scale)")
    ax.set_ylabel("share of spec bandwidth, %")
    ax.legend(loc="lower left", frameon=False, fontsize=12, labelcolor=colour("fg"))
    return to_svg(
        fig,
        figure_id=ID,
        title="Share of the spec bandwidth one decoding stream uses",
        desc=alt(inputs),
        data={"median-share": n["median_share"], "published-runs": n["published_runs"],
              **{f"laptop-{p['label'].lower()}-share": p["share"] for p in n["laptop"]}},
    )
