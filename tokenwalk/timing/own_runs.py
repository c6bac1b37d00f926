"""A reader's own llama-bench runs: read, matched to models, and a machine calibrated on them.

`llama-bench -o json` prints a JSON array, `-o jsonl` one object a line; each object is
one test on one model (tools/llama-bench/README.md in llama.cpp). Its default output, a
markdown table, gives the same tests rounded (size in MiB, params to two decimals in M or B)
and is read too. The fields read here:

- `model_n_params` (the count of the file's weights) and `model_size` (its tensors' bytes),
  to find which model it ran: a preset or a GGUF file whose header the reader gave, with
  the same count of weights (within 0.1 %) and a size within 5 % (a file is its tensors plus
  a header); `model_type` ("qwen2 7B Q4_K - Medium") is only shown;
- `n_prompt`, `n_gen`, `n_depth` (tokens already in the cache; absent in older builds: 0),
  `n_ubatch` (the micro-batch a prompt is read in; absent: 512) and `avg_ts` (mean tok/s):
  a test with n_gen > 0 and no prompt is decode (tg128), one with a prompt and no n_gen is
  prefill (pp512); a combined `-pg` test times both phases at once and is set aside.

The calibration is `tokenwalk.timing.calibration.solve_points`, the code that solves the
article's laptop: two decode speeds of two models (the pair whose reads per launch differ
most) give the bandwidth efficiency and the cost per launch; one model's decode gives the
efficiency with the cost per launch of the machine's fitted row; a prefill speed gives the
compute efficiency (none: the row's). Each run is then predicted twice, from the published
fit's row and from the calibration, beside its measurement.

Units: tokens, tok/s, seconds, bytes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace

from tokenwalk import format as fmt
from tokenwalk.errors import TokenwalkError
from tokenwalk.physics import roofline
from tokenwalk.physics.launches import decode_launches
from tokenwalk.timing import calibration, prefill_shape
from tokenwalk.timing import model as timing_model

MAX_TEXT_CHARS = 2_000_000  # llama-bench's JSON is about 1.3 kB a test
MAX_RUNS = 64
DEFAULT_UBATCH = 512  # llama-bench's default n_ubatch
PARAMS_TOLERANCE = 0.001
SIZE_TOLERANCE = 0.05
FIELDS = ("model_n_params", "model_size", "n_prompt", "n_gen", "avg_ts")


@dataclass(frozen=True)
class OwnRun:
    """One llama-bench test as printed: `row` its place in the output (from 1), the model as
    llama-bench names it (`model_type`), its weights (`params`) and tensors' bytes
    (`size_bytes`), the test's tokens (`prompt_tokens`, `gen_tokens`, `depth_tokens` already
    cached, `ubatch_tokens` a prompt step) and the measured `tok_s`; `model` the preset or
    file key it was matched to (None: no model here has its count of weights)."""

    row: int
    model_type: str
    params: int
    size_bytes: int
    prompt_tokens: int
    gen_tokens: int
    depth_tokens: int
    ubatch_tokens: int
    tok_s: float
    model: str | None = None
    params_rounding: float = 0.0  # how far the printed count may be from the file's (llama-bench's table: "134.52 M")

    @property
    def phase(self) -> str:
        return "decode" if self.gen_tokens else "prefill"

    @property
    def test(self) -> str:
        """llama-bench's name for the test: "pp512", "tg128", "tg128 @ d4096"."""
        name = f"tg{self.gen_tokens}" if self.gen_tokens else f"pp{self.prompt_tokens}"
        return name + (f" @ d{self.depth_tokens}" if self.depth_tokens else "")

    @property
    def decode_context_tokens(self) -> float:
        """The mean tokens cached during a decode test: the depth, then the test's own tokens
        (tgN from depth d: the step k has d + k cached, k = 0 .. N-1), as `predict_run_tok_s`."""
        return self.depth_tokens + (self.gen_tokens - 1) / 2.0

    def compact(self) -> list:
        """[model_n_params, model_size, n_prompt, n_gen, n_depth, n_ubatch, tok/s]: what a
        link carries (the model is matched again where the link is opened)."""
        compact = [self.params, self.size_bytes, self.prompt_tokens, self.gen_tokens, self.depth_tokens,
                   self.ubatch_tokens, self.tok_s]
        return compact + [self.params_rounding] if self.params_rounding else compact


COMPACT_FIELDS = ("model_n_params", "model_size", "n_prompt", "n_gen", "n_depth", "n_ubatch", "avg_ts")


