"""Prefill by the shape of its products (tokenwalk.timing.prefill_shape): a mixture of experts'
narrow expert products priced apart from full-width ones, rows_half solved from published
dense/MoE pairs (data/prefill_shape.json). Serves chapter 5's "Prefill in practice" (the
laptop's expert rows and the dense 27B's prefill), the simulator's prefill row and
`tokenwalk validate`'s shape check."""

import subprocess
import sys
from dataclasses import replace

import pytest

from tests.support.data_substitute import substitute_data_file
from tests.support.golden import reviewed
from tokenwalk.errors import SpecError
from tokenwalk.physics import roofline
from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model, model_from_dict
from tokenwalk.timing import model as timing_model
from tokenwalk.timing import prefill_shape, shape_check

SHAPE = prefill_shape.SHAPE_FILE

# Stand-ins: a two-layer model, dense and with 8 experts of which 2 are used
DENSE = {"name": "stand-in-dense", "params": 2.0e8, "size_bytes": 2.0e8, "layers": 2, "embedding_length": 256,
         "feed_forward_length": 1024, "head_count": 4, "head_count_kv": 2, "head_dim": 64, "vocab_size": 1000,
         "file_type": "Q8_0"}
MIXTURE = {**DENSE, "name": "stand-in-moe", "params": 4.0e8, "size_bytes": 4.0e8, "active_params": 1.2e8,
           "expert_count": 8, "expert_used_count": 2, "expert_ffn_length": 128}


def _model(spec: dict):
    return model_from_dict(spec, spec["name"])


def _pair(moe_tok_s: float, dense_tok_s: float = 1000.0, prompt: int = 2048, chunk: int = 512) -> dict:
    return {"prompt_tokens": {"value": prompt}, "chunk_tokens": {"value": chunk},
            "dense": {"spec": DENSE, "prefill_tok_s": dense_tok_s}, "moe": {"spec": MIXTURE, "prefill_tok_s": moe_tok_s}}


def test_an_experts_rows_are_the_chunks_choices_over_the_experts_they_wake():
    moe = _model(MIXTURE)
    assert prefill_shape.expert_rows(moe, 512) == pytest.approx(512 * 2 / 8)  # every expert awake
    assert prefill_shape.expert_rows(moe, 1) == pytest.approx(1.0)  # one token: its 2 experts, one row each
    assert 1.0 < prefill_shape.expert_rows(moe, 3) < 3 * 2 / 8 * 8 / 2  # a few tokens: about a row apiece
    assert prefill_shape.expert_rows(_model(DENSE), 512) == 0.0
    qwen = load_model("qwen3.6-35b-a3b")  # chapter 5: 512 tokens, 8 of 256 experts each
    assert prefill_shape.expert_rows(qwen, 512) == pytest.approx(16.0)


def test_routed_expert_operations_are_twice_the_expert_weights_a_token_meets():
    moe = _model(MIXTURE)
    per_token = 2 * MIXTURE["layers"] * 2 * 3 * 256 * 128  # 2 ops x layers x used x (gate, up, down)
    assert prefill_shape.routed_expert_flops(moe, 10) == pytest.approx(10 * per_token)
    assert prefill_shape.routed_expert_flops(_model(DENSE), 10) == 0.0


def test_small_product_factor_prices_rows_against_the_chunks():
    assert prefill_shape.small_product_factor(16, 512, 0.0) == 1.0  # no loading cost: no shape
    assert prefill_shape.small_product_factor(512, 512, 178.0) == 1.0  # full width
    assert prefill_shape.small_product_factor(16, 512, 178.0) == pytest.approx((194 / 16) / (690 / 512))
    assert prefill_shape.small_product_factor(16, 512, 50.0) < prefill_shape.small_product_factor(16, 512, 100.0)
    with pytest.raises(ValueError, match="rows and chunk must be positive"):
        prefill_shape.small_product_factor(0, 512, 10.0)


def test_compute_scale_charges_only_the_routed_experts_part():
    moe, dense = _model(MIXTURE), _model(DENSE)
    flops = roofline.prompt_step(moe, roofline.Peaks(1.0, 1.0), 512).flops
    experts = prefill_shape.routed_expert_flops(moe, 512)
    factor = prefill_shape.small_product_factor(128, 512, 64.0)
    assert prefill_shape.compute_scale(moe, 512, flops, 64.0) == pytest.approx((flops - experts + experts * factor) / flops)
    assert prefill_shape.compute_scale(dense, 512, 1e12, 64.0) == 1.0
    step = prefill_shape.shaped_prompt_step(moe, roofline.Peaks(100.0, 10.0), 512, rows_half=64.0)
    plain = roofline.prompt_step(moe, roofline.Peaks(100.0, 10.0), 512)
    assert step.flops == plain.flops and step.compute_s > plain.compute_s


