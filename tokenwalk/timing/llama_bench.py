"""Published llama-bench runs: the data the timing model is fitted on and checked against.

`data/llama-bench/benchmarks.json` holds real llama.cpp `llama-bench` results of dense
models (each with its `source`), `machines.json` the machines' spec sheets and
`models.json` the architecture facts a run does not print (layers, KV heads, whether the
output head reuses the embedding table); a run without an FP16 figure of its own takes its
machine's (`machines.json`, each with `fp16_source` and `fp16_definition`), and
`fp16_convention.json` puts the few FP16 figures given with FP32 accumulation on the
presets' convention (FP16 accumulation). This module turns a run into the model and
machine objects the rest of tokenwalk reads, and computes the share of the spec-sheet
bandwidth one decoding stream reaches (figure 19, "bandwidth-share").

Units: bytes, seconds, tokens per second; GB/s = 1e9 bytes per second; TFLOP/s = 1e12
operations per second.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from tokenwalk import data_refs
from tokenwalk.errors import SpecError
from tokenwalk.physics import roofline
from tokenwalk.specs import cpu
from tokenwalk.specs.machine import VENDORS  # the makers a machine preset's `vendor` may name

DATA_FOLDER = "llama-bench"
DATA_DIR = data_refs.DEFAULT_ROOT / DATA_FOLDER
CPU_CORES_FILE = "cpu_cores.json"  # each CPU core design's FP32 operations per cycle (tokenwalk.specs.cpu)
GB = 1e9


@dataclass(frozen=True)
class BenchModel:
    """The model of a published run, with the fields `tokenwalk.physics.roofline` reads.

    `bytes_read_per_token`: the file size less the token-embedding table when the output
    head has its own matrix (a decoded token reads one row of the embedding, not all of it);
    when the head is tied to the embedding, the whole file. The embedding's bytes are
    estimated at the file's average bits per weight.
    """

    name: str
    params: float
    size_bytes: float
    layers: int
    kv_layers: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    head_dim: int
    vocab_size: int
    tied_embeddings: bool
    expert_count: int = 0
    expert_used_count: int = 0
    expert_ffn_length: int | None = None  # not in a published run: moe estimates the experts' bytes
    expert_bytes: float | None = None
    context_length: int | None = None
    file_type: str | None = None  # the weight format (the run's quant: F16, Q8_0, Q4_0, Q4_K_M ...)
    architecture: str | None = None  # llama.cpp's name for it ("llama", "qwen2", "gemma3"): what its launches are counted as

    @property
    def active_params(self) -> float:
        return self.params

    @property
    def bits_per_weight(self) -> float:
        return self.size_bytes * 8.0 / self.params

    @property
    def bytes_read_per_token(self) -> float:
        if self.tied_embeddings:
            return float(self.size_bytes)
        embedding_bytes = self.vocab_size * self.embedding_length * self.bits_per_weight / 8.0
        return float(self.size_bytes) - embedding_bytes


@dataclass(frozen=True)
class BenchMachine:
    """The machine of a published run: spec-sheet bandwidth (GB/s), FP16 peak (TFLOP/s,
    None where unknown), the llama.cpp backend the run used, and from `machines.json` its
    chip family ("Apple M2", "RDNA3", "Ada": what leave-one-family-out leaves out together),
    device class ("integrated", "discrete", "datacentre"), whether its memory is unified and its
    memory type ("HBM2e", "GDDR6X", "LPDDR5": a card with HBM has a row of its own where the fit
    chose one)."""

    name: str
    bandwidth_gbs: float | None
    fp16_tflops: float | None
    backend: str
    family: str = ""
    device_class: str | None = None
    unified_memory: bool | None = None
    vendor: str | None = None
    architecture_year: int | None = None  # the year its chip family first shipped (families.json)
    memory_type: str | None = None  # the memory its bandwidth is of: "HBM2e", "GDDR6X", "LPDDR5" (machines.json)
    calibration: None = None  # a published run is timed on the fit, never on a calibration
    disk_gbs: None = None
    system_and_apps_bytes: None = None


@dataclass(frozen=True)
class BenchRun:
    """One published llama-bench result.

    `phase` is "decode" for tg tests and "prefill" for pp tests; `tokens` the test's size
    (tg128: 128 tokens written one by one from an empty context; pp512: one prompt of 512
    tokens); `tok_s` the published tokens per second.
    """

    index: int
    machine: BenchMachine
    model: BenchModel
    quant: str
    test: str
    tok_s: float
    source: str
    raw: dict = field(repr=False, compare=False, hash=False)
    runs_file: str = "benchmarks.json"  # the file of the folder it was read from (index counts within it)

    @property
    def phase(self) -> str:
        return "decode" if self.test.startswith("tg") else "prefill"

    @property
    def out_of_domain(self) -> str | None:
        """Why the timing model cannot describe this run (its `out_of_domain` field: a card
        driven by a single-board computer, whose host sets the pace), or None."""
        return self.raw.get("out_of_domain") or None

    @property
    def tokens(self) -> int:
        return int(self.test[2:])

    @property
    def family(self) -> str:
        return self.machine.family or chip_name(self.machine.name)

    @property
    def backend(self) -> str:
        return self.machine.backend

    @property
    def label(self) -> str:
        short = self.model.name.split(" (")[0]
        return f"{self.machine.name} | {self.backend} | {short} {self.quant} | {self.test}"

    @property
    def bandwidth_share(self) -> float | None:
        """Share of the spec bandwidth this run reached, bytes per token = what a token reads:
        the file less its embedding table, of which a token reads one row (the whole file where
        the output head is that table); None for prefill or an unknown bandwidth."""
        if self.phase != "decode" or not self.machine.bandwidth_gbs:
            return None
        return bandwidth_share(self.tok_s, self.model.bytes_read_per_token, self.machine.bandwidth_gbs)

    @property
    def compute_share(self) -> float | None:
        """Share of its compute figure (FP16; a CPU's FP32 vector peak) a prefill run reached,
        on the weights' operations a prompt step really does (the model's count, attention
        left out); None for decode or an unknown figure."""
        if self.phase != "prefill" or not self.machine.fp16_tflops:
            return None
        ops_per_token = 2 * self.model.active_params - roofline.prefill_skipped_flops(self.model, self.tokens) / self.tokens
        return self.tok_s * ops_per_token / (self.machine.fp16_tflops * 1e12)

    @property
    def source_year(self) -> int | None:
        """The latest year the source text names (a hint of the llama.cpp build's age)."""
        years = [int(y) for y in re.findall(r"\b(20[12]\d)\b", self.source)]
        return max(years) if years else None


def chip_name(machine_name: str) -> str:
    """The chip a machine name stands for, without the variant notes: "Apple M1 (7-core GPU)
    8GB" and "Apple M1 (Vulkan row, cores n/a)" are both "Apple M1". Cross-validation leaves
    out a whole chip at a time, so a variant of the same chip never helps predict it."""
    base = machine_name.split(" (")[0]
    return re.sub(r"\s+\d+\s*GB$", "", base).strip()


def vendor_of(machine_name: str) -> str | None:
    """The maker a machine name starts with ("NVIDIA RTX 4090": "NVIDIA"; "2x AMD EPYC": "AMD"),
    None if it names none of VENDORS."""
    for word in machine_name.split()[:2]:
        if word in VENDORS:
            return word
    return None


def bandwidth_share(tok_s: float, bytes_per_token: float, bandwidth_gbs: float) -> float:
    """Share of the spec-sheet bandwidth one decoding stream uses: tok/s x bytes/token / bytes/s.

    The laptop's MoE: 11.7 x 1.98e9 / 128e9 = 0.18.
    """
    if bandwidth_gbs <= 0:
        raise ValueError(f"bandwidth_gbs must be positive, got {bandwidth_gbs}")
    return tok_s * bytes_per_token / (bandwidth_gbs * GB)


def _read_json(path: Path, store: data_refs.DataStore):
    """A llama-bench data file: the data store's parsed copy when `path` is in the store's
    folder, else the file at `path`."""
    if path.parent == store.root / DATA_FOLDER:
        return store.read_json(f"{DATA_FOLDER}/{path.name}")
    return data_refs.read_json(path, path.name, missing=f"file not found in {path.parent.name}/", error=SpecError)


def _models(path: Path, store: data_refs.DataStore) -> dict:
    facts = _read_json(path, store).get("models", {})
    return {name: dict(values) for name, values in facts.items()}


def _fp16_overrides(path: Path, store: data_refs.DataStore) -> dict:
    """{machine name: FP16 figure in the presets' convention} (see fp16_convention.json)."""
    if not path.exists():
        return {}
    return {name: float(entry["fp16_tflops"]) for name, entry in _read_json(path, store).get("overrides", {}).items()}


def _machine_facts(path: Path, store: data_refs.DataStore) -> dict:
    """{machine name: its entry of machines.json} ({} when the folder has no such file)."""
    if not path.exists():
        return {}
    return {entry["name"]: entry for entry in _read_json(path, store)}


def _core_designs(path: Path, store: data_refs.DataStore) -> dict:
    """{core design: its entry of cpu_cores.json} ({} without the file)."""
    if not path.exists():
        return {}
    return dict(_read_json(path, store).get("cores", {}))


def _cpu_compute_tflops(spec: dict, designs: dict, threads: int | None, label: str) -> float | None:
    """A CPU machine's compute figure for a run on `threads` threads: the FP32 vector peak of
    the cores they occupy (`tokenwalk.specs.cpu`), from its machines.json entry's `cpu_cores`
    and the designs of cpu_cores.json; None for a machine without `cpu_cores`."""
    if "cpu_cores" not in spec:
        return None
    return cpu.vector_peak_tflops(cpu.core_groups(spec["cpu_cores"], designs, label), threads)


def _family_years(path: Path, store: data_refs.DataStore) -> dict:
    """{family: the year its first chip shipped} from families.json ({} without the file)."""
    if not path.exists():
        return {}
    return {name: int(entry["architecture_year"]) for name, entry in _read_json(path, store).get("families", {}).items()}


def _runs_from(store: data_refs.DataStore, bench_path: Path, models_path: Path, convention_path: Path,
               machines_path: Path | None = None, families_path: Path | None = None,
               cores_path: Path | None = None) -> tuple:
    models = _models(models_path, store)
    designs = _core_designs(cores_path, store) if cores_path is not None else {}
    fp16 = _fp16_overrides(convention_path, store)
    facts_of = _machine_facts(machines_path, store) if machines_path is not None else {}
    years = _family_years(families_path, store) if families_path is not None else {}
    runs = []
    for index, row in enumerate(_read_json(bench_path, store)):
        for key in ("machine", "backend", "model", "params", "quant", "size_bytes", "test", "tok_s", "source"):
            if row.get(key) in (None, ""):
                raise SpecError(f"{bench_path.name}: run {index} has no {key!r}")
        for key in ("params", "size_bytes", "tok_s"):
            if isinstance(row[key], bool) or not isinstance(row[key], (int, float)) or not row[key] > 0:
                raise SpecError(f"{bench_path.name}: run {index} {key!r} must be a positive number, got {row[key]!r}")
        facts = models.get(row["model"])
        if facts is None:
            raise SpecError(f"{models_path.name}: no entry for model {row['model']!r} (run {index} of {bench_path.name})")
        model = BenchModel(
            name=row["model"], params=float(row["params"]), size_bytes=float(row["size_bytes"]),
            layers=int(facts["layers"]), kv_layers=int(facts["kv_layers"]),
            embedding_length=int(facts["embedding_length"]), head_count=int(facts["head_count"]),
            head_count_kv=int(facts["head_count_kv"]), head_dim=int(facts["head_dim"]),
            vocab_size=int(facts["vocab_size"]), tied_embeddings=bool(facts["tied_embeddings"]),
            file_type=row["quant"], architecture=facts.get("architecture"),
        )
        spec = facts_of.get(row["machine"], {})
        family = spec.get("family") or chip_name(row["machine"])
        threads = row.get("threads")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise SpecError(f"{bench_path.name}: run {index} 'threads' must be a positive whole number, got {threads!r}")
        cpu_tflops = _cpu_compute_tflops(spec, designs, threads, f"machines.json machine {row['machine']!r}")
        machine = BenchMachine(
            name=row["machine"], bandwidth_gbs=row.get("bandwidth_gbs"),
            fp16_tflops=fp16.get(row["machine"], row.get("fp16_tflops") or spec.get("fp16_tflops") or cpu_tflops),
            backend=row["backend"], family=family, architecture_year=years.get(family),
            device_class=spec.get("device_class"), unified_memory=spec.get("unified_memory"),
            vendor=spec.get("vendor") or vendor_of(row["machine"]),
            memory_type=spec.get("memory_type"),
        )
        runs.append(BenchRun(index=index, machine=machine, model=model, quant=row["quant"], test=row["test"],
                             tok_s=float(row["tok_s"]), source=row["source"], raw=row, runs_file=bench_path.name))
    return tuple(runs)


def load_runs(data_dir: str | Path | None = None, store: data_refs.DataStore | None = None,
              runs_file: str = "benchmarks.json") -> list[BenchRun]:
    """Every published run (decode and prefill), in file order: of the folder `data_dir`, or
    of the data `store`'s llama-bench/ (the default store's if None), which keeps them.
    `runs_file` names the runs' file in that folder: "benchmarks.json" (the fitted runs) or
    "benchmarks-small.json" (the small models' runs, read with the same models and machines)."""
    store = data_refs.store_or_default(store)
    base = Path(data_dir) if data_dir else store.root / DATA_FOLDER
    return list(store.remember(("llama-bench runs", str(base), runs_file), lambda: _runs_from(
        store, base / runs_file, base / "models.json", base / "fp16_convention.json", base / "machines.json",
        base / "families.json", base / CPU_CORES_FILE)))


SMALL_RUNS_FILE = "benchmarks-small.json"


def every_published_run(data_dir: str | Path | None = None, store: data_refs.DataStore | None = None) -> list[BenchRun]:
    """Every published run, benchmarks.json's then benchmarks-small.json's (0.1B-8B models on
    machines of their own). `tokenwalk fit` fits and cross-validates on the first only
    (`is_small_model_run` tells them apart); the small runs are predicted family by family
    by fits without their family and scored apart (`folds.small_model_check`)."""
    return load_runs(data_dir, store) + load_runs(data_dir, store, SMALL_RUNS_FILE)


def cpu_core_groups(machine_name: str, data_dir: str | Path | None = None,
                    store: data_refs.DataStore | None = None) -> list:
    """The core groups (`tokenwalk.specs.cpu.CoreGroup`) of a CPU machine of machines.json, with
    its designs' operations per cycle from cpu_cores.json. SpecError for a machine the file does
    not list or that lists no cores."""
    store = data_refs.store_or_default(store)
    base = Path(data_dir) if data_dir else store.root / DATA_FOLDER
    spec = _machine_facts(base / "machines.json", store).get(machine_name)
    if spec is None or "cpu_cores" not in spec:
        raise SpecError(f"machines.json: no CPU machine {machine_name!r} with 'cpu_cores'")
    return cpu.core_groups(spec["cpu_cores"], _core_designs(base / CPU_CORES_FILE, store),
                           f"machines.json machine {machine_name!r}")


def is_small_model_run(run: BenchRun) -> bool:
    """Whether a run is one of benchmarks-small.json's (the small models' check)."""
    return run.runs_file == SMALL_RUNS_FILE


def published_bandwidth_shares(data_dir: str | Path | None = None) -> list[dict]:
    """Decode runs with a known bandwidth and the share of it they reached (figure 19).

    Every tg test of llama-bench starts from an empty context, so tg32, tg128 and tg512
    all count. Each entry: machine, backend, model, quant, test, tok_s, bandwidth_gbs,
    size_bytes, share.
    """
    shares = []
    for run in load_runs(data_dir):
        share = run.bandwidth_share
        if share is None:
            continue
        shares.append({
            "machine": run.machine.name, "backend": run.backend, "model": run.model.name.split(" (")[0],
            "quant": run.quant, "test": run.test, "tok_s": run.tok_s,
            "bandwidth_gbs": run.machine.bandwidth_gbs, "size_bytes": run.model.size_bytes, "share": share,
        })
    return shares


def published_median_bandwidth_share(data_dir: str | Path | None = None) -> float:
    """Median share of the spec bandwidth that one decoding stream reaches in the published
    dense llama-bench runs (tok/s x bytes a token reads / spec GB/s), as a fraction.

    The sentence of "Decode in practice" and figure 19 quote it; `published_run_count`
    gives how many runs it is the median of.
    """
    return statistics.median(entry["share"] for entry in published_bandwidth_shares(data_dir))


def published_run_count(data_dir: str | Path | None = None) -> int:
    """How many published decode runs the median share is taken over."""
    return len(published_bandwidth_shares(data_dir))
