"""The timing model on machines it has never seen: the headline of the
leave-one-family-out check is printed by `tokenwalk validate --summary`, quoted by the README
and the article from the fit file, never by hand; a machine written from a spec sheet (a JSON
file, or the simulator's "your own numbers") picks its row of the fit by backend and kind of
device, with the same hints in the README and the form."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tokenwalk import format as fmt
from tokenwalk.errors import TokenwalkError
from tokenwalk.specs.machine import BACKENDS, DEVICE_CLASSES, FIELD_HINTS, MEMORY_KINDS, VENDORS
from tokenwalk.timing import model as timing_model

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "timing_validation.json"


def _summary_lines() -> list[str]:
    from tokenwalk.cli.validate import shape_check_lines, size_check_lines, summary_lines

    return summary_lines(timing_model.unseen_machine_summary()) + size_check_lines() + shape_check_lines()


def test_the_summary_is_the_recorded_leave_one_family_out():
    """The headline is the golden leave-one-family-out numbers, overall per phase."""
    s = timing_model.unseen_machine_summary()
    lofo = json.loads(GOLDEN.read_text(encoding="utf-8"))["leave_one_family_out"]
    assert (s["decode_median_ape"], s["decode_p90_ape"]) == (lofo["decode"]["median_ape"], lofo["decode"]["p90_ape"])
    assert (s["prefill_median_ape"], s["prefill_p90_ape"]) == (lofo["prefill"]["median_ape"], lofo["prefill"]["p90_ape"])
    assert (s["decode_coverage"], s["prefill_coverage"]) == (lofo["decode_coverage"], lofo["prefill_coverage"])
    assert s["families"] == lofo["decode"]["families"] and s["decode_runs"] == lofo["decode"]["runs"]


def test_validate_summary_prints_each_number_beside_its_target(capsys):
    """`tokenwalk validate --summary` refits nothing and says, per target, met or not met,
    as the numbers decide (a stand-in fit with a decode median of 5 % and p90 of 40 %)."""
    from tokenwalk.cli import main
    from tokenwalk.cli.validate import summary_lines

    assert main(["validate", "--summary"]) == 0
    assert capsys.readouterr().out.splitlines() == _summary_lines()
    standin = {"structure": "x", "families": 3, "decode_runs": 10, "prefill_runs": 4, "decode_median_ape": 0.05,
               "decode_p90_ape": 0.40, "prefill_median_ape": 0.25, "prefill_p90_ape": 0.9,
               "decode_coverage": 0.80, "prefill_coverage": 0.70}
    text = "\n".join(summary_lines(standin))
    assert "median error 5.0 % (target 7 %, met), p90 40.0 % (target 30 %, not met)" in text
    assert "median error 25.0 % (target 20 %, not met)" in text
    assert "holds 80 % of decode runs, 70 % of prefill runs (target 75-85 %, not met)" in text
    assert "year trend" not in text
    trend = {"per_year": 0.04, "reference_year": 2022, "range_p10_p90": [0.02, 0.05]}
    assert summary_lines(dict(standin, year_trend=trend))[-1] == (
        "  year trend: bandwidth efficiency x exp(0.040 x (family year - 2022)); "
        "rate 0.020-0.050 over resampled families (10-90 %)")
    levelling = dict(trend, reference_year=2021, until_year=2021)
    assert summary_lines(dict(standin, year_trend=levelling, trend_until_year={"2021": 18, "2022": 4}))[-1] == (
        "  year trend: bandwidth efficiency x exp(0.040 x (min(family year, 2021) - 2021)); "
        "rate 0.020-0.050 over resampled families (10-90 %); levels off in 2021 in 18 of 22 left-out fits")
    twins = {"runs": 42, "chips": 30, "groups": 13, "median_ape": 0.0522, "p90_ape": 0.2007}
    assert summary_lines(dict(standin, decode_twin_spread=twins))[-1] == (
        "  floor: 42 decode runs of 30 cards the model is told the same things about (13 groups) sit a "
        "median 5.2 % (p90 20.1 %) from their group's mean speed")
    assert summary_lines(dict(standin, decode_twin_spread={"runs": 0})) == summary_lines(standin)


def test_the_readme_quotes_the_build_not_a_hand():
    """The README's timing block is `tokenwalk validate --summary`'s output, line for line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*Timing model\*\* \(`tokenwalk validate --summary`.*?```\n(.*?)```", readme, re.S)
    assert block, "README: the timing block after **Timing model** (`tokenwalk validate --summary` ...) is missing"
    assert block.group(1).splitlines() == _summary_lines()


def test_the_article_quotes_the_fit_through_the_namespace():
    """article.numbers.fit names the summary's numbers; chapter 7 prints every one of them."""
    from article.numbers import fit

    n = fit.names(None, {})
    s = timing_model.unseen_machine_summary()
    assert n["fit_unseen_decode_error_median_share"] == s["decode_median_ape"]
    assert n["fit_unseen_decode_error_p90_share"] == s["decode_p90_ape"]
    assert n["fit_unseen_prefill_error_median_share"] == s["prefill_median_ape"]
    assert n["fit_unseen_decode_range_coverage_share"] == s["decode_coverage"]
    assert n["fit_unseen_prefill_range_coverage_share"] == s["prefill_coverage"]
    chapter = (ROOT / "content" / "07-numbers.md").read_text(encoding="utf-8")
    for name in n:
        if name not in ("fit_unseen_decode_runs", "fit_unseen_prefill_runs"):
            assert f"n.{name}" in chapter, name


def test_the_readme_and_the_form_give_the_same_hints():
    """Each field a machine of one's own needs has one hint (tokenwalk.specs.machine.FIELD_HINTS),
    written in the README's Machine JSON section and shown by the simulator's form."""
    from figures import simulator

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Machine JSON"):readme.index("## Measured")]
    inputs = {"defaults": {"model": "m", "machine": "laptop", "prompt_tokens": 10, "output_tokens": 1, "num_ctx": None,
                           "kv_type": "f16", "chunk_tokens": 512, "warm": False, "users": 1, "spec_alpha": None,
                           "spec_gamma": None},
              "models": [{"name": "m", "title": "M"}],
              "machines": [{"name": "laptop", "title": "Laptop", "bandwidth_gbs": 128, "fp16_tflops": 6, "memory_gb": 64}],
              "kv_types": ["f16"], "backends": [["", "Not known"]] + [[b, b] for b in BACKENDS],
              "vendors": [["", "Not known"]] + [[v, v] for v in VENDORS],
              "device_classes": [["", "Not known"]] + [[c, c] for c in DEVICE_CLASSES],
              "memory_types": [["", "Not known"]] + [[k, k] for k in MEMORY_KINDS], "hints": dict(FIELD_HINTS)}
    form = simulator.form_html(inputs)
    for field, hint in FIELD_HINTS.items():
        assert f"`{field}`: {hint}" in section, field
        # the form sets the same words with the prose's quotes (the spec sheet’s)
        assert f'id="tw-sim-{field}-hint">{html.escape(fmt.typeset(hint))}</span>' in form, field
    for backend in BACKENDS:
        assert f'<option value="{backend}">' in form
    for device_class in DEVICE_CLASSES:
        assert f'<option value="{device_class}">' in form
    assert set(FIELD_HINTS) >= {"backend", "vendor", "device_class", "memory_type", "architecture_year"}
    assert "seven fields can set its timing" in section and len(FIELD_HINTS) == 7
    for vendor in VENDORS:
        assert f'<option value="{vendor}">' in form
    assert ('<select id="tw-sim-vendor" name="vendor" aria-describedby="tw-sim-vendor-hint">'
            '<option value="" selected>Not known</option>') in form
    assert '<label for="tw-sim-vendor">Chip maker</label>' in form
    assert form.index('id="tw-sim-backend"') < form.index('id="tw-sim-vendor"') < form.index('id="tw-sim-device_class"')
    for kind in MEMORY_KINDS:
        assert f'<option value="{kind}">' in form
    assert f"The form offers {', '.join(MEMORY_KINDS[:-1])} and {MEMORY_KINDS[-1]};" in section
    assert ('<select id="tw-sim-memory_type" name="memory_type" aria-describedby="tw-sim-memory_type-hint">'
            '<option value="" selected>Not known</option>') in form
    assert '<label for="tw-sim-memory_type">Memory type</label>' in form


def test_what_the_readme_says_of_maker_and_memory_rows_is_the_fits():
    """The README and the form say what `vendor` and `memory_type` do with the current fit:
    the README names every row per maker the fit has (today Vulkan's), and the shared hint says
    memory type changes nothing exactly when the fit has no HBM row. A refit that adds or drops
    such rows fails here until the words follow it."""
    rows = timing_model.load_fit()["backends"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Machine JSON"):readme.index("## Measured")]
    vendor_rows = sorted(key for key in rows if key.rpartition("/")[2] in VENDORS)
    bullet = section[section.index("- `vendor`:"):section.index("- `device_class`:")]
    assert re.findall(r'"(\w+/\w+)"', bullet) == vendor_rows
    backends = sorted({key.partition("/")[0] for key in vendor_rows})
    assert f"today the {' and '.join(backends)} rows" in bullet
    no_hbm = not any(key.endswith("/HBM") for key in rows)
    assert ("the current fit has none, so it changes nothing today" in FIELD_HINTS["memory_type"]) == no_hbm


def test_backend_and_kind_of_a_custom_machine_choose_the_fit_row():
    """A custom machine said to be a discrete card under ROCm is timed on the fit's
    ROCm/discrete row (names matched without regard to case); left empty, on the default row;
    anything else is one line naming the field."""
    from tokenwalk_app.entry import settings_from_form, simulate

    form = {"model": "qwen3.6-35b-a3b", "machine": "custom", "prompt_tokens": "512", "output_tokens": "16",
            "bandwidth_gbs": "624", "fp16_tflops": "74.6", "memory_gb": "16"}
    fit_rows = timing_model.load_fit()["backends"]
    settings = settings_from_form(dict(form, backend="rocm", device_class="Discrete"))
    assert (settings["backend"], settings["device_class"]) == ("ROCm", "discrete")
    walk = simulate(settings)
    expected = timing_model.row_key(fit_rows, "ROCm", "discrete")
    assert expected == "ROCm/discrete" and walk["efficiency"]["decode"]["from"] == f"fitted: {expected}"
    plain = simulate(settings_from_form(dict(form, backend="", device_class="")))
    assert plain["efficiency"]["decode"]["from"] == "fitted: default"
    assert walk["decode_tok_s"] != plain["decode_tok_s"]
    with pytest.raises(TokenwalkError, match=r"^backend: one of CUDA, ROCm, Vulkan, Metal, SYCL, CPU or empty, not 'OpenCL'$"):
        settings_from_form(dict(form, backend="OpenCL"))
    with pytest.raises(TokenwalkError, match=r"^kind of device: one of integrated, discrete, datacentre or empty"):
        settings_from_form(dict(form, device_class="laptop"))


def test_the_simulator_says_in_one_line_what_likely_means():
    """Under the numbers of a machine the fit has not measured: the stated share and the
    coverage the fit recorded on left-out families; none for the calibrated laptop."""
    from tokenwalk import format as fmt
    from tokenwalk_app.entry import settings_from_form, simulate
    from tokenwalk_app.view import numbers_html

    s = timing_model.unseen_machine_summary()
    form = {"model": "qwen3.6-35b-a3b", "prompt_tokens": "512", "output_tokens": "16"}
    unseen = numbers_html(simulate(settings_from_form(dict(form, machine="rtx-5090"))))
    note = re.findall(r'<p class="tw-sub tw-sim-band">(.*?)</p>', unseen)
    assert len(note) == 1 and "meant to hold 8 runs in 10" in note[0]
    assert f"held {html.escape(fmt.pct(s['decode_coverage']))} of decode" in note[0]
    assert f"{html.escape(fmt.pct(s['prefill_coverage']))} of prefill runs" in note[0]
    laptop = numbers_html(simulate(settings_from_form(dict(form, machine="laptop-860m"))))
    assert "tw-sim-band" not in laptop


def test_the_year_of_the_chip_family_scales_the_bandwidth_efficiency():
    """Formula on a stand-in trend: exp(per_year x (year - reference)); no year, no trend: 1;
    a trend that levels off counts every later year as its last."""
    import math

    trend = {"year_trend": {"per_year": 0.05, "reference_year": 2020}}
    assert timing_model.year_factor(trend, 2022) == pytest.approx(math.exp(0.10))
    assert timing_model.year_factor(trend, 2016) == pytest.approx(math.exp(-0.20))
    assert timing_model.year_factor(trend, None) == 1.0 and timing_model.year_factor({}, 2022) == 1.0
    levelling = {"year_trend": {"per_year": 0.05, "reference_year": 2021, "until_year": 2021}}
    assert timing_model.year_factor(levelling, 2016) == pytest.approx(math.exp(-0.25))
    assert timing_model.year_factor(levelling, 2021) == timing_model.year_factor(levelling, 2025) == 1.0
    assert timing_model.year_trend_formula(levelling["year_trend"]) == "exp(0.050 x (min(family year, 2021) - 2021))"
    assert timing_model.year_trend_formula(trend["year_trend"]) == "exp(0.050 x (family year - 2020))"


def test_a_custom_machine_with_its_family_year_is_timed_on_the_trend():
    """The form's year reaches the machine: a newer family decodes faster by the fit's trend
    (when the chosen structure has one); a year outside the schema's domain is one line."""

    from tokenwalk_app.entry import settings_from_form, simulate

    form = {"model": "qwen3.6-35b-a3b", "machine": "custom", "prompt_tokens": "512", "output_tokens": "16",
            "bandwidth_gbs": "624", "fp16_tflops": "74.6", "memory_gb": "16", "backend": "CUDA",
            "device_class": "discrete"}
    trend = timing_model.load_fit().get("year_trend")
    without = simulate(settings_from_form(form))
    settings = settings_from_form(dict(form, architecture_year="2016"))
    assert settings["architecture_year"] == 2016 and "architecture_year" not in settings_from_form(form)
    with_year = simulate(settings)
    if trend:
        # a year before the trend levels off (if it does): an older family reaches a smaller share
        factor = timing_model.year_factor(timing_model.load_fit(), 2016)
        assert factor != 1 and with_year["decode_tok_s"] != without["decode_tok_s"]
        assert (with_year["decode_tok_s"] > without["decode_tok_s"]) == (factor > 1)
    with pytest.raises(TokenwalkError, match=r"^year of the chip family"):
        settings_from_form(dict(form, architecture_year="1492"))


def test_a_card_with_hbm_takes_the_fits_hbm_row():
    """A machine whose memory_type is HBM (the H100 preset's HBM3) is timed on the fit's
    CUDA/HBM row where the chosen structure has one; a data-centre card with GDDR stays on
    its class's row, and a fit without HBM rows keeps every card on its class's row."""
    from tokenwalk.specs.machine import load_machine

    rows = timing_model.load_fit()["backends"]
    assert timing_model.is_hbm("HBM2e") and timing_model.is_hbm("hbm3") and not timing_model.is_hbm("GDDR6X")
    assert not timing_model.is_hbm(None)
    hbm_key = timing_model.row_key(rows, "CUDA", "datacentre", None, "HBM3")
    gddr_key = timing_model.row_key(rows, "CUDA", "datacentre", None, "GDDR6")
    if "CUDA/HBM" in rows:
        assert hbm_key == "CUDA/HBM" and gddr_key == "CUDA/datacentre"
        h100 = load_machine("h100-sxm")
        assert h100.memory_type == "HBM3" and timing_model.coefficients(h100).row == "CUDA/HBM"
    without = {k: v for k, v in rows.items() if not k.endswith("/HBM")}
    assert timing_model.row_key(without, "CUDA", "datacentre", None, "HBM3") == "CUDA/datacentre"


def test_the_memory_type_of_a_custom_machine_chooses_the_hbm_row():
    """The form's memory type reaches the machine: a CUDA data-centre card said to have HBM is
    timed on the fit's HBM row for CUDA (where the fit has one: a prediction other than the
    same card's without it), with GDDR or none given on its class's row; names are matched
    without regard to case, an empty one is left out, anything else is one line naming the field."""
    from tokenwalk_app.entry import settings_from_form, simulate

    form = {"model": "qwen3.6-35b-a3b", "machine": "custom", "prompt_tokens": "512", "output_tokens": "16",
            "bandwidth_gbs": "3350", "fp16_tflops": "989", "memory_gb": "80", "backend": "CUDA",
            "device_class": "datacentre"}
    rows = timing_model.load_fit()["backends"]
    settings = settings_from_form(dict(form, memory_type="hbm"))
    assert settings["memory_type"] == "HBM"
    assert "memory_type" not in settings_from_form(dict(form, memory_type=" "))
    assert settings_from_form(settings) == settings, "the settings the page puts in its URL read back the same"
    hbm = simulate(settings)
    plain = simulate(settings_from_form(form))
    gddr = simulate(settings_from_form(dict(form, memory_type="GDDR")))
    expected = timing_model.row_key(rows, "CUDA", "datacentre", None, "HBM")
    assert hbm["efficiency"]["decode"]["from"] == f"fitted: {expected}"
    assert plain["efficiency"]["decode"]["from"] == gddr["efficiency"]["decode"]["from"] == "fitted: CUDA/datacentre"
    assert gddr["decode_tok_s"] == plain["decode_tok_s"] and gddr["ttft_s"] == plain["ttft_s"]
    if "CUDA/HBM" in rows:
        assert expected == "CUDA/HBM" and hbm["decode_tok_s"] != plain["decode_tok_s"]
    for kind in MEMORY_KINDS:
        assert timing_model.is_hbm(settings_from_form(dict(form, memory_type=kind))["memory_type"]) == (kind == "HBM")
    with pytest.raises(TokenwalkError, match=r"^memory type: one of HBM, GDDR, LPDDR, DDR or empty, not 'SRAM'$"):
        settings_from_form(dict(form, memory_type="SRAM"))
    with pytest.raises(TokenwalkError, match=r"^memory type: one of HBM, GDDR, LPDDR, DDR or empty, not 'HBM3'$"):
        settings_from_form(dict(form, memory_type="HBM3"))


def test_a_machine_file_naming_its_maker_takes_the_fits_vendor_row(tmp_path):
    """A machine file's `vendor` reaches the row choice: a Vulkan card said to be Intel's is
    timed on the fit's Vulkan/Intel row (the published runs' Arc cards), and decodes at another
    speed than the same card without a maker (its class's row, Vulkan/discrete)."""
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.specs.model import load_model

    rows = timing_model.load_fit()["backends"]
    spec = {"name": "arc", "bandwidth_gbs": 456, "fp16_tflops": 39.3, "memory_gb": 12, "backend": "Vulkan",
            "device_class": "discrete", "architecture_year": 2022}
    (tmp_path / "plain.json").write_text(json.dumps(spec))
    (tmp_path / "intel.json").write_text(json.dumps(dict(spec, vendor="Intel")))
    plain, intel = load_machine(tmp_path / "plain.json"), load_machine(tmp_path / "intel.json")
    assert intel.vendor == "Intel" and plain.vendor is None
    model = load_model("qwen3.6-35b-a3b")
    expected = timing_model.row_key(rows, "Vulkan", "discrete", "Intel")
    assert timing_model.coefficients(intel, model=model).row == expected
    assert timing_model.coefficients(plain, model=model).row == timing_model.row_key(rows, "Vulkan", "discrete")
    if "Vulkan/Intel" in rows:
        assert expected == "Vulkan/Intel"
        assert timing_model.decode_step_s(model, intel, 512) != timing_model.decode_step_s(model, plain, 512)


def test_the_chip_maker_of_a_custom_machine_chooses_the_vendor_row():
    """The form's chip maker reaches the machine: a discrete Vulkan card said to be Intel's is
    timed on the fit's Vulkan/Intel row (where the fit has one: a prediction other than the same
    card's without a maker, on Vulkan/discrete); under a backend without rows per maker the maker
    changes nothing; names are matched without regard to case, an empty one is left out, anything
    else is one line naming the field."""
    from tokenwalk.specs.machine import VENDORS
    from tokenwalk_app.entry import settings_from_form, simulate

    form = {"model": "qwen3.6-35b-a3b", "machine": "custom", "prompt_tokens": "512", "output_tokens": "16",
            "bandwidth_gbs": "456", "fp16_tflops": "39.3", "memory_gb": "12", "backend": "Vulkan",
            "device_class": "discrete"}
    rows = timing_model.load_fit()["backends"]
    settings = settings_from_form(dict(form, vendor="intel"))
    assert settings["vendor"] == "Intel"
    assert "vendor" not in settings_from_form(dict(form, vendor=" "))
    assert settings_from_form(settings) == settings, "the settings the page puts in its URL read back the same"
    intel = simulate(settings)
    plain = simulate(settings_from_form(form))
    expected = timing_model.row_key(rows, "Vulkan", "discrete", "Intel")
    assert intel["efficiency"]["decode"]["from"] == f"fitted: {expected}"
    assert plain["efficiency"]["decode"]["from"] == "fitted: Vulkan/discrete"
    if "Vulkan/Intel" in rows:
        assert expected == "Vulkan/Intel" and intel["decode_tok_s"] != plain["decode_tok_s"]
    for vendor in VENDORS:
        assert settings_from_form(dict(form, vendor=vendor.upper()))["vendor"] == vendor
    rocm = dict(form, backend="ROCm")
    if not any(key.startswith("ROCm/") and key.split("/")[1] in VENDORS for key in rows):
        assert simulate(settings_from_form(dict(rocm, vendor="AMD"))) == simulate(settings_from_form(rocm))
    with pytest.raises(TokenwalkError, match=r"^chip maker: one of AMD, Apple, Intel, NVIDIA or empty, not 'Lenovo'$"):
        settings_from_form(dict(form, vendor="Lenovo"))


def test_a_custom_cpu_is_timed_on_the_cpu_row_and_told_what_its_figure_is():
    """A reader's own CPU (backend CPU, its cores' FP32 peak in the compute field, as the hint
    says) takes the fit's CPU row, and the walk's assumptions name the figure for what it is."""
    from tokenwalk_app.entry import explain, settings_from_form, simulate

    walk = simulate(settings_from_form({"model": "qwen2.5-coder-0.5b", "machine": "custom", "bandwidth_gbs": "89.6",
                                        "fp16_tflops": "1.33", "memory_gb": "64", "backend": "CPU",
                                        "prompt_tokens": "512", "output_tokens": "16"}))
    assert walk["efficiency"]["prefill"]["from"] == "fitted: CPU"
    assert walk["efficiency"]["prefill"]["of"] == "the cores' FP32 vector peak"
    cpu_row = timing_model.load_fit()["backends"]["CPU"]
    assert cpu_row["prefill_from"] == "fitted" and cpu_row["prefill_machines"] >= 2
    (prefill,) = [a for a in explain(walk)["assumed"] if a.startswith("prefill's")]
    assert "of the cores' FP32 vector peak" in prefill and "FP16" not in prefill
    # nothing is copied into a GPU's memory on the way in
    (load,) = [s for s in walk["stages"] if s["name"] == "load"]
    assert load["why"].startswith("not measured") and "GPU" not in load["why"]