def parse_llama_bench(text: str, label: str = "llama-bench output") -> tuple[list[OwnRun], list[str]]:
    """(runs, notes) from what llama-bench prints: its table, `-o json` or `-o jsonl`. notes say
    which tests were set aside (a combined pp+tg test). Raises TokenwalkError, one line naming
    `label`, the test or line (from 1) and the field, for text that is not such output."""
    if not isinstance(text, str) or not text.strip():
        raise TokenwalkError(f"{label}: nothing given (paste what llama-bench prints)")
    if len(text) > MAX_TEXT_CHARS:
        raise TokenwalkError(f"{label}: {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are read")
    stripped = text.strip()
    if stripped.startswith("["):
        rows = _loads(stripped, label)
        if not isinstance(rows, list):
            raise TokenwalkError(f"{label}: expected a JSON array of tests")
    elif stripped.startswith("{"):
        rows = [_loads(line, f"{label}: line {n}") for n, line in enumerate(stripped.splitlines(), 1) if line.strip()]
    elif stripped.startswith("|"):
        rows = _table_rows(stripped, label)
    else:
        first = stripped.splitlines()[0][:40]
        raise TokenwalkError(f"{label}: not llama-bench's output (it begins {first!r}); paste the table it prints, "
                             "or its -o json")
    return runs_from_tests(rows, label)


def runs_from_tests(rows: list, label: str = "llama-bench output") -> tuple[list[OwnRun], list[str]]:
    """(runs, notes) from llama-bench's tests already parsed (its JSON objects, or a table's
    rows as `_table_rows` gives them), checked as `parse_llama_bench` says."""
    if not rows:
        raise TokenwalkError(f"{label}: no tests in it")
    if len(rows) > MAX_RUNS:
        raise TokenwalkError(f"{label}: {len(rows)} tests; at most {MAX_RUNS} are read")
    runs, notes = [], []
    for n, row in enumerate(rows, 1):
        run = _run(row, n, label)
        if run.prompt_tokens and run.gen_tokens:
            notes.append(f"test {n} (pp{run.prompt_tokens}+tg{run.gen_tokens}) times both phases at once: set aside")
            continue
        runs.append(run)
    if not runs:
        raise TokenwalkError(f"{label}: no pp or tg test in it (only combined pp+tg tests)")
    return runs, notes


TABLE_COLUMNS = ("model", "size", "params", "test", "t/s")  # llama-bench's markdown table (its default output)
_SIZE = re.compile(r"^(\d+(?:\.\d+)?) (MiB|GiB)$")
_PARAMS = re.compile(r"^(\d+(?:\.\d+)?) ([MB])$")
_TEST = re.compile(r"^(?:pp(\d+))?(?:\+?tg(\d+))?(?: @ d(\d+))?$")
_SPEED = re.compile(r"^(\d+(?:\.\d+)?)(?: ± \d+(?:\.\d+)?)?$")


def _table_rows(text: str, label: str) -> list[dict]:
    """llama-bench's default output, its markdown table, as the fields its JSON prints: size
    in MiB or GiB and params in M or B to two decimals (the rounding kept, so a model is
    still matched), the test's name ("pp512", "tg128 @ d4096"), t/s as "mean ± sd"."""
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith("|")]
    header = [c.strip() for c in lines[0][1].strip("|").split("|")]
    missing = [c for c in TABLE_COLUMNS if c not in header]
    if missing:
        raise TokenwalkError(f"{label}: line {lines[0][0]}: the table has no column {missing[0]!r}")
    rows = []
    for n, line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue  # the line under the header
        if len(cells) != len(header):
            raise TokenwalkError(f"{label}: line {n}: {len(cells)} cells, the header has {len(header)}")
        cell = dict(zip(header, cells, strict=True))
        size, params, test, speed = (_SIZE.match(cell["size"]), _PARAMS.match(cell["params"]), _TEST.match(cell["test"]),
                                     _SPEED.match(cell["t/s"]))
        for name, found, example in (("size", size, "92.10 MiB"), ("params", params, "134.52 M"),
                                     ("test", test if test and (test.group(1) or test.group(2)) else None, "tg128"),
                                     ("t/s", speed, "70.89 ± 0.35")):
            if not found:
                raise TokenwalkError(f"{label}: line {n}: column {name!r}: {cell[name][:24]!r} is not as llama-bench "
                                     f"prints it ({example!r})")
        unit = 1e6 if params.group(2) == "M" else 1e9
        rows.append({"model_type": cell["model"], "model_size": round(float(size.group(1)) * 1024 ** (2 if size.group(2) == "MiB" else 3)),
                     "model_n_params": round(float(params.group(1)) * unit), "params_rounding": 0.005 * unit,
                     "n_prompt": int(test.group(1) or 0), "n_gen": int(test.group(2) or 0),
                     "n_depth": int(test.group(3) or 0), "n_ubatch": _count_cell(cell.get("n_ubatch"), n, label),
                     "avg_ts": float(speed.group(1))})
    return rows


