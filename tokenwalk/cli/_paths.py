"""The command line's default paths, relative to the repository root.

The library takes every path as a parameter; only the command line points at the model
`make setup` fetches, at the article's request and at the measurements file the build reads.
A default path is looked for in the working directory first (a checkout run from its root),
then in the checkout this package lives in, so `tokenwalk tokenize --model smollm2-135m`
works from any folder.
"""

from __future__ import annotations

from pathlib import Path

from tokenwalk.errors import TokenwalkError

DEFAULT_MODEL = Path(".cache") / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
# The model files `make setup` fetches, by the preset names the engine's commands accept for --model.
ENGINE_MODELS = {
    "smollm2-135m": DEFAULT_MODEL,
    "gemma3-270m": Path(".cache") / "models" / "gemma-3-270m-q4_k_m.gguf",
    "qwen2.5-coder-0.5b": Path(".cache") / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
}
ARTICLE_REQUEST = Path("content") / "request" / "request.json"
MEASUREMENTS_FILE = Path(__file__).resolve().parent.parent / "data" / "measurements" / "engine.json"
# The checkout of an editable install (`make setup`): tokenwalk/cli/_paths.py -> the root.
CHECKOUT = Path(__file__).resolve().parents[2]


def found(relative: Path) -> Path:
    """`relative` (a default path) in the working directory if it is there, else in the
    checkout this package lives in if it is there, else as given (the error then names it)."""
    if relative.is_absolute() or relative.exists():
        return relative
    in_checkout = CHECKOUT / relative
    return in_checkout if in_checkout.exists() else relative



def measurements_file(model: str | None) -> Path:
    """Where `measure` writes by default: engine.json for SmolLM2 (the run the simulator's
    measured preset stands on), engine-<name>.json beside it for another model named as in
    ENGINE_MODELS (the page's aside adds a column for each), engine.json for a path."""
    if model in ENGINE_MODELS and ENGINE_MODELS[model] != DEFAULT_MODEL:
        return MEASUREMENTS_FILE.with_name(f"engine-{model}.json")
    return MEASUREMENTS_FILE


def model_path(path) -> Path:
    """``path`` (default: DEFAULT_MODEL; a name of ENGINE_MODELS: its file) if the file exists,
    else a one-line error saying what to do."""
    if path in ENGINE_MODELS:
        p = found(ENGINE_MODELS[path])
        if not p.exists():
            raise TokenwalkError(f"{p}: the file of {path} is not fetched; run `make setup`")
        return p
    p = Path(path) if path else found(DEFAULT_MODEL)
    if not p.exists():
        hint = "run `make setup` to fetch it, or pass --model PATH" if not path else "pass --model with a .gguf path"
        raise TokenwalkError(f"{p}: model file not found; {hint}")
    return p
