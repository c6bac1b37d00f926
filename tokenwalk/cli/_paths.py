"""The command line's default paths, relative to the repository root (where the commands run).

The library takes every path as a parameter; only the command line points at the model
`make setup` fetches, at the article's request and at the measurements file the build reads.
"""

from __future__ import annotations

from pathlib import Path

from tokenwalk.errors import TokenwalkError

MODEL_CACHE = Path(".cache") / "models"
DEFAULT_MODEL = MODEL_CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf"
ARTICLE_REQUEST = Path("content") / "request" / "request.json"
MEASUREMENTS_FILE = Path(__file__).resolve().parent.parent / "data" / "measurements" / "engine.json"


def model_path(path) -> Path:
    """``path`` (default: DEFAULT_MODEL) if the file exists, else a one-line error saying what to do.

    A model preset name whose preset names its GGUF file (``gguf.file``, e.g. gemma3-270m)
    stands for that file in the model cache, where `make setup` puts it."""
    p = Path(path) if path else DEFAULT_MODEL
    if path and not p.exists():
        p = _preset_file(str(path)) or p
    if not p.exists():
        hint = "run `make setup` to fetch it, or pass --model PATH" if not path or p.parent == MODEL_CACHE \
            else "pass --model with a .gguf path or a model preset that names its file"
        raise TokenwalkError(f"{p}: model file not found; {hint}")
    return p


def _preset_file(name: str) -> Path | None:
    """The model cache's copy of the GGUF file the model preset ``name`` was read from, if it names one."""
    from tokenwalk.specs.schema import preset_names, read_preset

    if name not in preset_names("models"):
        return None
    data, _ = read_preset("models", name)
    file = data["gguf"].get("file") if isinstance(data.get("gguf"), dict) else None
    if not (isinstance(file, str) and file.endswith(".gguf")):
        raise TokenwalkError(f"{name}: this model preset names no GGUF file that `make setup` fetches; "
                             "pass --model with a .gguf path")
    return MODEL_CACHE / Path(file).name
