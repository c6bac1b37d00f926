"""Changing one number (the H100's bandwidth) changes the cache keys of the
figures that use it and of no others: the build's cache decides what re-renders.

Each run is a fresh subprocess (no cached namespace or preset leaks between them); the
"bump" run reads h100-sxm's bandwidth_gbs 1 % higher through a data store of its own, as an
edit of tokenwalk/data/machines/h100-sxm.json would.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

KEYS = r"""
import json, sys
from contextlib import nullcontext
from pathlib import Path
root = Path(sys.argv[1]); sys.path.insert(0, str(root))
store = nullcontext()
if sys.argv[2] == "bump":
    from tests.support.data_substitute import ChangedStore
    from tokenwalk import data_refs
    bump = lambda data: dict(data, bandwidth_gbs=data["bandwidth_gbs"] * 1.01)
    store = data_refs.use_store(ChangedStore("machines/h100-sxm.json", bump))
with store:
    from publish import registry
    figs = registry.discover(root / "figures", root)
    from article.context import build_context
    ctx = build_context()
    print(json.dumps({f.id: registry.compute_key(f, ctx) for f in figs}))
"""

# Figures drawn on the H100 (the dense 7B's steps, the memory ladder, the KV growth) and
# the simulator, whose machine list shows every preset's bandwidth.
H100_FIGURES = {"accounting-execution", "balance-point", "chunked-prefill", "kv-growth",
                "memory-ladder", "overlap", "simulator", "three-steps"}


def _keys(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", KEYS, str(ROOT), mode], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # seconds, not milliseconds: in `make test`, not `make check`
def test_h100_bandwidth_changes_exactly_the_h100_figures():
    before, after = _keys("same"), _keys("bump")
    assert set(before) == set(after)
    changed = {fig for fig in before if before[fig] != after[fig]}
    assert changed == H100_FIGURES
