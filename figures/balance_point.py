"""Figure 16, balance-point: step time against the tokens in the step, 7B fp16 on one H100 SXM.

The memory time is flat (the weights cross the bus once per step), the compute time is a
slope (two operations per weight per token), and the step lasts the larger of the two:
the thick line. They cross at the balance point; in 4-bit weights the flat line drops to
a quarter and the crossing moves to about 74 tokens.
"""

from __future__ import annotations

import pathlib

from tokenwalk import format as fmt

ID = "balance-point"
KIND = "P"
RENDERER = "matplotlib"


def alt(inputs: dict) -> str:
    return (f"Line chart of one step of a dense 7B model in fp16 on an H100 SXM: the time to read the weights "
            f"is flat at {fmt.fixed(inputs['memory_ms'], 1)} ms, the compute time grows "
            f"{fmt.fixed(inputs['compute_ms_per_token'], 3)} ms "
            f"per token, and the step lasts the larger of the two; they cross near "
            f"{inputs['balance_label']} tokens (about {inputs['balance_4bit_label']} with 4-bit weights).")


def inputs(ctx) -> dict:
    """The H100 example's lines and balance points, as the namespace holds them (the prose
    prints the same balance points; article/numbers/h100.py draws the step's corners)."""
    n = ctx.n
    return {
        "model": n["d7_name"],
        "machine": n["h100_name"],
        "weights_gb": n["d7_size_gb"],
        "bandwidth_tbs": n["h100_bandwidth_tbs"],
        "tflops": n["h100_tflops"],
        "tokens_max": n["balance_plot_tokens"],
        "memory_ms": n["d7_step_memory_ms"],
        "compute_ms_per_token": n["d7_compute_per_token_ms"],
        "balance_tokens": n["balance_tokens_fp16"],
        "memory_ms_4bit": n["balance_memory_4bit_ms"],
        "balance_tokens_4bit": n["balance_tokens_4bit"],
        "step_tokens": n["balance_step_tokens"],
        "step_ms": n["balance_step_ms"],
        "balance_label": fmt.count(n["balance_tokens_fp16"]),
        "balance_4bit_label": fmt.count(n["balance_tokens_4bit"]),
    }


def data_table(inputs: dict) -> dict:
    """The numbers the plot draws, as the labels print them."""
    n = inputs
    corners = [[f"step at {fmt.count(t)} tokens", f"{fmt.fixed(ms, 1)} ms"]
               for t, ms in zip(n["step_tokens"], n["step_ms"], strict=True)]
    return {
        "caption": f"{n['model']} on {n['machine']}: the lines' values",
        "columns": ["quantity", "value"],
        "rows": [
            ["memory time per step, fp16 weights (flat)", f"{fmt.fixed(n['memory_ms'], 1)} ms"],
            ["compute time per token (slope)", f"{fmt.fixed(n['compute_ms_per_token'], 3)} ms"],
            ["balance point, fp16 weights", f"{n['balance_label']} tokens"],
            ["memory time per step, 4-bit weights", f"{fmt.fixed(n['memory_ms_4bit'], 1)} ms"],
            ["balance point, 4-bit weights", f"{n['balance_4bit_label']} tokens"],
            *corners,
        ],
    }


def render(inputs: dict, out: pathlib.Path) -> str:
    from figures._plot import colour, new_figure, to_svg

    n = inputs
    memory, slope, balance = n["memory_ms"], n["compute_ms_per_token"], n["balance_tokens"]
    x_max = n["tokens_max"]
    y_max = max(slope * x_max, memory) * 1.08
    fig, ax = new_figure(640, 380)
    fig.subplots_adjust(left=0.1, right=0.97, top=0.95, bottom=0.16)

    # Regions: memory-bound left of the crossing, compute-bound right.
    ax.axvspan(0, balance, color=colour("bus"), alpha=0.07, lw=0, gid="region-memory")
    ax.axvspan(balance, x_max, color=colour("compute"), alpha=0.07, lw=0, gid="region-compute")
    # The two sides and the step (the larger of the two, thick).
    ax.plot([0, x_max], [memory, memory], color=colour("bus"), lw=2, gid="line-memory")
    ax.plot([0, x_max], [0, slope * x_max], color=colour("compute"), lw=2, gid="line-compute")
    ax.plot(n["step_tokens"], n["step_ms"], color=colour("fg"), lw=5, alpha=0.85, gid="line-step",
            solid_joinstyle="round")
    # 4-bit weights: the flat line drops, the crossing moves left.
    ax.plot([0, x_max], [n["memory_ms_4bit"]] * 2, color=colour("bus"), lw=1.5, ls=(0, (2, 3)), gid="line-memory-4bit")
    ax.plot([n["balance_tokens_4bit"]], [n["memory_ms_4bit"]], "o", ms=6, color=colour("bus"), gid="point-4bit")
    ax.annotate(f"4-bit weights: {fmt.fixed(n['memory_ms_4bit'], 1)} ms, crossing ≈ {n['balance_4bit_label']}",
                (n["balance_tokens_4bit"], n["memory_ms_4bit"]), xytext=(12, -20), textcoords="offset points",
                color=colour("muted"), fontsize=13)
    # The crossing.
    ax.axvline(balance, color=colour("accent"), lw=1.2, ls=(0, (4, 3)), gid="line-balance")
    ax.plot([balance], [memory], "o", ms=8, color=colour("accent"), gid="point-balance")
    ax.text(balance + 8, y_max * 0.97, f"≈ {n['balance_label']} tokens", color=colour("accent"), fontsize=14,
            fontweight="bold", va="top")
    ax.text(balance * 0.5, y_max * 0.97, "memory-bound", color=colour("bus"), ha="center", va="top", fontsize=13)
    ax.text((balance + x_max) / 2 + 40, y_max * 0.86, "compute-bound", color=colour("compute"), ha="center",
            va="top", fontsize=13)
    ax.text(12, memory + y_max * 0.02,
            f"memory: {fmt.fixed(memory, 1)} ms, flat ({fmt.fixed(n['weights_gb'], 0)} GB ÷ "
            f"{fmt.fixed(n['bandwidth_tbs'], 2)} TB/s)",
            color=colour("bus"), fontsize=13, va="bottom")
    anchor = balance * 0.8
    ax.annotate(f"compute: {fmt.fixed(slope, 3)} ms per token", (anchor, slope * anchor), xytext=(balance + 15, memory * 0.72),
                color=colour("compute"), fontsize=13, va="center",
                arrowprops={"arrowstyle": "-", "color": colour("compute"), "lw": 1})

    ax.set_xlim(0, x_max)
    ax.set_ylim(0, y_max)
    ax.set_xticks(range(0, x_max + 1, 100))
    ax.set_xlabel("tokens in the step")
    ax.set_ylabel("ms")
    ax.text(x_max - 8, memory * 0.4, "thick line: the step,\nthe larger of the two", color=colour("muted"),
            fontsize=12, ha="right", va="bottom")

    return to_svg(
        fig,
        figure_id=ID,
        title="Step time against tokens in the step",
        desc=alt(inputs),
        data={"balance-tokens": balance, "balance-tokens-4bit": n["balance_tokens_4bit"], "memory-ms": memory,
              "compute-ms-per-token": slope},
    )
