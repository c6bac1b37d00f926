"""The toy-math core (attention, sampling, quantization, BPE, speculative, MoE) imports and
runs with numpy and every other non-stdlib package blocked, as it must in Pyodide."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import sys
BLOCKED = {"numpy", "gguf", "pyopencl", "scipy", "matplotlib", "manim", "jinja2", "markdown_it", "PIL"}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked: {name}")
sys.meta_path.insert(0, Blocker())
from tokenwalk.physics import attention
from tokenwalk.physics import sampling
from tokenwalk.physics import quantization
from tokenwalk.text import bpe
from tokenwalk.physics import speculative
from tokenwalk.physics import moe
import random
row = attention.attention_row(attention.causal_mask([0.6, 0.1, 3.4, 0.6, 0.2, 0.9, 0.8, 1.2], 7))
assert [round(100 * w) for w in row] == [4, 3, 74, 4, 3, 6, 5, 0]
assert round(100 * sampling.softmax_with_temperature([3.0, 2.0, 1.0])[0]) == 67
sampling.sample([1.0, 2.0, 3.0], 0.7, top_p=0.9, rng=random.Random(0))
assert quantization.FORMAT_BITS_PER_WEIGHT["Q8_0"] == 8.5
assert quantization.quantize_block([0.01, -0.02, 0.5, 0.03], 4).to_dict()["bits"] == 4
tok = bpe.train_bpe("the patient and the patient", 10)
assert tok.decode(tok.encode("the 💊 patient")) == "the 💊 patient"
assert round(speculative.expected_tokens_per_round(0.7, 4), 1) == 2.8
assert moe.expected_distinct_experts(1, 256, 8) == 8
leaked = BLOCKED & {m.split(".")[0] for m in sys.modules}
assert not leaked, leaked
print("ok")
"""


def test_toy_math_core_runs_with_non_stdlib_packages_blocked():
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
