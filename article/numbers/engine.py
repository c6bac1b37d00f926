"""engine_*: the machine that built the page, measured by `tokenwalk measure`."""

from __future__ import annotations

import re
from collections import ChainMap

from tokenwalk.errors import TokenwalkError

PREFIXES = ("engine",)
NEEDS = ("request",)  # the aside compares the build machine's time to first token with the request's
GB = 1e9


def names(src, n) -> dict:
    """engine, engine_*: the build machine's measurements, its other models, and how its time to
    first token compares with the request's."""
    out: dict = {}
    view = ChainMap(out, n)
    group(view)
    other_models(view)
    beside_the_laptop(view)
    size_check(view)
    peer_size_check(view)
    return out


def _checked(n: dict, prefix: str, check) -> list | None:
    """`check()`'s rows with `<prefix>_checked` and the smallest and largest decode and prefill
    errors (`<prefix>_<phase>_error_range`, fractions) in `n`; None where it cannot run."""
    try:
        rows = check()
    except TokenwalkError:
        n[f"{prefix}_checked"] = False
        return None
    n[f"{prefix}_checked"] = True
    for phase in ("decode", "prefill"):
        errors = [getattr(r, f"{phase}_ape") for r in rows]
        n[f"{prefix}_{phase}_error_range"] = [min(errors), max(errors)]
    return rows


def size_check(n: dict) -> None:
    """engine_size_*: the timing model's size check on this machine (tokenwalk.timing.size_check:
    each measured model predicted from a calibration on the other two): the smallest and largest
    decode and prefill errors as fractions, `engine_size_met` where both are within their targets,
    and `engine_size_decode_run_spread`, the widest spread of one model's decode runs (largest
    minus smallest over their median, among the measurement files that keep their runs: the
    machine's own noise; 0 without runs), or `engine_size_checked` False where the check cannot
    run (fewer than three models, or measurements of different machines)."""
    from statistics import median

    from tokenwalk.timing import size_check as check

    if _checked(n, "engine_size", check.leave_one_model_out) is not None:
        n["engine_size_decode_target"] = check.TARGETS["decode_ape"]
        n["engine_size_prefill_target"] = check.TARGETS["prefill_ape"]
        n["engine_size_met"] = (n["engine_size_decode_error_range"][1] <= check.TARGETS["decode_ape"]
                                and n["engine_size_prefill_error_range"][1] <= check.TARGETS["prefill_ape"])
        spreads = []
        for _file, _preset, data in check.measured_models():
            runs = [r.get("decode_tok_s") for r in data.get("runs") or [] if isinstance(r, dict)]
            runs = [float(x) for x in runs if isinstance(x, int | float)]
            if len(runs) >= 2:
                spreads.append((max(runs) - min(runs)) / median(runs))
        n["engine_size_decode_run_spread"] = max(spreads) if spreads else 0.0


def peer_size_check(n: dict) -> None:
    """engine_peer_size_*: the same check on llama.cpp's own kernels (llama-bench on this machine,
    `llama_bench_leave_one_model_out`), what a reader who runs llama.cpp or Ollama and pastes
    llama-bench's output can expect: the error ranges, per phase how many models meet the target
    and the largest error among them, the worst model, and the smallest model with the largest
    share of fixed cost in the steps of the two it was predicted from."""
    from tokenwalk.specs.model import load_model
    from tokenwalk.timing import size_check as check

    peer = _checked(n, "engine_peer_size", check.llama_bench_leave_one_model_out)
    if peer is None:
        return
    n["engine_peer_size_models"] = len(peer)
    for phase in ("decode", "prefill"):
        errors = {r.left_out: getattr(r, f"{phase}_ape") for r in peer}
        met = [e for e in errors.values() if e <= check.TARGETS[f"{phase}_ape"]]
        n[f"engine_peer_size_{phase}_met_count"] = len(met)
        n[f"engine_peer_size_{phase}_met_error"] = max(met) if met else None
        n[f"engine_peer_size_{phase}_worst_model"] = max(errors, key=errors.get)
    smallest = min((r.left_out for r in peer), key=lambda name: load_model(name).params)
    n["engine_peer_size_smallest_model"] = smallest
    n["engine_peer_size_smallest_title"] = load_model(smallest).title or smallest
    row = next(r for r in peer if r.left_out == smallest)
    n["engine_peer_size_others_fixed_share_max"] = max(row.calibration_fixed_shares.values())


