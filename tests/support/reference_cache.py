"""The engine tests' numpy reference logits, kept on disk between runs.

The float reference (tokenwalk/native/reference.py) takes 4-13 s a prompt on two cores, and
the same prompts are asked for in every run. Its logits are kept under
.cache/reference-logits/ by a key of everything they follow from: the reference's own code
and the modules it reads the model with, the model file (name, size, time of change) and the
configuration read from it, the token ids, numpy's and gguf-py's versions. Any change there
computes them afresh."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from tests.support.paths import ROOT

CACHE = ROOT / ".cache" / "reference-logits"
CODE = [ROOT / "tokenwalk" / part for part in ("native/reference.py", "native/model.py", "native/model_file.py",
                                              "native/hparams.py", "native/architectures.py", "gguf/hparams.py")]


def reference_key(path: Path, token_ids) -> str:
    from importlib.metadata import version

    from tokenwalk.native.model import open_model

    path = Path(path)
    stat = path.stat()
    config = repr(open_model(path).config)  # as the reference sees it (a test may narrow a window)
    digest = hashlib.sha256()
    for source in CODE:
        digest.update(hashlib.sha256(source.read_bytes()).digest())
    digest.update(json.dumps([path.name, stat.st_size, stat.st_mtime_ns, config, [int(i) for i in token_ids],
                              np.__version__, version("gguf")]).encode())
    return digest.hexdigest()[:24]


def reference_logits(path, token_ids) -> np.ndarray:
    """tokenwalk.native.reference.reference_logits(path, token_ids), from the cache when its
    inputs have not changed."""
    from tokenwalk.native.reference import reference_logits as compute

    kept = CACHE / f"{reference_key(path, token_ids)}.npy"
    if kept.is_file():
        return np.load(kept)
    logits = compute(path, token_ids)
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(partial, logits)
    partial.replace(kept)  # whole or absent, though two workers may write it at once
    return logits
