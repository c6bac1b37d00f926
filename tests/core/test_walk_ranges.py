"""The walk (and so the simulator) gives a range from the timing model's
cross-validation error where the machine was not measured, and none where it was."""

import pytest

from tokenwalk.specs.machine import load_machine
from tokenwalk.specs.model import load_model
from tokenwalk.timing.model import SMALL_BAND_MIN_RUNS, below_fitted_sizes, error_band, load_fit, small_model_class
from tokenwalk.walk import Request, walk_request


def _walk(machine):
    return walk_request(load_model("qwen3.6-35b-a3b"), load_machine(machine),
                        Request(prompt_tokens=6500, output_tokens=300)).to_dict()


def test_unmeasured_machine_gets_the_cross_validation_band():
    walk = _walk("rtx-5090")
    d_low, d_high = error_band("decode")
    low, high = walk["ranges"]["decode_tok_s"]
    assert low == pytest.approx(walk["decode_tok_s"] / d_high)
    assert high == pytest.approx(walk["decode_tok_s"] / d_low)
    assert low < walk["decode_tok_s"] < high
    t_low, t_high = walk["ranges"]["ttft_s"]
    assert t_low < walk["ttft_s"] < t_high


def test_the_laptop_is_calibrated_on_its_measurements_so_no_band():
    walk = _walk("laptop-860m")
    assert walk["ranges"] is None and walk["range_basis"] is None


def _walk_model(model, machine="rtx-5090"):
    return walk_request(load_model(model), load_machine(machine), Request(prompt_tokens=6500, output_tokens=300)).to_dict()


@pytest.mark.parametrize("machine", ["rtx-5090", "m4-max"])
def test_a_model_smaller_than_any_fitted_gets_the_small_model_checks_band(machine):
    """SmolLM2 (0.13B) is smaller than every model the fit saw (Gemma 3 4B the smallest), so its
    likely range is the small-model check's 10th-90th percentile over the runs on the machine's
    class of device (a graphics card, an Apple chip sharing its memory), not the fitted sizes'
    band; the article's Qwen (35B in all) keeps the fitted sizes' band."""
    fit = load_fit()
    device_class = load_machine(machine).device_class
    for phase, key in (("decode", "decode_tok_s"), ("prefill", "prefill_tok_s")):
        small = fit["cross_validation"][f"{phase}_small_models_by_class"][device_class]
        walk = _walk_model("smollm2-135m", machine)
        assert walk["range_basis"] == "small models" and walk["range_class"] == device_class
        low, high = walk["ranges"][key]
        assert low == pytest.approx(walk[key] * small["speed_ratio_p10"])
        assert high == pytest.approx(walk[key] * small["speed_ratio_p90"])
    qwen = _walk_model("qwen3.6-35b-a3b", machine)
    assert qwen["range_basis"] == "fitted sizes" and qwen["range_class"] is None


def test_a_class_with_few_small_model_runs_takes_the_band_of_all_of_them():
    """A class of device sets its own small-model band only with SMALL_BAND_MIN_RUNS runs in
    each phase (fewer, and its percentiles are its extremes); else, or in a fit without the
    split, the band of all the small-model runs."""
    def summary(runs, low, high):
        return {"runs": runs, "speed_ratio_p10": low, "speed_ratio_p90": high}

    cv = {"decode_range": {"speed_ratio_low": 0.8, "speed_ratio_high": 1.25},
          "decode_small_models": summary(28, 0.5, 2.0), "prefill_small_models": summary(29, 0.5, 2.0),
          "decode_small_models_by_class": {"discrete": summary(9, 0.8, 1.6), "integrated": summary(19, 0.4, 1.0)},
          "prefill_small_models_by_class": {"discrete": summary(SMALL_BAND_MIN_RUNS - 1, 0.7, 1.2),
                                            "integrated": summary(21, 0.3, 1.0)}}
    fit = {"inputs": {"model_params_min": 3.88e9}, "cross_validation": cv}
    assert small_model_class("integrated", fit) == "integrated"
    assert small_model_class("discrete", fit) is None and small_model_class(None, fit) is None
    # bands are multipliers of a time: 1 / the speed ratios
    assert error_band("decode", fit, model_params=1e8, device_class="integrated") == pytest.approx((1.0, 2.5))
    assert error_band("decode", fit, model_params=1e8, device_class="discrete") == pytest.approx((0.5, 2.0))
    del cv["decode_small_models_by_class"], cv["prefill_small_models_by_class"]
    assert error_band("decode", fit, model_params=1e8, device_class="integrated") == pytest.approx((0.5, 2.0))


def test_below_fitted_sizes_reads_the_smallest_fitted_model():
    fit = {"inputs": {"model_params_min": 3.88e9}}
    assert below_fitted_sizes(1.35e8, fit) and not below_fitted_sizes(3.88e9, fit)
    assert not below_fitted_sizes(None, fit) and not below_fitted_sizes(1e8, {"inputs": {}})
    # a band from a fit without the small check is the fitted sizes' one
    cv = {"decode_range": {"speed_ratio_low": 0.8, "speed_ratio_high": 1.25}}
    assert error_band("decode", {"cross_validation": cv, **fit}, model_params=1e8) == pytest.approx((0.8, 1.25))


def test_the_band_note_names_the_small_model_check():
    from tokenwalk_app.view import numbers_html

    html = numbers_html(_walk_model("smollm2-135m"))
    assert "smaller than any the timing model was fitted on" in html and "0.1B-8B" in html
    assert "on graphics cards with their own memory" in html
    assert "on GPUs and CPUs that share system memory" in numbers_html(_walk_model("smollm2-135m", "m4-max"))
    assert "smaller than any" not in numbers_html(_walk_model("qwen3.6-35b-a3b"))
