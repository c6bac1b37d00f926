"""The fitted timing model: how long a decode step or a prefill chunk really takes.

In two sentences: a step lasts the larger of its bytes over (bandwidth efficiency x
spec-sheet bandwidth) and its operations over (compute efficiency x spec-sheet FP16
FLOP/s), plus a fixed cost per kernel it launches (the launches counted from the model's
architecture as llama.cpp's graph builds it, `tokenwalk.physics.launches`); the
two efficiencies and the cost per launch are fitted per backend and class of device
(CUDA/discrete, ROCm/datacentre, Metal/integrated ...) and, where a backend runs on several
makers' chips, per backend and maker (Vulkan/AMD, Vulkan/Intel ...: a machine's `vendor` picks
it; other candidate structures give the cards with HBM rows of their own, CUDA/HBM) on
published llama-bench runs, the compute efficiency scaled by a factor per weight format and the bandwidth efficiency by a
trend with the year the chip's family first shipped (the structure `tokenwalk fit` chose
by leave-one-family-out error among the candidates in `tokenwalk.timing.fit.solve`; a structure
may trend the compute efficiency with the family's year too). Bytes and operations are the roofline's
(`tokenwalk.physics.roofline`): the weights a step reads (for a mixture of experts only the
experts its tokens wake), the KV cache it reads and writes, 2 x active parameters per
token and the attention scores; a prompt step leaves out what it does not multiply (the
output head but for its last token, the embedding lookup) where the spec says how its
embedding is stored (`prefill_skipped_flops`).

Why this shape: decode of one stream reads every active weight per token, so its time is
bytes / bandwidth, but the share of the bandwidth it reaches drops when each kernel reads
little (a small model, an MoE, the largest chips), which a fixed cost per launch explains;
prefill is arithmetic, bounded below by one read of the weights per chunk.

The backends' coefficients live in `data/timing_fit.json`, written by `tokenwalk fit`
(`tokenwalk.timing.fit`, numpy/scipy); this module only evaluates them, in pure
Python, so the browser gets the same numbers. A machine with its own measurements (the
article's laptop; the machine that built the page, from `tokenwalk measure`'s engine.json;
each in the `calibration` block of its preset) is not in that file: its coefficients
are solved from the measurements when it is timed (`tokenwalk.timing.calibration`), so an
edited measurement needs no refit. Units: seconds, bytes, GB/s = 1e9 bytes/s,
TFLOP/s = 1e12 operations/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tokenwalk import data_refs
from tokenwalk.errors import SpecError, TokenwalkError
from tokenwalk.physics import roofline
from tokenwalk.physics.launches import Launches, decode_launches
from tokenwalk.specs.protocols import Machine, Model
from tokenwalk.timing import calibration as timing_calibration
from tokenwalk.timing import prefill_shape

FIT_FILE = "timing_fit.json"
FIT_PATH = data_refs.DEFAULT_ROOT / FIT_FILE  # where `tokenwalk fit` writes by default

# Where a coefficient may lie, for the published fit and a machine's own calibration alike.
# What the model aims at on chip families it was not fitted on (leave one family out):
# median and 90th-percentile error of the predicted tok/s, as fractions. `tokenwalk fit`
# chooses its structure by how far it falls short of them; `tokenwalk validate` prints them.
TARGETS = {"decode_median_ape": 0.07, "decode_p90_ape": 0.30, "prefill_median_ape": 0.20}
# The same for the small models' runs (benchmarks-small.json: 0.1B-8B, each left out with its
# chip family): what a reader's own small model on their own machine can expect.
SMALL_MODEL_TARGETS = {"decode_median_ape": 0.10, "decode_p90_ape": 0.35, "prefill_median_ape": 0.25,
                       "prefill_p90_ape": 1.00}

BOUNDS = {
    "bandwidth_efficiency": (0.05, 1.0),  # a share of the spec sheet
    # Never negative (llama.cpp's CPU backend can pay next to nothing per node; a GPU
    # backend's floor is GPU_LAUNCH_FLOOR_S, below); at most 50 us, the top of the 5-50 us a driver's launch path is reported to
    # take, above the ~20 us NVIDIA's profiler guide measured for a whole PyTorch
    # element-wise launch round trip (LAUNCH_COST_SOURCES).
    "launch_cost_s": (0.0, 5e-5),
    "compute_efficiency": (0.01, 1.0),
}
LAUNCH_COST_SOURCES = (
    "https://groundy.com/articles/every-cuda-kernel-pays-a-launch-tax-the-host-to-device-walkthrough/: "
    "NVIDIA's Nsight Systems measurement of a PyTorch element-wise kernel put the launch round trip at "
    "roughly 20 microseconds on a Tesla V100",
    "http://www.mrgr.cn/news/96698.html: the CUDA driver's checks, parameter set-up and scheduling of a "
    "launch usually take 5-50 us on modern systems",
)

# A GPU backend's launch costs at least this (seconds): the part of a kernel's time
# on the GPU that no recording or graph replay removes. Bracketed by two published
# measurements in llama.cpp (GPU_LAUNCH_FLOOR_SOURCES): graph replay on an H100 took 1.4 us
# of gaps off each kernel of a 7B decode step (the gaps alone, so the floor is above that),
# and the smallest kernel of a 14B decode step, an RMS norm of 5,120 numbers, still occupies
# 4.3 us of GPU time under Vulkan (a kernel doing next to nothing, so the floor is below
# that: consecutive kernels without a dependency overlap part of it). A llama.cpp CPU
# backend's "launch" is its threads meeting at a node, which can cost next to nothing.
GPU_LAUNCH_FLOOR_S = 2e-6
GPU_LAUNCH_FLOOR_SOURCES = (
    "https://github.com/ggml-org/llama.cpp/issues/6763: NVIDIA's CUDA graphs for llama.cpp, llama-2-7b "
    "Q4_K_M on an H100-PCIe went from 143.35 to 163.83 tok/s with the token's kernels replayed as one "
    "graph (0.87 ms a token, over the 614 launches of a Llama 2 7B step: 1.4 us a launch)",
    "https://github.com/ggml-org/llama.cpp/pull/17701: llama.cpp's Vulkan timestamps over a tg128 run of "
    "DeepSeek-R1-Distill-Qwen-14B Q4_K_M (139.89 tok/s): 'RMS_NORM_MUL RMS_NORM(5120,1,1,1): 124257 x "
    "4.274 us' a kernel",
)


def launch_bounds(cpu: bool) -> dict:
    """BOUNDS for a machine on llama.cpp's CPU backend (`cpu`), or on a GPU backend: the
    same, with the cost per launch from GPU_LAUNCH_FLOOR_S up."""
    if cpu:
        return BOUNDS
    return dict(BOUNDS, launch_cost_s=(GPU_LAUNCH_FLOOR_S, BOUNDS["launch_cost_s"][1]))


def rounded(bandwidth_efficiency: float, launch_cost_s: float, compute_efficiency: float) -> dict:
    """The three coefficients at the precision they are kept (4 decimals, 1 ns): what the
    fit file stores and a calibration uses, so a number does not hang on the solver's last
    digits (the measurements themselves have two or three significant figures)."""
    return {"bandwidth_efficiency": round(bandwidth_efficiency, 4), "launch_cost_s": round(launch_cost_s, 9),
            "compute_efficiency": round(compute_efficiency, 4)}


@dataclass(frozen=True)
class Coefficients:
    """The fitted numbers one machine's steps are timed with.

    bandwidth_efficiency: share of the spec bandwidth the weight and KV reads reach (0-1];
    compute_efficiency: share of the spec FP16 FLOP/s matrix products reach;
    launch_cost_s: fixed seconds per kernel launch (queueing, dispatch, synchronisation);
    row: which row was used ("CUDA", "default", or a calibrated machine's name: "laptop-860m");
    note: why a calibration could not meet its measurements exactly ("" when it does).
    """

    row: str
    bandwidth_efficiency: float
    compute_efficiency: float
    launch_cost_s: float
    note: str = ""


def load_fit(path: str | Path | None = None, store: data_refs.DataStore | None = None) -> dict:
    """The fitted coefficients (the JSON `tokenwalk fit` writes): the data store's
    timing_fit.json (the default store's if None), or the file at `path`."""
    missing = missing_fit()
    if path is None:
        try:
            return data_refs.store_or_default(store).read_json(FIT_FILE)
        except TokenwalkError as error:
            raise SpecError(str(error).replace("no such data file", missing)) from None
    return read_fit_file(str(path))


@lru_cache(maxsize=8)
def read_fit_file(path: str) -> dict:
    """A fit file other than the data folder's, read once (`tokenwalk fit` clears it after writing)."""
    return data_refs.read_json(Path(path), missing=missing_fit(), error=SpecError)


def missing_fit() -> str:
    return "no fitted timing model (run `tokenwalk fit`)"


def _row(values: dict, row: str) -> Coefficients:
    return Coefficients(
        row=row,
        bandwidth_efficiency=float(values["bandwidth_efficiency"]),
        compute_efficiency=float(values["compute_efficiency"]),
        launch_cost_s=float(values["launch_cost_s"]),
    )


HBM_ROW = "HBM"  # the row of the cards whose memory is HBM, where the fit's structure has one


def is_hbm(memory_type: str | None) -> bool:
    """Whether a machine's memory type is high-bandwidth memory ("HBM2", "HBM2e", "HBM3" ...)."""
    return str(memory_type or "").upper().startswith("HBM")


def row_key(rows: dict, backend: str | None, device_class: str | None, vendor: str | None = None,
            memory_type: str | None = None) -> str | None:
    """The key of the fit's row for a backend on a maker's chip, on HBM, or on a class of device:
    "Vulkan/Intel" where the fit has that row, else "CUDA/HBM" for a card with HBM where the fit
    has that row, else "ROCm/discrete", else "ROCm", else None (the default row). Case-insensitive."""
    by_lower = {key.lower(): key for key in rows}
    backend = str(backend or "")
    candidates = (([f"{backend}/{vendor}"] if vendor else []) + ([f"{backend}/{HBM_ROW}"] if is_hbm(memory_type) else [])
                  + ([f"{backend}/{device_class}"] if device_class else []))
    for key in candidates + [backend]:
        if key.lower() in by_lower:
            return by_lower[key.lower()]
    return None


def quant_factor(fit: dict, file_type: str | None, phase: str = "prefill") -> float:
    """The fit's multiplier for a weight format: of the compute efficiency ("prefill",
    `quant_compute_factor`) or of the bandwidth efficiency ("decode",
    `quant_bandwidth_factor`, empty unless the chosen structure has one). 1 for the
    reference format, Q4_0, and for any format the fit has no factor for."""
    key = "quant_compute_factor" if phase == "prefill" else "quant_bandwidth_factor"
    return float(fit.get(key, {}).get(str(file_type or ""), 1.0))


def year_factor(fit: dict, architecture_year: float | None, key: str = "year_trend") -> float:
    """The fit's multiplier of the bandwidth efficiency (key "year_trend") or of the compute
    efficiency ("compute_year_trend") for a chip family first shipped in `architecture_year`:
    exp(per_year x (min(year, until_year) - reference_year)) (when the chosen structure has
    that trend; a trend without until_year does not level off); 1 without the trend or
    without a year (taken at the reference)."""
    trend = fit.get(key)
    if not trend or architecture_year is None:
        return 1.0
    year = float(architecture_year)
    if trend.get("until_year") is not None:
        year = min(year, float(trend["until_year"]))
    return math.exp(float(trend["per_year"]) * (year - float(trend["reference_year"])))


def is_cpu(machine) -> bool:
    """Whether `machine` runs llama.cpp's CPU backend: its compute figure is then its cores'
    FP32 vector peak (`tokenwalk.specs.cpu`), not an FP16 figure, and no GPU is involved."""
    return (getattr(machine, "backend", None) or "").upper() == "CPU"


def bounds_for(machine) -> dict:
    """The coefficients' bounds for `machine`: `launch_bounds` of its backend."""
    return launch_bounds(is_cpu(machine))


def compute_figure_name(machine) -> str:
    """What `machine`'s fp16_tflops stands for, as a walk says it: "the FP16 peak", or for a
    CPU "the cores' FP32 vector peak"."""
    return "the cores' FP32 vector peak" if is_cpu(machine) else "the FP16 peak"


def trend_year(machine) -> float | None:
    """The year `year_factor` reads for `machine`: its chip family's first year, but None for a
    CPU (`is_cpu`). The trend is a GPU finding: it is fitted on the GPU families (every CPU
    family of the data shipped after the year it levels off in), and llama.cpp's CPU kernels are
    one program on every CPU, so nothing carries it to a CPU of 2013."""
    return None if is_cpu(machine) else getattr(machine, "architecture_year", None)


def year_trend_formula(trend: dict) -> str:
    """`year_factor` as the command line prints it: "exp(0.083 x (min(family year, 2021) - 2021))"."""
    year = "family year" if trend.get("until_year") is None else f"min(family year, {trend['until_year']})"
    return f"exp({trend['per_year']:.3f} x ({year} - {trend['reference_year']}))"


def coefficients(machine: Machine, fit: dict | None = None, model: Model | None = None,
                 store: data_refs.DataStore | None = None) -> Coefficients:
    """The coefficients for `machine`: its own calibration if its preset
    names it (the article's laptop, this-machine when engine.json exists: solved from its
    measurements now), else the fit's row of its backend on its
    class of device ("ROCm/discrete"; a maker's chips, "Vulkan/Intel", where the fit has
    such rows; "CUDA/HBM" for a machine whose `memory_type` is HBM, where the fit has it),
    else of its `backend`, else the row fitted on all GPU runs together
    ("default"). With `model`, a fitted row's efficiencies are scaled by the fit's factors
    for the model's weight format (`quant_factor`) and its bandwidth efficiency by the trend
    with the machine's `architecture_year` (`year_factor`); a calibrated machine's are its
    own (solved on its own model). Files are read from the data `store` (the default one if None)."""
    fit = fit if fit is not None or timing_calibration.is_calibrated(machine) else load_fit(store=store)
    return _for_model(_machine_coefficients(machine, fit, store), machine, model, fit)


def _machine_coefficients(machine, fit: dict | None, store) -> Coefficients:
    """The calibration's coefficients, or the fit's row as fitted (no model's factors)."""
    solved = timing_calibration.solve(machine, bounds_for(machine), store)
    if solved is not None:
        e_bw, overhead, e_c, note = solved
        values = rounded(e_bw, overhead, e_c)
        return Coefficients(row=(machine.calibration or {}).get("label") or machine.name, note=note, **values)
    backends = fit.get("backends", {})
    key = row_key(backends, machine.backend, getattr(machine, "device_class", None), getattr(machine, "vendor", None),
                  getattr(machine, "memory_type", None))
    return _row(backends[key], key) if key is not None else _row(fit["default"], "default")


def _for_model(coeffs: Coefficients, machine, model, fit: dict | None) -> Coefficients:
    """A fitted row scaled for the model's weight format and the machine's family year; a
    calibration (solved on the machine's own models) as it is."""
    if timing_calibration.is_calibrated(machine):
        return coeffs
    file_type = getattr(model, "file_type", None) if model is not None else None
    factor = quant_factor(fit, file_type, "prefill") * year_factor(fit, trend_year(machine), "compute_year_trend")
    bw_factor = quant_factor(fit, file_type, "decode") * year_factor(fit, trend_year(machine))
    if factor != 1.0 or bw_factor != 1.0:
        # never more than the whole spec sheet, however new the family (the fit caps it the same way)
        capped = min(coeffs.bandwidth_efficiency * bw_factor, BOUNDS["bandwidth_efficiency"][1])
        coeffs = Coefficients(row=coeffs.row, bandwidth_efficiency=capped,
                              compute_efficiency=coeffs.compute_efficiency * factor,
                              launch_cost_s=coeffs.launch_cost_s)
    return coeffs


def _require_bandwidth(machine) -> None:
    if not machine.bandwidth_gbs:
        raise SpecError(f"machine {machine.name!r}: field 'bandwidth_gbs' is missing; timing needs it")


def prefill_step(model, machine, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16",
                 store: data_refs.DataStore | None = None) -> "roofline.StepTime":
    """The prompt step the model times: `roofline.prompt_step` (the roofline's prefill step
    without the operations a prompt step does not do), its arithmetic charged for the shape
    of its products (`prefill_shape.shaped_prompt_step`: a mixture of experts' small
    products; a dense model's step as it is)."""
    return prefill_shape.shaped_prompt_step(model, machine, chunk_tokens, context_before, kv_type,
                                            prefill_shape.shape_for(model, machine, store)[1])


def step_s(step: "roofline.StepTime", launches: int, coeffs: Coefficients) -> float:
    """Seconds of one step: max(memory_s / e_bw, compute_s / e_compute) + launches x cost per launch."""
    memory = step.memory_s / coeffs.bandwidth_efficiency
    compute = step.compute_s / coeffs.compute_efficiency
    return max(memory, compute) + launches * coeffs.launch_cost_s


def step_bound(step: "roofline.StepTime", coeffs: Coefficients) -> str:
    """"memory" or "compute": which side sets the step's time at the fitted efficiencies
    (the raw roofline may say otherwise on a machine whose FP16 figure is an achieved rate)."""
    memory = step.memory_s / coeffs.bandwidth_efficiency
    compute = step.compute_s / coeffs.compute_efficiency
    return "memory" if memory >= compute else "compute"


@dataclass(frozen=True)
class MachineTiming:
    """One model on one machine, resolved once for timing its steps (`machine_timing`): the
    spec sheet's peaks, the coefficients of the machine's fit row or calibration scaled for
    the model (`coefficients`), and the row as fitted or calibrated, before the model's
    factors (what a walk reports as the machine's efficiencies), and the kernel launches of
    one of the model's steps (`tokenwalk.physics.launches`). Every step is then timed from
    these fields, with no lookup, file read or solve."""

    model: Model
    machine: Machine
    peaks: roofline.Peaks
    coefficients: Coefficients
    row_coefficients: Coefficients
    calibrated: bool
    launches: Launches
    rows_half: float  # what its prompt steps are priced with (`prefill_shape.shape_for`): 0 for a dense model
    shape_pair: str  # which pair of prefill_shape.json gave rows_half ("" for a dense model)

    def step_s(self, step: "roofline.StepTime") -> float:
        """Seconds of a roofline step of this model on this machine (`step_s`)."""
        return step_s(step, self.launches.per_step, self.coefficients)

    @property
    def fixed_step_s(self) -> float:
        """Seconds a step pays for its launches alone: launches x cost per launch."""
        return self.launches.per_step * self.coefficients.launch_cost_s

    def step_bound(self, step: "roofline.StepTime") -> str:
        """"memory" or "compute" at the fitted efficiencies (`step_bound`)."""
        return step_bound(step, self.coefficients)

    def decode_step(self, context_tokens: float = 0, users: int = 1, kv_type: str = "f16") -> "roofline.StepTime":
        """The roofline's decode step at the machine's peaks."""
        return roofline.decode_step(self.model, self.peaks, context_tokens, users, kv_type)

    def decode_step_s(self, context_tokens: float = 0, users: int = 1, kv_type: str = "f16") -> float:
        """Seconds of one decode step (`decode_step_s`)."""
        return self.step_s(self.decode_step(context_tokens, users, kv_type))

    def prompt_step(self, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16") -> "roofline.StepTime":
        """The prompt step the model times (`prefill_step`) at the machine's peaks."""
        return prefill_shape.shaped_prompt_step(self.model, self.peaks, chunk_tokens, context_before, kv_type,
                                                self.rows_half)

    def prefill_chunk_s(self, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16") -> float:
        """Seconds of one prefill step (`prefill_chunk_s`)."""
        if not self.machine.fp16_tflops:
            raise SpecError(f"machine {self.machine.name!r}: field 'fp16_tflops' is missing; prefill timing needs it")
        return self.step_s(self.prompt_step(chunk_tokens, context_before, kv_type))


def machine_timing(model: Model, machine: Machine, fit: dict | None = None,
                   store: data_refs.DataStore | None = None) -> MachineTiming:
    """`model` on `machine` resolved for timing: its row or calibration found (solved) once,
    from the data `store` (the default one if None)."""
    _require_bandwidth(machine)
    calibrated = timing_calibration.is_calibrated(machine)
    fit = fit if fit is not None or calibrated else load_fit(store=store)
    row = _machine_coefficients(machine, fit, store)
    pair, rows_half = prefill_shape.shape_for(model, machine, store)
    return MachineTiming(model=model, machine=machine, peaks=roofline.peaks(machine),
                         coefficients=_for_model(row, machine, model, fit), row_coefficients=row,
                         calibrated=calibrated, launches=decode_launches(model, store),
                         rows_half=rows_half, shape_pair=pair)


def decode_step_s(model: Model, machine: Machine, context_tokens: float = 0, users: int = 1, kv_type: str = "f16",
                  fit: dict | None = None) -> float:
    """Seconds of one decode step: `users` conversations, each `context_tokens` deep, one
    new token each. 1 / this is one user's tok/s. A machine with no FP16 figure is timed by
    its bytes alone (one stream's arithmetic is negligible next to its reads)."""
    return machine_timing(model, machine, fit).decode_step_s(context_tokens, users, kv_type)


def decode_step_bound(model, machine, context_tokens: float = 0, users: int = 1, kv_type: str = "f16",
                      fit: dict | None = None) -> str:
    """What bounds one decode step at the fitted efficiencies: "memory" or "compute"."""
    timed = machine_timing(model, machine, fit)
    return timed.step_bound(timed.decode_step(context_tokens, users, kv_type))


def prefill_chunk_s(model: Model, machine: Machine, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16",
                    fit: dict | None = None) -> float:
    """Seconds of one prefill step of `chunk_tokens` prompt tokens after `context_before`
    tokens already in the cache: the arithmetic at the fitted share of the FP16 peak,
    never less than one read of the weights (and the cache) per chunk."""
    return machine_timing(model, machine, fit).prefill_chunk_s(chunk_tokens, context_before, kv_type)


def prefill_s(model, machine, prompt_tokens: int, chunk_tokens: int | None = None, kv_type: str = "f16",
              fit: dict | None = None) -> float:
    """Seconds to prefill `prompt_tokens`, in chunks of `chunk_tokens` (one step if None)."""
    timed = machine_timing(model, machine, fit)
    return sum(timed.prefill_chunk_s(n, before, kv_type)
               for before, n in roofline.prompt_chunks(prompt_tokens, chunk_tokens or prompt_tokens))


def error_band(phase: str, fit: dict | None = None, store: data_refs.DataStore | None = None,
               model_params: float | None = None, device_class: str | None = None) -> tuple[float, float]:
    """(low, high) multipliers of a predicted time for a machine the fit has not seen: from
    the leave-one-family-out speed ratios (measured / predicted) of `phase` ("decode" or
    "prefill"), the band whose percentiles held 80 % of each family's runs when set without
    that family (`cross_validation.<phase>_range`, written by `tokenwalk fit`; a fit file
    without it: the 10th-90th percentile). A calibrated machine (the laptop) meets its own
    measurements, so for it the band is wider than its error at the measured sizes.

    `model_params` (total parameters) below every fitted model's (`below_fitted_sizes`): the
    10th-90th percentile of the small-model check's speed ratios instead (0.1B-8B models the
    fit never saw, `cross_validation.<phase>_small_models`), the band measured where such a
    model goes; those of the machine's `device_class` alone where that class has enough runs
    (`small_model_class`: a graphics card's misses are not a shared-memory chip's)."""
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase must be 'decode' or 'prefill', got {phase!r}")
    fit = fit if fit is not None else load_fit(store=store)
    try:
        cv = fit["cross_validation"]
        band = cv.get(f"{phase}_range") or {"speed_ratio_low": cv[phase]["speed_ratio_p10"],
                                              "speed_ratio_high": cv[phase]["speed_ratio_p90"]}
    except KeyError:
        raise SpecError(f"timing_fit.json: cross_validation.{phase}: missing (run `tokenwalk fit`)") from None
    if small_model_band(phase, model_params, fit):
        own = small_model_class(device_class, fit)
        small = cv[f"{phase}_small_models_by_class"][own] if own else cv[f"{phase}_small_models"]
        band = {"speed_ratio_low": small["speed_ratio_p10"], "speed_ratio_high": small["speed_ratio_p90"]}
    # ratios are measured / predicted speed; a time scales with the inverse
    return 1.0 / band["speed_ratio_high"], 1.0 / band["speed_ratio_low"]


def small_model_band(phase: str, model_params: float | None, fit: dict) -> bool:
    """Whether `error_band` gives a model of `model_params` parameters the small-model check's
    band for `phase`: the model is below the fitted sizes and the fit recorded that check."""
    small = (fit.get("cross_validation") or {}).get(f"{phase}_small_models") or {}
    return below_fitted_sizes(model_params, fit) and bool(small.get("runs"))


# a class of device sets its own small-model band once it has this many runs in each phase:
# fewer, and its 10th and 90th percentiles are its extremes
SMALL_BAND_MIN_RUNS = 8


def small_model_class(device_class: str | None, fit: dict) -> str | None:
    """The class of device ("discrete", "integrated" ...) whose own small-model runs set the
    small-model band (`cross_validation.<phase>_small_models_by_class`): `device_class` where
    the fit recorded at least SMALL_BAND_MIN_RUNS of its runs in both phases, else None (the
    band of all the small-model runs)."""
    cv = fit.get("cross_validation") or {}
    runs = [((cv.get(f"{phase}_small_models_by_class") or {}).get(device_class or "") or {}).get("runs", 0)
            for phase in ("decode", "prefill")]
    return device_class if min(runs) >= SMALL_BAND_MIN_RUNS else None


def below_fitted_sizes(model_params: float | None, fit: dict) -> bool:
    """Whether a model of `model_params` total parameters is smaller than every model the fit
    (a `load_fit` dict: the caller's store's) was fitted on (`inputs.model_params_min`); False
    when either is unknown."""
    smallest = (fit.get("inputs") or {}).get("model_params_min")
    return bool(model_params and smallest and model_params < smallest)


def decode_step_range_s(model, machine, context_tokens: float = 0, users: int = 1, kv_type: str = "f16",
                        fit: dict | None = None) -> tuple[float, float, float]:
    """(low, predicted, high) seconds of a decode step; the range is the cross-validation band."""
    mid = decode_step_s(model, machine, context_tokens, users, kv_type, fit)
    low, high = error_band("decode", fit)
    return mid * low, mid, mid * high


def prefill_chunk_range_s(model, machine, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16",
                          fit: dict | None = None) -> tuple[float, float, float]:
    """(low, predicted, high) seconds of a prefill chunk; the range is the cross-validation band."""
    mid = prefill_chunk_s(model, machine, chunk_tokens, context_before, kv_type, fit)
    low, high = error_band("prefill", fit)
    return mid * low, mid, mid * high


def predict_run_tok_s(run, fit: dict | None = None) -> float:
    """Predicted tokens per second of a published llama-bench run (`tokenwalk.timing.llama_bench`).

    tgN writes N tokens from an empty context: its mean step has (N - 1) / 2 tokens
    cached (the KV read grows linearly). ppN is one prefill step of N tokens.
    """
    if run.phase == "decode":
        return 1.0 / decode_step_s(run.model, run.machine, (run.tokens - 1) / 2.0, fit=fit)
    return run.tokens / prefill_chunk_s(run.model, run.machine, run.tokens, 0, fit=fit)


def decode_breakdown(model, machine, context_tokens: float = 0, kv_type: str = "f16", fit: dict | None = None) -> dict:
    """Where one stream's decode step goes: reading bytes or the fixed cost of its kernel launches.

    Returns tok_s, step_s, read_s (bytes at the fitted share of the bandwidth),
    overhead_s (launches x cost per launch), launches (per step), bytes_per_step, the share
    of the spec bandwidth the stream uses (bytes per step / step / spec bytes/s) and the
    coefficients' row. A model whose kernels read little (an MoE, a small model) spends more
    of its step in the fixed cost, so it reaches a smaller share: on the laptop the MoE about
    half the dense model's share.
    """
    timed = machine_timing(model, machine, fit)
    coeffs = timed.coefficients
    step = timed.decode_step(context_tokens, 1, kv_type)
    total = timed.step_s(step)
    overhead = timed.fixed_step_s
    return {
        "tok_s": 1.0 / total,
        "step_s": total,
        "read_s": total - overhead,
        "overhead_s": overhead,
        "launches": timed.launches.per_step,
        "bytes_per_step": step.bytes_moved,
        "bandwidth_share": step.bytes_moved / (total * machine.bandwidth_gbs * roofline.GB),
        "row": coeffs.row,
        "bandwidth_efficiency": coeffs.bandwidth_efficiency,
        "launch_cost_s": coeffs.launch_cost_s,
    }


def cross_validation(key: str = "decode_tg128", fit: dict | None = None) -> dict:
    """The leave-one-machine-out error `tokenwalk fit` recorded, for the article and README.

    key: "decode_tg128", "decode" (all tg tests), "prefill_pp512" or "prefill". Returns
    runs, machines, median_ape, p90_ape (absolute percentage errors as fractions: 0.089 =
    8.9 %) and speed_ratio_p10/p90 (measured / predicted tok/s).
    """
    fit = fit if fit is not None else load_fit()
    try:
        return dict(fit["cross_validation"][key])
    except KeyError:
        raise SpecError(f"timing_fit.json: cross_validation.{key}: missing (run `tokenwalk fit`)") from None


def unseen_machine_summary(fit: dict | None = None) -> dict:
    """The headline of the fit's leave-one-family-out check: how wrong the model is on a chip
    family it was not fitted on, as `tokenwalk validate --summary` prints it and the README
    and the article quote it. Fractions (0.092 = 9.2 %): decode_median_ape, decode_p90_ape,
    prefill_median_ape, prefill_p90_ape (over all left-out runs of the phase: tg and pp tests
    of every size), decode_coverage and prefill_coverage (the share of left-out runs inside
    the likely range); counts: decode_runs, prefill_runs, families (chip families left out
    in turn), structure (the structure the fit chose); year_trend: the fit's trend of the
    bandwidth efficiency with the chip family's year (per_year, reference_year, until_year
    where it levels off, range_p10_p90), None when the structure has none; trend_until_year:
    in how many left-out families' fits each year won as the one the trend levels off in
    ({"2021": 17, ...}; {} without such a trend); compute_year_trend, compute_trend_until_year:
    the same for the compute efficiency's trend (None, {} where the structure has none); decode_twin_spread: decode's floor on
    these data (`fit.folds.twin_spread`: runs, chips, groups, median_ape, p90_ape), None in
    a fit that did not record it; decode_small_models, prefill_small_models: the same error
    summary (runs, machines, families, median_ape, p90_ape) over benchmarks-small.json's runs
    alone (models of 0.1B-8B), None in a fit that did not record it;
    decode_small_models_by_class, prefill_small_models_by_class: those per class of device
    ({"discrete": ..., "integrated": ...}), {} in a fit that did not record them."""
    fit = fit if fit is not None else load_fit()
    try:
        cv = fit["cross_validation"]
        return {
            "structure": fit["structure"], "families": cv["decode"]["families"],
            "decode_runs": cv["decode"]["runs"], "prefill_runs": cv["prefill"]["runs"],
            "decode_median_ape": cv["decode"]["median_ape"], "decode_p90_ape": cv["decode"]["p90_ape"],
            "prefill_median_ape": cv["prefill"]["median_ape"], "prefill_p90_ape": cv["prefill"]["p90_ape"],
            "decode_coverage": cv["decode_coverage"], "prefill_coverage": cv["prefill_coverage"],
            "year_trend": fit.get("year_trend"), "trend_until_year": cv.get("trend_until_year", {}),
            "compute_year_trend": fit.get("compute_year_trend"),
            "compute_trend_until_year": cv.get("compute_trend_until_year", {}),
            "decode_twin_spread": cv.get("twin_spread", {}).get("decode"),
            "decode_small_models": cv.get("decode_small_models"), "prefill_small_models": cv.get("prefill_small_models"),
            "decode_small_models_by_class": cv.get("decode_small_models_by_class") or {},
            "prefill_small_models_by_class": cv.get("prefill_small_models_by_class") or {},
        }
    except KeyError as error:
        raise SpecError(f"timing_fit.json: cross_validation: {error.args[0]!r} missing (run `tokenwalk fit`)") from None
