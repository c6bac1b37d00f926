"""tokenwalk: the numbers of local inference, from GGUF headers, machine specs and measurements.

A library that knows no article. Its **core** is every module outside `tokenwalk.native`
and `tokenwalk.cli`: pure Python, standard library only, so that it runs unchanged at build
time, in pytest and in the reader's browser under Pyodide. Grouped by concern:

- `gguf`: the GGUF header reader, the ggml number formats, and what a header's metadata
  means (`gguf.hparams`, read by the specs and the engine alike);
- `specs`: models and machines (JSON presets with a source per value, GGUF headers);
- `physics`: roofline, KV cache, attention, batching, chunked prefill, experts, memory
  budget, speculative decoding, quantization, sampling;
- `timing`: the fitted timing model, calibration on a machine's own measurements, the
  published llama-bench runs (its trainer, `timing.fit`, is an edge package);
- `text`: the byte-level BPE, the model's tokenizer (one merge loop for its two kinds), chat templates;
- `walk`: one request from the disk to the last token.

The page's app (the worker's entry points, the simulator's and the quantizer's views) is a
package of its own, `tokenwalk_app`, shipped in the same browser wheel: it imports this core,
the core never imports it.

`tokenwalk.native` is the **native edge** (numpy, gguf, pyopencl: the OpenCL engine);
`tokenwalk.timing.fit` fits the timing model (numpy, scipy) beside the model it trains;
`tokenwalk.cli` is the command line. Nothing in the core imports from any of them.
"""

__version__ = "0.1.0"

# The edge packages, dotted below tokenwalk (a package may sit inside a core one, as the fit
# inside timing/): everything else under tokenwalk/ is the pure core (the browser's wheel and
# the boundary tests all read this one rule).
EDGE_PACKAGES = ("native", "cli", "timing.fit")


def is_edge(relative_path) -> bool:
    """Whether a path relative to tokenwalk/ ("timing/fit/solve.py") lies in an edge package."""
    from pathlib import PurePath

    parts = PurePath(relative_path).parts
    return any(parts[:len(edge.split("."))] == tuple(edge.split(".")) for edge in EDGE_PACKAGES)


def core_module_names(package_dir) -> list[str]:
    """Dotted names of the core's modules under `package_dir` (tokenwalk/), in name order:
    every .py outside EDGE_PACKAGES, except __main__."""
    from pathlib import Path

    root = Path(package_dir)
    names = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if is_edge(rel) or "__pycache__" in rel.parts or rel.name == "__main__.py":
            continue
        parts = ["tokenwalk", *rel.with_suffix("").parts]
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names
