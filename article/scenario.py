"""Which model on which machine each worked example uses, the request, and the sizes.

Decided once, here; every number of the namespace and every figure takes its model and
machine from the `Scenario` this module builds (figures receive it in their context,
never choose a preset):

- the **request** (content/request/request.json, read once): its model on its machine
  (Qwen3.6 35B-A3B on the laptop), its text files, output length, context, chunk, and the
  vocabulary its tokens are counted with (llama.cpp's qwen35 test vocabulary);
- the **H100 example**: a dense 7B in fp16 on one H100 SXM;
- the **comparisons**: the dense 27B beside the MoE, Llama 3.1 70B, GPT-3's shapes, and
  the other machines (RTX 5090 and 5080, M4 Max);
- the **sizes** of the worked examples (article/data/scenario.json: prompt lengths, users,
  tiles, contexts), each with its reason.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from article import _data
from tokenwalk.data_refs import read_json_file
from tokenwalk.errors import TokenwalkError

REQUEST_DIR = _data.ROOT / "content" / "request"

# The worked examples' presets (tokenwalk/data/models and machines). The request's own
# model and machine come from request.json.
H100_EXAMPLE = ("dense-7b-fp16", "h100-sxm")
DENSE_BESIDE_MOE = "qwen3.8-27b"
BIG_DENSE = "llama3.1-70b"
GPT3 = "gpt3-175b"
OTHER_MACHINES = {"rtx5090": "rtx-5090", "rtx5080": "rtx-5080", "m4max": "m4-max"}


@dataclasses.dataclass(frozen=True)
class Example:
    """One worked example: a model (ModelSpec) on a machine (MachineSpec)."""
    model: object
    machine: object


@dataclasses.dataclass(frozen=True)
class Request:
    """The article's request: request.json's settings (references resolved) and its texts."""
    folder: Path
    model: str
    machine: str
    system: str
    history: str
    question: str
    output_tokens: int
    num_ctx: int
    chunk_tokens: int
    kv_type: str
    tokenizer_model_file: str  # the vocabulary the tokenizer figure ships to the page
    tokenizer_model_name: str
    tokenizer_paragraph: str  # what the toy BPE of figure 1 learns from
    count_vocab_file: str  # the vocabulary the request's token counts are made with
    count_vocab_name: str


@dataclasses.dataclass(frozen=True)
class Scenario:
    request: Request
    laptop_request: Example  # the request's model on the request's machine
    h100_example: Example
    presets: dict  # short name -> ModelSpec / MachineSpec (the namespace's prefixes: qwen, d7, laptop, ...)
    sizes: dict  # article/data/scenario.json: name -> value

    @property
    def request_dir(self) -> Path:
        return self.request.folder


def read_request(folder: str | Path | None = None) -> Request:
    """request.json and the files it names, from ``folder`` (default content/request/)."""
    folder = Path(folder) if folder is not None else REQUEST_DIR
    where = "content/request/request.json" if folder == REQUEST_DIR else str(folder / "request.json")
    cfg = read_json_file(folder / "request.json", missing="the request's settings are missing")
    try:
        def text(key):
            return (folder / cfg[key]).read_text(encoding="utf-8").strip()

        return Request(
            folder=folder, model=cfg["model"], machine=cfg["machine"],
            system=text("system_prompt_file"), history=text("history_file"), question=text("question_file"),
            output_tokens=_data.resolve(cfg["output_tokens"], where),
            num_ctx=_data.resolve(cfg["num_ctx"], where),
            chunk_tokens=_data.resolve(cfg["chunk_tokens"], where),
            kv_type=cfg.get("kv_type", "f16"),
            tokenizer_model_file=cfg["tokenizer_model_file"],
            tokenizer_model_name=cfg.get("tokenizer_model_name", "the model"),
            tokenizer_paragraph=(folder / "tokenizer-paragraph.txt").read_text(encoding="utf-8"),
            count_vocab_file=cfg["count_vocab_file"], count_vocab_name=cfg["count_vocab_name"],
        )
    except KeyError as exc:
        raise TokenwalkError(f"{where}: {exc.args[0]}: missing") from None
    except OSError as exc:
        raise TokenwalkError(f"{where}: cannot read {exc.filename} ({exc.strerror})") from None


def load_scenario(request_dir: str | Path | None = None) -> Scenario:
    """The article's scenario (presets loaded through tokenwalk's cached loaders)."""
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.specs.model import load_model

    request = read_request(request_dir)
    presets = {
        "qwen": load_model(request.model), "laptop": load_machine(request.machine),
        "dense27": load_model(DENSE_BESIDE_MOE), "llama70": load_model(BIG_DENSE), "gpt3": load_model(GPT3),
        "d7": load_model(H100_EXAMPLE[0]), "h100": load_machine(H100_EXAMPLE[1]),
        **{key: load_machine(name) for key, name in OTHER_MACHINES.items()},
    }
    return Scenario(request=request, laptop_request=Example(presets["qwen"], presets["laptop"]),
                    h100_example=Example(presets["d7"], presets["h100"]), presets=presets,
                    sizes=_data.values("scenario.json"))