def test_the_solve_gives_back_the_rows_half_a_pair_was_made_with():
    dense, moe = _model(DENSE), _model(MIXTURE)
    for made_with in (0.0, 40.0, 300.0):
        moe_tok_s = 1000.0 * prefill_shape.charged_flops(dense, 2048, 512, 0.0) / \
            prefill_shape.charged_flops(moe, 2048, 512, made_with)
        solved = prefill_shape.solve_rows_half(_pair(moe_tok_s), (0.0, 4096.0), "pair")
        assert solved == pytest.approx(made_with, abs=1e-6)


@pytest.mark.parametrize("pair, message", [
    ({k: v for k, v in _pair(500.0).items() if k != "moe"}, "pairs.x: field 'moe' is missing or not a number"),
    ({**_pair(500.0), "chunk_tokens": {"value": "many"}}, "pairs.x: field 'a value' is missing or not a number"),
    ({**_pair(500.0), "moe": {"spec": DENSE, "prefill_tok_s": 500.0}}, "'moe' must be a mixture of experts"),
    (_pair(1e9), "needs rows_half outside 0-4096 rows"),  # faster than every product at full width
    ({**_pair(500.0), "dense": {"prefill_tok_s": 1000.0}}, "pairs.x.dense: needs a 'preset' or a 'spec'"),
])
def test_a_bad_pair_is_one_line_naming_it(pair, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        prefill_shape.solve_rows_half(pair, (0.0, 4096.0), "tokenwalk/data/prefill_shape.json: pairs.x")


def test_a_machine_uses_its_backends_pair_or_the_pairs_mean():
    by_pair = prefill_shape.rows_half_by_pair()
    assert set(by_pair) == {"Vulkan/AMD", "Metal", "CUDA"}
    assert prefill_shape.pair_for(load_machine("laptop-860m")) == ("Vulkan/AMD", by_pair["Vulkan/AMD"])  # named
    assert prefill_shape.pair_for(load_machine("m4-max"))[0] == "Metal"  # its backend
    assert prefill_shape.pair_for(load_machine("rtx-5090"))[0] == "CUDA"
    strix = replace(load_machine("rtx-5090"), backend="vulkan", vendor="AMD")
    assert prefill_shape.pair_for(strix)[0] == "Vulkan/AMD"  # backend and maker, any case
    key, rows_half = prefill_shape.pair_for(replace(load_machine("rtx-5090"), backend="ROCm", vendor="AMD"))
    assert key == prefill_shape.ALL_PAIRS  # ROCm: no pair measured
    assert rows_half == pytest.approx((by_pair["Vulkan/AMD"] * by_pair["Metal"] * by_pair["CUDA"]) ** (1 / 3))


def test_a_calibration_naming_no_pair_is_one_line():
    laptop = load_machine("laptop-860m")
    bad = replace(laptop, calibration={**laptop.calibration, "prefill_shape": {"pair": "ROCm"}})
    with pytest.raises(SpecError, match=r"calibration.prefill_shape.pair: 'ROCm' is not a pair of "
                                        r"tokenwalk/data/prefill_shape.json \(CUDA, Metal, Vulkan/AMD\)"):
        prefill_shape.pair_for(bad)


def test_a_missing_pairs_field_is_one_line(monkeypatch):
    substitute_data_file(monkeypatch, SHAPE, lambda data: {k: v for k, v in data.items() if k != "pairs"})
    with pytest.raises(SpecError, match="tokenwalk/data/prefill_shape.json: field 'pairs' is missing or empty"):
        timing_model.machine_timing(load_model("qwen3.6-35b-a3b"), load_machine("rtx-5090"))
    # a dense model never reads the file
    assert timing_model.machine_timing(load_model("qwen3.8-27b"), load_machine("rtx-5090")).rows_half == 0.0


def test_the_timing_model_meets_the_vulkan_pair_on_a_machine_like_its_own():
    """The whole timing path (the fit's Vulkan/AMD row, launches, attention) on a machine with
    the pair's peaks gives back the pair's measured ratio of speeds: the solve and the timing
    price the same operations."""
    strix = replace(load_machine("rtx-5090"), name="strix-like", backend="Vulkan", vendor="AMD", bandwidth_gbs=256,
                    fp16_tflops=59.4, device_class="integrated", calibration=None)
    pair = prefill_shape.pair_measurements("Vulkan/AMD")
    prompt, chunk = pair["prompt_tokens"], pair["chunk_tokens"]
    speeds = {name: prompt / timing_model.prefill_s(load_model(name), strix, prompt, chunk)
              for name in ("qwen3.6-35b-a3b", "qwen3.8-27b")}
    measured = pair["moe_tok_s"] / pair["dense_tok_s"]
    assert speeds["qwen3.6-35b-a3b"] / speeds["qwen3.8-27b"] == pytest.approx(measured, rel=0.02)


def test_the_laptops_dense_model_gets_full_width_products_not_the_moes_share():
    """Chapter 5: calibrated on the MoE, the laptop still times the dense 27B at the
    efficiency of full-width products, well above the MoE's measured rate of operations."""
    laptop = load_machine("laptop-860m")
    moe, dense = load_model("qwen3.6-35b-a3b"), load_model("qwen3.8-27b")
    prompt, chunk = 2900, 512
    assert prompt / timing_model.prefill_s(moe, laptop, prompt, chunk) == pytest.approx(93, rel=1e-3)  # its measurement
    moe_rate = 93 * roofline.flops_per_token(moe)  # operations a second the MoE was measured at
    dense_tok_s = prompt / timing_model.prefill_s(dense, laptop, prompt, chunk)
    assert dense_tok_s > 3 * moe_rate / roofline.flops_per_token(dense)


def test_the_committed_pairs_and_what_they_give_are_the_reviewed_ones():
    laptop = load_machine("laptop-860m")
    dense = load_model("qwen3.8-27b")
    got = {
        "rows_half": {k: round(v, 2) for k, v in prefill_shape.rows_half_by_pair().items()},
        "laptop_compute_efficiency": timing_model.coefficients(laptop).compute_efficiency,
        "laptop_dense27_prefill_tok_s_at_2900": round(2900 / timing_model.prefill_s(dense, laptop, 2900, 512), 1),
        "held_out": {r.pair: {"others_ape": round(r.others_ape, 3), "without_shape_ape": round(r.without_shape_ape, 3)}
                     for r in shape_check.held_out()},
    }
    assert got == reviewed("prefill_shape.json", got, indent=1, sort_keys=True)


def test_each_pair_held_out_is_missed_less_than_without_the_shape():
    rows = shape_check.held_out()
    assert [r.pair for r in rows] == ["Vulkan/AMD", "Metal", "CUDA"]
    for r in rows:
        # a pair's own rows_half meets it; the others' misses by less than ignoring the shape
        assert r.others_ape < r.without_shape_ape
        assert r.moe_without_shape_tok_s > r.moe_measured_tok_s  # without it, every MoE prefill is too fast


def test_walk_says_how_narrow_an_experts_products_are(project_root):
    run = [sys.executable, "-m", "tokenwalk", "walk", "--machine", "laptop-860m", "--prompt-tokens", "2900",
           "--output-tokens", "8"]
    moe = subprocess.run(run + ["--model", "qwen3.6-35b-a3b"], capture_output=True, text=True, cwd=project_root)
    dense = subprocess.run(run + ["--model", "qwen3.8-27b"], capture_output=True, text=True, cwd=project_root)
    assert moe.returncode == 0 and dense.returncode == 0, moe.stderr + dense.stderr
    assert "6 chunks of 512, 16 rows an expert (shape: Vulkan/AMD); KV written" in moe.stdout
    assert "rows an expert" not in dense.stdout


def test_a_mixture_without_an_expert_width_is_priced_from_its_expert_bytes():
    """A spec that gives no expert width (Mixtral-like: its experts' bytes follow from the file
    and the bytes a token reads, `moe.routed_expert_bytes`) still has narrow products: 8
    experts, 2 used, 512 tokens -> 128 rows each, its routed operations from those bytes."""
    from tokenwalk.physics import moe

    spec = {"name": "mixtral-like", "params": 46.7e9, "active_params": 12.9e9, "size_bytes": 26.4e9, "layers": 32,
            "embedding_length": 4096, "head_count": 32, "head_count_kv": 8, "head_dim": 128, "vocab_size": 32000,
            "expert_count": 8, "expert_used_count": 2, "bytes_read_per_token": 7.6e9, "tied_embeddings": False}
    mixtral = _model(spec)
    assert prefill_shape.expert_rows(mixtral, 512) == pytest.approx(128.0)
    assert prefill_shape.routed_expert_flops(mixtral, 1) == pytest.approx(
        2 * moe.expert_bytes_per_token(mixtral) * 8 / mixtral.bits_per_weight)
    timed = timing_model.machine_timing(mixtral, load_machine("rtx-5090"))
    assert timed.shape_pair == "CUDA"
    step, plain = timed.prompt_step(512), roofline.prompt_step(mixtral, timed.peaks, 512)
    assert step.compute_s > plain.compute_s