def _count_cell(text, n: int, label: str) -> int:
    if text is None:
        return DEFAULT_UBATCH
    if not text.isdigit() or int(text) <= 0:
        raise TokenwalkError(f"{label}: line {n}: column 'n_ubatch': {text[:24]!r} is not a token count")
    return int(text)


def _loads(text: str, label: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise TokenwalkError(f"{label}: line {error.lineno} column {error.colno}: not valid JSON ({error.msg})") from None
    except (RecursionError, ValueError):
        raise TokenwalkError(f"{label}: not usable JSON") from None


def _run(row, n: int, label: str) -> OwnRun:
    where = f"{label}: test {n}"
    if not isinstance(row, dict):
        raise TokenwalkError(f"{where}: expected an object, not {type(row).__name__}")
    missing = [f for f in FIELDS if f not in row]
    if missing:
        raise TokenwalkError(f"{where}: field {missing[0]!r} is missing")
    values = {f: _count(row.get(f, default), f, where)
              for f, default in (("model_n_params", None), ("model_size", None), ("n_prompt", None),
                                 ("n_gen", None), ("n_depth", 0), ("n_ubatch", DEFAULT_UBATCH))}
    if values["model_n_params"] <= 0 or values["model_size"] <= 0:
        raise TokenwalkError(f"{where}: model_n_params and model_size must be positive")
    if values["n_prompt"] == 0 and values["n_gen"] == 0:
        raise TokenwalkError(f"{where}: n_prompt and n_gen are both 0: no test")
    if values["n_ubatch"] <= 0:
        raise TokenwalkError(f"{where}: field 'n_ubatch': must be positive")
    tok_s = row["avg_ts"]
    if isinstance(tok_s, bool) or not isinstance(tok_s, (int, float)) or not math.isfinite(tok_s) or not 0 < tok_s < 1e9:
        raise TokenwalkError(f"{where}: field 'avg_ts': {str(tok_s)[:20]!r} is not a speed in tok/s")
    model_type = row.get("model_type")
    rounding = row.get("params_rounding", 0.0)
    if isinstance(rounding, bool) or not isinstance(rounding, (int, float)) or not 0 <= rounding <= 1e7:
        raise TokenwalkError(f"{where}: field 'params_rounding': {str(rounding)[:20]!r} is not a count from 0 to 1e7")
    return OwnRun(row=n, model_type=str(model_type)[:80] if model_type is not None else "", params=values["model_n_params"],
                  size_bytes=values["model_size"], prompt_tokens=values["n_prompt"], gen_tokens=values["n_gen"],
                  depth_tokens=values["n_depth"], ubatch_tokens=values["n_ubatch"], tok_s=float(tok_s),
                  params_rounding=float(rounding))


def _count(value, field: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not 0 <= value < 1e15:
        raise TokenwalkError(f"{where}: field {field!r}: {str(value)[:20]!r} is not a whole number")
    return int(value)


def from_compact(value, label: str = "runs") -> list[OwnRun]:
    """Runs from what a link carries (`OwnRun.compact` each, as a list or its JSON text),
    not yet matched to models."""
    if isinstance(value, str):
        value = _loads(value, label)
    if not isinstance(value, list) or not value or len(value) > MAX_RUNS:
        raise TokenwalkError(f"{label}: expected a list of 1 to {MAX_RUNS} runs")
    runs = []
    for n, item in enumerate(value, 1):
        if not isinstance(item, list) or len(item) not in (len(COMPACT_FIELDS), len(COMPACT_FIELDS) + 1):
            raise TokenwalkError(f"{label}: run {n}: expected [{', '.join(COMPACT_FIELDS)}] (and params_rounding)")
        run = _run(dict(zip((*COMPACT_FIELDS, "params_rounding"), item, strict=False)), n, label)
        if run.prompt_tokens and run.gen_tokens:
            raise TokenwalkError(f"{label}: run {n}: a combined pp+tg test is not used")
        runs.append(run)
    return runs


def is_compact(value) -> bool:
    """Whether `value` (parsed JSON) is a link's runs (lists) rather than llama-bench's tests (objects)."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, list) for item in value)


def read_runs(value, label: str = "your llama-bench runs") -> tuple[list[OwnRun], list[str]]:
    """(runs, notes) from what llama-bench prints (`parse_llama_bench`) or a link's runs (a
    list, or its JSON text): the one reader of the simulator's field and the walk's --runs file."""
    if isinstance(value, list):
        return from_compact(value, label), []
    if isinstance(value, str) and value.lstrip().startswith("[") and len(value) <= MAX_TEXT_CHARS:
        parsed = _loads(value.strip(), label)  # parsed once: a link's runs or llama-bench's array
        return (from_compact(parsed, label), []) if is_compact(parsed) else runs_from_tests(
            parsed if isinstance(parsed, list) else [parsed], label)
    return parse_llama_bench(value, label)


def calibrate_on_presets(machine, runs: list[OwnRun], own_models: dict | None = None, store=None,
                         label: str = "your llama-bench runs", pick: str = "pick that model's GGUF file under Model"):
    """`calibrate` with the runs matched to the model presets of the data `store` and then to
    `own_models` ({name: ModelSpec}, the reader's files, preferred on a tie): (calibration,
    the matched runs, the models by name)."""
    from tokenwalk.specs.model import list_model_presets, load_model

    models = {name: load_model(name, store) for name in list_model_presets(store)}
    models.update(own_models or {})
    matched = match_models(runs, models)
    return calibrate(machine, matched, models, store=store, label=label, pick=pick), matched, models


def match_models(runs: list[OwnRun], models: dict) -> list[OwnRun]:
    """Each run with `model` set to the name in `models` ({name: ModelSpec}) whose count of
    weights is the run's (within PARAMS_TOLERANCE) and whose size is within SIZE_TOLERANCE,
    the closest in size where several are, and of equals the one listed last (callers list
    the reader's own files after the presets); None where no model fits."""
    matched = []
    for run in runs:
        fits = [(abs(m.size_bytes - run.size_bytes) / run.size_bytes, -i, name) for i, (name, m) in enumerate(models.items())
                if abs(m.params - run.params) <= max(PARAMS_TOLERANCE * run.params, run.params_rounding)
                and abs(m.size_bytes - run.size_bytes) <= SIZE_TOLERANCE * run.size_bytes]
        matched.append(replace(run, model=min(fits)[2] if fits else None))
    return matched


def run_tok_s(run: OwnRun, timed: timing_model.MachineTiming) -> float:
    """The speed `timed` (one model on one machine) predicts for `run`: decode, 1 / the step at
    the test's mean context; prefill, the prompt read in steps of n_ubatch after n_depth tokens."""
    if run.phase == "decode":
        return 1.0 / timed.decode_step_s(run.decode_context_tokens)
    seconds = sum(timed.prefill_chunk_s(n, run.depth_tokens + before)
                  for before, n in roofline.prompt_chunks(run.prompt_tokens, run.ubatch_tokens))
    return run.prompt_tokens / seconds


@dataclass(frozen=True)
class OwnCalibration:
    """A machine calibrated on a reader's runs: the `machine` to walk with (its spec with the
    solved coefficients as its calibration), the `coefficients` and `note`, and `rows`: per
    run {row, test, model, model_type, measured_tok_s, fit_tok_s, calibrated_tok_s, used}
    (predictions None where the run has no model here; used: "decode", "prefill" or "")."""

    machine: object
    coefficients: dict
    note: str
    rows: list
    smallest_read_per_launch_s: float = 0.0  # of the decode runs solved on: the least reading time a launch

    def to_dict(self) -> dict:
        return {"coefficients": dict(self.coefficients), "note": self.note, "rows": [dict(r) for r in self.rows]}

    def below_its_runs(self, model, context_tokens: float = 0, store=None) -> bool:
        """Whether `model`'s decode step reads less per launch than every model the decode was
        solved on: its step leans more on the cost per launch than theirs did, which those runs
        fix least well (on llama.cpp's own runs on the build machine, a model below them was
        missed by 23 %, two within them by 5 %; README "The size check")."""
        return _read_per_launch_s(model, self.machine, context_tokens, store) < self.smallest_read_per_launch_s


def calibrate(machine, runs: list[OwnRun], models: dict, fit: dict | None = None, store=None,
              label: str = "your llama-bench runs", pick: str = "pick that model's GGUF file under Model") -> OwnCalibration:
    """`machine` calibrated on `runs` (matched, `match_models`), the models by name in
    `models`. Raises TokenwalkError, one line starting with `label` and ending with `pick`
    (how to give the model), when no decode run has a model here."""
    base = replace(machine, calibration=None)
    row = timing_model.coefficients(base, fit, None, store)
    decode = _decode_points(runs, models, machine, store)
    if not decode:
        tg = next((r for r in runs if r.phase == "decode"), None)
        if tg is None:
            raise TokenwalkError(f"{label}: no tg test (decode); llama-bench runs tg128 unless -n 0 is given")
        raise TokenwalkError(f"{label}: no tg test is of a model here (test {tg.row}'s has {tg.params:,} weights "
                             f"in {fmt.bytes_si(tg.size_bytes)}): {pick}")
    prefill_runs = sorted((r for r in runs if r.model and r.phase == "prefill"),
                          key=lambda r: (r.depth_tokens, -models[r.model].params, -r.prompt_tokens))
    prefill = None
    if prefill_runs:
        p = prefill_runs[0]
        # the prompt read after n_depth cached tokens: the solve reads it from an empty cache,
        # so a deep test is used only when no other is given (its note says the depth)
        prefill = (p.model, models[p.model], p.tok_s, p.prompt_tokens, p.ubatch_tokens)
    labels = [(r.model, models[r.model], r.tok_s, r.decode_context_tokens) for r in decode]
    e_bw, launch_s, e_c, note = calibration.solve_points(
        f"your runs on {machine.name}", float(machine.bandwidth_gbs), machine.fp16_tflops, labels, prefill,
        row.launch_cost_s if len(labels) == 1 else None, timing_model.bounds_for(machine), store,
        compute_efficiency=row.compute_efficiency,
        shape_rows_half=prefill_shape.shape_for(prefill[1], machine, store)[1] if prefill else 0.0)
    if len(labels) == 1:
        note = (note + "; " if note else "") + (
            f"one model's decode: the cost per launch is the fitted {row.row} row's "
            f"{fmt.significant(row.launch_cost_s * 1e6, 2)} us")
    coefficients = timing_model.rounded(e_bw, launch_s, e_c)
    used_tests = sum(1 for r in runs if r.model)
    label = f"calibrated on your {used_tests} llama-bench test{'s' if used_tests != 1 else ''}"
    entry = {"solved": {**coefficients, "note": note}, "label": label}
    for kept in ("load", "prefill_shape"):  # a preset's measured cold load and its pair still hold
        if (machine.calibration or {}).get(kept) is not None:
            entry[kept] = machine.calibration[kept]
    calibrated = replace(machine, calibration=entry)
    used = {id(r): "decode" for r in decode}
    if prefill_runs:
        used[id(prefill_runs[0])] = "prefill"
    rows = []
    timings: dict = {}
    for run in runs:
        entry = {"row": run.row, "test": run.test, "model": run.model, "model_type": run.model_type,
                 "measured_tok_s": run.tok_s, "fit_tok_s": None, "calibrated_tok_s": None, "used": used.get(id(run), "")}
        if run.model:
            if run.model not in timings:
                spec = models[run.model]
                timings[run.model] = (timing_model.machine_timing(spec, base, fit, store),
                                      timing_model.machine_timing(spec, calibrated, fit, store))
            fitted, own = timings[run.model]
            entry["fit_tok_s"] = run_tok_s(run, fitted)
            entry["calibrated_tok_s"] = run_tok_s(run, own)
        rows.append(entry)
    return OwnCalibration(machine=calibrated, coefficients=coefficients, note=note, rows=rows,
                          smallest_read_per_launch_s=min(_ratio(r, models, machine, store) for r in decode))


def _decode_points(runs: list[OwnRun], models: dict, machine, store) -> list[OwnRun]:
    """The decode runs the solve uses: per model the shallowest tg test; with two models or
    more, the pair whose bytes per launch differ most (the two equations then separate
    bandwidth from the cost per launch best)."""
    best: dict = {}
    for run in runs:
        if run.model and run.phase == "decode":
            if run.model not in best or run.depth_tokens < best[run.model].depth_tokens:
                best[run.model] = run
    points = sorted(best.values(), key=lambda r: _ratio(r, models, machine, store))
    if len(points) < 2 or _ratio(points[0], models, machine, store) == _ratio(points[-1], models, machine, store):
        return points[:1]  # one model, or models that read alike per launch: one equation
    return [points[0], points[-1]]


def _ratio(run: OwnRun, models: dict, machine, store) -> float:
    return _read_per_launch_s(models[run.model], machine, run.decode_context_tokens, store)


def _read_per_launch_s(model, machine, context_tokens: float, store) -> float:
    """Seconds of a decode step's reads at the spec bandwidth per kernel launch of the step."""
    step = roofline.decode_step(model, roofline.Peaks(float(machine.bandwidth_gbs), float("inf")), context_tokens, 1)
    return step.memory_s / decode_launches(model, store).per_step
