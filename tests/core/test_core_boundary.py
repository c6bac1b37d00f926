"""The core (tokenwalk minus tokenwalk.EDGE_PACKAGES: native/, cli/, timing/fit/) imports and runs
with every non-standard-library package blocked, as in Pyodide, where only the interpreter and its standard library exist (DESIGN.md)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from tokenwalk import EDGE_PACKAGES, core_module_names

ROOT = pathlib.Path(__file__).resolve().parents[2]

CORE_MODULES = core_module_names(ROOT / "tokenwalk")
# the page's app ships in the same wheel and runs beside the core in Pyodide
APP_MODULES = sorted("tokenwalk_app." + p.stem for p in (ROOT / "tokenwalk_app").glob("*.py") if p.stem != "__init__")
# the edge packages that need more than the standard library (the command line does not, and
# its inspect command runs below)
REFUSED_EDGES = [f"tokenwalk.{edge}" for edge in EDGE_PACKAGES if edge != "cli"]

# Runs in a fresh interpreter: a meta-path finder refuses every top-level package that is
# neither the standard library nor tokenwalk's core, then the core is imported and used.
CHILD = r'''
import importlib, importlib.abc, json, sys
ALLOWED = set(sys.stdlib_module_names) | {"tokenwalk", "tokenwalk_app"}
REFUSED_EDGES = json.loads(sys.argv[2])
refused = []

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in ALLOWED or any(name == e or name.startswith(e + ".") for e in REFUSED_EDGES):
            refused.append(name)
            raise ImportError(f"blocked outside the core: {name}")
        return None

sys.meta_path.insert(0, Refuse())
for name in list(sys.modules):
    if name.split(".")[0] in ("numpy", "gguf", "pyopencl", "scipy", "matplotlib"):
        del sys.modules[name]

modules = json.loads(sys.argv[1])
for module in modules:
    importlib.import_module(module)
importlib.import_module("tokenwalk.cli")

# and use it: every preset, a header, the inspect report (which pulls in roofline and kv_cache)
from tokenwalk.specs.model import list_model_presets, load_model
from tokenwalk.specs.machine import list_machine_presets, load_machine, memory_ladder
from tokenwalk.gguf.header import read_gguf_header_bytes, GGUFNeedMoreBytes
from tokenwalk.cli.inspect import inspect_model
for name in list_model_presets():
    load_model(name)
for name in list_machine_presets():
    load_machine(name)
memory_ladder()
report = inspect_model("qwen3.6-35b-a3b")
try:
    read_gguf_header_bytes(b"GGUF\x03\x00\x00\x00", file_size=10**9)
except GGUFNeedMoreBytes:
    pass
print(json.dumps({"refused": refused, "kv": report["kv_bytes_per_token"]["f16"],
                  "numpy_loaded": "numpy" in sys.modules}))
'''


def test_core_modules_exist():
    for name in ("gguf.ggml_types", "gguf.header", "specs.model", "specs.machine", "specs.schema",
                 "physics.roofline", "timing.model", "text.tokenizer", "walk"):
        assert "tokenwalk." + name in CORE_MODULES
    assert not [m for m in CORE_MODULES if m.startswith(("tokenwalk.native", "tokenwalk.cli", "tokenwalk.timing.fit"))]
    assert "tokenwalk.timing.fit" in REFUSED_EDGES and "tokenwalk.timing.model" in CORE_MODULES
    assert {"tokenwalk_app.entry", "tokenwalk_app.view", "tokenwalk_app.quant_view"} <= set(APP_MODULES)


def test_core_imports_and_runs_with_non_stdlib_packages_blocked():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-c", CHILD, json.dumps(CORE_MODULES + APP_MODULES), json.dumps(REFUSED_EDGES)],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["numpy_loaded"] is False
    assert out["kv"] == 20_480
