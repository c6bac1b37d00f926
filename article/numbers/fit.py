"""fit_*: how wrong the timing model is on machines it was not fitted on, as `tokenwalk fit`
recorded it (tokenwalk.timing.model.unseen_machine_summary: leave one chip family out), so
the prose quotes the same numbers as `tokenwalk validate --summary` and the README."""

from __future__ import annotations

PREFIXES = ("fit_",)
# the CPU whose compute figure the prose works out (machines.json; one of the fit's CPU runs)
CPU_EXAMPLE = "AMD Ryzen 9 7940HS (CPU, 8x Zen 4)"
# the chip whose published prompt runs show how far software moves one chip's prefill
# (machines.json; its runs in benchmarks.json and benchmarks-small.json)
STACK_EXAMPLE = "AMD Ryzen AI Max+ 395 (Radeon 8060S iGPU)"
# the board whose decode run shows the memory path a spec sheet leaves out (machines.json; its
# run in benchmarks-small.json), beside the fit's row for a CPU sharing system memory
BOARD_EXAMPLE = "NVIDIA Jetson Nano 4GB (CPU, 4x Cortex-A57)"
BOARD_EXAMPLE_ROW = "CPU/integrated"
NEEDS: tuple[str, ...] = ()


def names(src, n) -> dict:
    """fit_unseen_*: errors as fractions of the predicted speed (0.092 = 9.2 %), coverage of
    the likely range as a fraction of left-out runs, and the counts they are taken over."""
    from tokenwalk.timing.model import unseen_machine_summary

    s = unseen_machine_summary()
    n: dict = {}
    n["fit_unseen_families"] = s["families"]
    n["fit_unseen_decode_runs"] = s["decode_runs"]
    n["fit_unseen_prefill_runs"] = s["prefill_runs"]
    n["fit_unseen_decode_error_median_share"] = s["decode_median_ape"]
    n["fit_unseen_decode_error_p90_share"] = s["decode_p90_ape"]
    n["fit_unseen_prefill_error_median_share"] = s["prefill_median_ape"]
    n["fit_unseen_decode_range_coverage_share"] = s["decode_coverage"]
    n["fit_unseen_prefill_range_coverage_share"] = s["prefill_coverage"]
    # decode's floor on the data: cards the model is told the same things about, against their group's mean
    twins = s["decode_twin_spread"] or {}
    n["fit_twin_decode_cards"] = twins.get("chips", 0)
    n["fit_twin_decode_error_median_share"] = twins.get("median_ape")
    from tokenwalk.timing.model import SMALL_BAND_MIN_RUNS

    n["fit_small_band_min_runs"] = SMALL_BAND_MIN_RUNS
    # the small models' own check (benchmarks-small.json: 0.1B-8B models, their families left out too)
    for phase in ("decode", "prefill"):
        small = s.get(f"{phase}_small_models") or {}
        n[f"fit_small_{phase}_runs"] = small.get("runs", 0)
        n[f"fit_small_{phase}_error_median_share"] = small.get("median_ape")
        if phase == "decode":
            n["fit_small_decode_machines"] = small.get("machines", 0)
        n[f"fit_small_{phase}_error_p90_share"] = small.get("p90_ape")
        # the simulator's likely range for a model smaller than any fitted (measured / predicted
        # speed), from the runs on the machine's class of device where it has enough of them
        # (timing_model.small_model_class): a graphics card's, a chip sharing system memory's
        for device_class in ("discrete", "integrated"):
            c = (s.get(f"{phase}_small_models_by_class") or {}).get(device_class) or {}
            n[f"fit_small_{phase}_{device_class}_runs"] = c.get("runs", 0)
            n[f"fit_small_{phase}_{device_class}_speed_ratio_p10"] = c.get("speed_ratio_p10")
            n[f"fit_small_{phase}_{device_class}_speed_ratio_p90"] = c.get("speed_ratio_p90")
    # a CPU: the fit's CPU row and how many machines it comes from, and the compute figure a CPU
    # takes from its cores (tokenwalk.specs.cpu), shown on one of the fitted laptops
    from tokenwalk.specs.cpu import vector_peak_tflops
    from tokenwalk.timing.llama_bench import cpu_core_groups
    from tokenwalk.timing.model import load_fit

    cpu_row = load_fit()["backends"].get("CPU") or {}
    n["fit_cpu_row_machines"] = min(cpu_row.get("decode_machines", 0), cpu_row.get("prefill_machines", 0))
    (group,) = cpu_core_groups(CPU_EXAMPLE)
    n["fit_cpu_example_title"] = CPU_EXAMPLE.split(" (")[0].removeprefix("AMD ")
    n["fit_cpu_example_cores"] = group.count
    n["fit_cpu_example_ghz"] = group.max_ghz
    n["fit_cpu_example_flops_per_cycle"] = int(group.fp32_flops_per_cycle)
    n["fit_cpu_example_tflops"] = vector_peak_tflops([group])
    # one chip, many builds: the share of its compute figure each published prompt run of the
    # example chip reached (BenchRun.compute_share), whatever the backend, build or library
    from tokenwalk.timing.llama_bench import every_published_run

    published = every_published_run()
    shares = [r.compute_share for r in published
              if r.machine.name == STACK_EXAMPLE and r.compute_share and not r.out_of_domain]
    n["fit_stack_example_title"] = STACK_EXAMPLE.split(" (")[1].removesuffix(" iGPU)")
    n["fit_stack_example_prefill_runs"] = len(shares)
    n["fit_stack_example_compute_share_min"] = min(shares, default=None)
    n["fit_stack_example_compute_share_max"] = max(shares, default=None)
    # one board's memory path: the share of its spec bandwidth its published decode run reached
    # (BenchRun.bandwidth_share), against the share the fit's row for such a CPU expects
    board = [r for r in published if r.machine.name == BOARD_EXAMPLE and r.bandwidth_share]
    n["fit_board_example_title"] = BOARD_EXAMPLE.split(" (")[0].removeprefix("NVIDIA ").removesuffix(" 4GB")
    n["fit_board_example_model"] = board[0].model.name.split(" (")[0] if board else None
    n["fit_board_example_bandwidth_gbs"] = board[0].machine.bandwidth_gbs if board else None
    n["fit_board_example_bandwidth_share"] = board[0].bandwidth_share if board else None
    n["fit_board_example_row_share"] = (load_fit()["backends"].get(BOARD_EXAMPLE_ROW) or {}).get("bandwidth_efficiency")
    # a mixture of experts' prefill on a backend without a pair of its own: each published
    # dense/MoE pair predicted with the other pairs' rows_half (tokenwalk.timing.shape_check)
    from tokenwalk.timing.shape_check import held_out

    shape = held_out()
    n["fit_shape_pairs"] = len(shape)
    # the prose names the two backends the pairs were measured on
    n["fit_shape_pairs_are_vulkan_amd_metal_cuda"] = [r.pair for r in shape] == ["Vulkan/AMD", "Metal", "CUDA"]
    n["fit_shape_others_error_min_share"] = min((r.others_ape for r in shape), default=None)
    n["fit_shape_others_error_max_share"] = max((r.others_ape for r in shape), default=None)
    n["fit_shape_without_error_min_share"] = min((r.without_shape_ape for r in shape), default=None)
    return n
