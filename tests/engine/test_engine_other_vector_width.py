"""The engine compiled for the other x86 vector width than the default device's: where this
host lists a second CPU device whose compiler targets AVX2 alone while the default targets
AVX-512 (or the reverse), the three models run there too, against the float reference with
each model's own tolerances, and the decode chains give the same bits as a launch per product.

Why: the kernels take different paths by the target's width (kernels/*.cl: `__AVX512F__`,
`__AVX512BW__`; the two-row integer prefill product, the 16-wide attention, the VNNI dot on
AVX-512 only), and the engine's other tests exercise only the default device's. On an AMD Zen 4
host the default device (Debian's PoCL 3.1, LLVM 15) targets skylake-avx512, and the PoCL that
pyopencl's wheel brings (3.0, LLVM 14) lists the same CPU beside it with target znver3: AVX2,
what a Zen 3 host compiles. On a host with one width only, the test is skipped.

The greedy comparison with llama.cpp (test_engine_peer.py) is not repeated here: on that AVX2
target SmolLM2's 'code' prompt parts at token 11, where llama.cpp's two best are 0.384 apart;
the float reference puts them 0.345 apart the same way round, the engine's 8-bit products on
AVX-512 0.562, on that target 0.036 the other way round: the rounding of 8-bit inputs moves a
gap by a few tenths whichever compiler sums them (the float path gives 0.345 on both), and
where it exceeds the peer test's NEAR_TIE is a matter of the compiler's float order.
"""

import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / ".cache" / "models"
PROBE = "#if {test}\n#error no\n#endif\n__kernel void probe(__global float *x) {{ x[0] = 1.0f; }}"
WIDTHS = {"AVX-512": "!defined(__AVX512F__)", "AVX2": "!defined(__AVX2__) || defined(__AVX512F__)"}

pytestmark = pytest.mark.slow


def _width(cl, device) -> str | None:
    """Which width, "AVX-512" or "AVX2", the device's compiler targets (None: neither, or no compiler)."""
    for name, test in WIDTHS.items():
        try:
            cl.Program(cl.Context([device]), PROBE.format(test=test)).build()
            return name
        except cl.Error:
            continue
    return None


@pytest.fixture(scope="module")
def other() -> tuple[str, dict]:
    """("platform:device", defines) of a CPU device of the other vector width than the
    default's; for an AVX2 target the defines leave out VNNI (INT_VNNI=0), which the engine
    uses wherever the host's CPU has it, whatever the target: what an AVX2-only host runs."""
    cl = pytest.importorskip("pyopencl")
    from tokenwalk.native.cl.device import create_context

    default = create_context().devices[0]
    mine = _width(cl, default)
    if mine is None:
        pytest.skip(f"the default device ({default.name.strip()}) targets neither AVX2 nor AVX-512")
    for p, platform in enumerate(cl.get_platforms()):
        for d, device in enumerate(platform.get_devices()):
            width = _width(cl, device)
            if device.type & cl.device_type.CPU and width not in (None, mine):
                return f"{p}:{d}", {"INT_VNNI": 0} if width == "AVX2" else {}
    pytest.skip(f"no CPU device here targets another vector width than the default's ({mine})")


def _assert_on(engine, device: str):
    """The engine ran on `device` ("platform:device"), not on the default one."""
    import pyopencl as cl

    p, d = (int(i) for i in device.split(":"))
    assert engine.dev.device == cl.get_platforms()[p].get_devices()[d]


def test_smollm2_matches_the_reference(other):
    other_device, defines = other
    from tests.engine import test_engine_reference as smollm2
    from tests.support.reference_cache import reference_logits
    from tokenwalk.native.engine import Engine
    from tokenwalk.text.tokenizer import load_tokenizer

    if not smollm2.MODEL.exists():
        pytest.skip("SmolLM2 file not fetched")
    ids = load_tokenizer(smollm2.MODEL).encode(smollm2.TEXT)[:64]
    ref = reference_logits(smollm2.MODEL, ids)
    engine = Engine(smollm2.MODEL, device=other_device, ctx_tokens=96, chunk_tokens=24, defines=dict(defines))
    _assert_on(engine, other_device)
    smollm2.check_prefill(engine, ids, ref)
    smollm2.check_decode(engine, ids, ref)


@pytest.mark.parametrize("name", ["gemma3", "qwen2"])
def test_gemma3_and_qwen2_match_the_reference(other, monkeypatch, name):
    other_device, defines = other
    from tests.engine import test_engine_gemma3 as gemma3
    from tests.engine import test_engine_qwen2 as qwen2
    from tests.support.reference_cache import reference_logits
    from tokenwalk.text.tokenizer import load_tokenizer

    module = {"gemma3": gemma3, "qwen2": qwen2}[name]
    if not module.MODEL.exists():
        pytest.skip(f"{module.MODEL.name} not fetched")
    monkeypatch.setenv("PYOPENCL_CTX", other_device)  # the module's _run makes its engine on the default device
    ids = load_tokenizer(module.MODEL).encode(module.TEXT, add_special=True)
    ref = reference_logits(module.MODEL, ids)
    if name == "gemma3":
        engine, ref, prefill, decode, half = gemma3._run(ids, reference=ref, **defines)
        gemma3._check(ref, prefill, decode, half, rounded=True)
    else:
        engine, prefill, decode, half = qwen2._run(ids, **defines)
        qwen2.check_rounded(ref, prefill, decode, half)
    _assert_on(engine, other_device)


def test_chained_decode_gives_the_same_bits(other):
    other_device, defines = other
    from tests.engine.test_engine_decode_chain import FILES, _decode
    from tokenwalk.native.engine import Engine

    path = FILES["gemma3"]  # four weight layouts in one chain
    if not path.exists():
        pytest.skip(f"{path.name} not fetched")
    single = Engine(path, device=other_device, ctx_tokens=128, decode_chains=False, defines=dict(defines))
    chained = Engine(path, device=other_device, ctx_tokens=128, decode_chains=True, defines=dict(defines))
    assert len(chained.graph.decode_launches) == chained.config.layers + 2
    assert np.array_equal(_decode(chained), _decode(single))
