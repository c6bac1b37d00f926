"""A decode step's runs of products and attention as single launches (decode_chain, CPU
devices) against one launch each: the same logits, bit for bit, and fewer launches.

The chain's work-items take rows and attention units from counters and wait, before each
phase, for the work of the phase before it; the logits are the same bits as with a launch
per product because every row's sum is computed in the same order either way. One work-item
runs the whole chain alone (what happens when PoCL's second worker comes after the first has
finished), five contend for two cores. A chain's products may differ in weight layout (its
program has a section per layout, kernels/decode_chain.cl's matvec_any): SmolLM2 (Q4_1
throughout), Gemma 3 and Qwen2.5 (Q5_0 with Q4_K, Q6_K and Q8_0 tensors) each run a layer in
one launch.
"""

import pathlib
from types import SimpleNamespace

import numpy as np
import pytest

from tokenwalk.native.cl.ops import AttentionPhase, MatvecPhase, chain_runs

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / ".cache" / "models"
FILES = {"smollm2": MODELS / "SmolLM2-135M-Instruct.Q4_1.gguf",
         "gemma3": MODELS / "gemma-3-270m-q4_k_m.gguf",
         "qwen2": MODELS / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"}
PROMPT = list(range(20, 45))
STEPS = 6


def _product(layout):
    return MatvecPhase(SimpleNamespace(packed=SimpleNamespace(kernel_type=layout)), (None,) * 12, 1e-6)


def _attention():
    return AttentionPhase("F32", (), 3, 3)


def test_runs_follow_the_chain_order_whatever_the_layouts():
    a, b = "Q4_1", "Q6_K"
    llama_layer = [_product(a), _attention(), _product(a), _product(a), _product(a)]
    runs = chain_runs(llama_layer * 2 + [_product(b)])
    assert [[slot for slot, _ in run] for run in runs] == [[0, 2, 3, 4, 5], [0, 2, 3, 4, 5], [0]]
    # Gemma 3's layer: Q|K and V of other layouts, attention, output, gate|up, down: one run
    runs = chain_runs([_product(a), _product(b), _attention(), _product(b), _product(a), _product(b)] * 2)
    assert [[slot for slot, _ in run] for run in runs] == [[0, 1, 2, 3, 4, 5]] * 2
    # a second attention, or a fourth product after attention, starts a new run
    assert [len(r) for r in chain_runs([_attention(), _attention()])] == [1, 1]
    assert [len(r) for r in chain_runs([_attention()] + [_product(a)] * 4)] == [4, 1]


def test_a_chains_program_has_a_section_per_layout():
    from tokenwalk.native.cl.programs import chain_source

    source = chain_source(("Q4_K", "Q5_0", "Q8_0"))
    for n, layout in enumerate(("Q4_K", "Q5_0", "Q8_0")):
        assert f"#define WTYPE_{layout}\n#define CHAIN_SECTION {n}\n#define matvec_phase matvec_phase_{n}" in source
        assert f"#undef WTYPE_{layout}" in source
    assert source.count("#define CHAIN_LAYOUTS 3") == 1
    # every macro of a layout is undefined before the next section; the shared helpers' guards stay
    first = source[source.index("#define CHAIN_SECTION 0"):source.index("#define CHAIN_SECTION 1")]
    for macro in ("QUANT", "WQ_T", "WD_T", "ROW_DOT", "UNPACKI", "INT_DOT"):
        assert f"#undef {macro}\n" in first
    assert "#undef INT_DOT_HELPERS" not in source and "#undef MATVEC_SHARED" not in source
    with pytest.raises(ValueError, match="1 to 8 weight layouts"):
        chain_source(())


def _decode(engine):
    logits = engine.prefill(PROMPT)
    tok, out = int(np.argmax(logits)), []
    for i in range(STEPS):
        logits = engine.decode(tok, len(PROMPT) + i)
        out.append(logits.copy())
        tok = int(np.argmax(logits))
    return np.array(out)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FILES))
def test_chained_decode_gives_the_same_logits_in_fewer_launches(name):
    path = FILES[name]
    if not path.exists():
        pytest.skip(f"{path.name} not fetched")
    from tokenwalk.native.engine import Engine

    single = Engine(path, ctx_tokens=128, decode_chains=False)
    if not single.dev.is_cpu:
        pytest.skip("decode chains run on CPU devices")
    expected = _decode(single)
    layers = single.config.layers
    assert len(single.graph.decode_launches) >= 5 * layers + 2
    # the work-items a chain runs with: the default (two, a core each), and on the smallest model
    # one (every phase in sequence) and five (more workers than cores, contending for rows):
    # the waits are the same code for every layout
    for items in (2, 1, 5) if name == "smollm2" else (2,):
        chained = Engine(path, ctx_tokens=128, decode_chains=True, decode_items=items)
        launches = len(chained.graph.decode_launches)
        assert launches < len(single.graph.decode_launches)
        assert launches == layers + 2  # the counters' zeroing, a launch per layer, the head
        assert np.array_equal(_decode(chained), expected), (name, items)