def group(n: dict) -> None:
    """The machine that built the page, measured by `tokenwalk measure` (data/measurements/
    engine.json): every value as `engine_<name>`, plus the step times that put its decode
    speed beside its bandwidth. Without the file `n.engine` is None and the chapters say the
    machine has not been measured (never a build failure)."""
    from tokenwalk.physics.roofline import memory_time_s
    from tokenwalk.specs.machine import MEASURED_MACHINE, engine_measurements, measured_model

    data = engine_measurements()
    if data is None:
        n["engine"] = None
        return
    try:
        values = {k: v["value"] for k, v in data["values"].items()}
    except (KeyError, TypeError, AttributeError):
        raise TokenwalkError("tokenwalk/data/measurements/engine.json: values: each entry needs a 'value'") from None
    n["engine"] = {"what": data.get("what", ""), "where": data.get("where", ""), "how": data.get("how", ""),
                   "machine": MEASURED_MACHINE}
    for key, value in values.items():
        n[f"engine_{key}"] = value
    n["engine_when"] = data.get("when", "")
    n["engine_model_file"] = data.get("model", "")
    try:
        model = measured_model(n["engine_model_file"])
        n["engine_model"] = model.title or n["engine_model_file"]
        n["engine_model_layers"] = model.layers
    except TokenwalkError:
        n["engine_model"], n["engine_model_layers"] = n["engine_model_file"], None
    step_s = 1 / values["decode_tok_s"]
    n["engine_decode_step_ms"] = step_s * 1e3
    # What one decode step would last if it only streamed its weights at the measured bandwidth.
    n["engine_weights_step_ms"] = memory_time_s(values["bytes_read_per_token"], values["measured_bandwidth_gbs"]) * 1e3
    # ... and with the keys and values of the context read too (fp16, at the mean decode position)
    n["engine_weights_kv_step_ms"] = memory_time_s(values["bytes_read_per_token"] + values.get("kv_bytes_read_per_token", 0),
                                                   values["measured_bandwidth_gbs"]) * 1e3
    n["engine_bytes_read_per_token_mb"] = values["bytes_read_per_token"] / 1e6
    if "kv_bytes_read_per_token" in values:
        n["engine_kv_bytes_read_per_token_mb"] = values["kv_bytes_read_per_token"] / 1e6
    n["engine_prefill_ms_per_token"] = 1e3 / values["prefill_tok_s"]
    if "memory_bytes" in values:
        n["engine_memory_gb"] = values["memory_bytes"] / GB
    # the aside on `tokenwalk measure`: the compute units the OpenCL device reports (PoCL's CPU
    # device: one per core it was given); None when its name does not say
    units = re.search(r"(\d+) compute units?", str(n.get("engine_device", "")))
    n["engine_compute_units"] = int(units.group(1)) if units else None


def other_models(n: dict) -> None:
    """engine_others: the other models the engine ran on the build machine (data/measurements/
    engine-<model>.json), one dict a file with the values the aside's table prints beside the
    SmolLM2 run; empty without such files."""
    from tokenwalk.specs.machine import measured_model, other_engine_measurements

    others = []
    for label, data in other_engine_measurements():
        try:
            values = {k: v["value"] for k, v in data["values"].items()}
            row = {key: values[key] for key in ("load_s", "prefill_tok_s", "prompt_tokens", "ttft_s", "decode_tok_s",
                                                  "bytes_read_per_token", "measured_bandwidth_gbs",
                                                  "decode_bandwidth_share")}
            row["model_file"], row["when"] = data["model"], data.get("when", "")
        except (KeyError, TypeError, AttributeError) as error:
            raise TokenwalkError(f"tokenwalk/data/{label}: values: missing {error}") from None
        try:
            row["model"] = measured_model(row["model_file"]).title or row["model_file"]
        except TokenwalkError:
            row["model"] = row["model_file"]
        # a run on another machine (its OpenCL device named otherwise) keeps its own probe and
        # its column says so
        row["same_machine"] = data.get("where") == (n.get("engine") or {}).get("where")
        # one machine, one bandwidth: each run probes it again (the shared machine gave 36 to 49 GB/s
        # over a day), so the page prints the first run's probe once and every share against it
        if n.get("engine_measured_bandwidth_gbs") and row["same_machine"]:
            row["measured_bandwidth_gbs"] = n["engine_measured_bandwidth_gbs"]
            row["decode_bandwidth_share"] = (row["decode_tok_s"] * row["bytes_read_per_token"]
                                             / (row["measured_bandwidth_gbs"] * 1e9))
        others.append(row)
    n["engine_others"] = others
    # the aside's table: one more cell a row for each such run, written here so that a table row
    # stays one line of plain {{ }} (a line a test can render alone)
    from tokenwalk import format as fmt

    def cells(text) -> str:
        return "".join(f" {text(o)} |" for o in others)

    n["engine_other_cells"] = {
        "header": cells(lambda o: "The same machine" if o["same_machine"] else f"Another build machine, {o['when']}"),
        "rule": cells(lambda o: "---"),
        "model": cells(lambda o: o["model"]), "load": cells(lambda o: f"{fmt.fixed(o['load_s'], 2)} s"),
        "prefill": cells(lambda o: f"{fmt.fixed(o['prefill_tok_s'], 1)} tok/s over {fmt.comma(o['prompt_tokens'])} tokens"),
        "ttft": cells(lambda o: f"{fmt.fixed(o['ttft_s'], 1)} s"),
        "decode": cells(lambda o: f"{fmt.fixed(o['decode_tok_s'], 1)} tok/s"),
        "weights": cells(lambda o: fmt.mb(o["bytes_read_per_token"])),
        "bandwidth": cells(lambda o: f"{fmt.fixed(o['measured_bandwidth_gbs'], 1)} GB/s, "
                           + ("the same probe" if o["same_machine"] else "its own probe")),
        "share": cells(lambda o: fmt.pct(o["decode_bandwidth_share"])),
    }


def beside_the_laptop(n: dict) -> None:
    """After the laptop's group: whether the build machine's measured time to first token lands
    within a second of the timing model's for the article's request (the aside then says the
    match is a coincidence, so a reader does not take it for a copying slip)."""
    near = n.get("engine") and "engine_ttft_s" in n and abs(n["engine_ttft_s"] - n["request_ttft_s"]) < 1
    n["engine_ttft_near_request"] = bool(near)
