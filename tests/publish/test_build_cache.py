"""The figure cache: an unchanged key is reused; changing the data one figure reads
re-renders that figure only; --force renders all; the summary says which."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.build import build_fixture, copy_fixture

# whole builds of the fixture site, several per test: 16 s of the fast set; `make test` runs them, `make check` leaves them out
pytestmark = pytest.mark.slow

FAKE = '''
import json
from pathlib import Path

ID = "{id}"
KIND = "S"
RENDERER = "svg"
ALT = "A fake figure for the cache test."
HERE = Path(__file__).parent


def inputs(ctx):
    return json.loads((HERE / "{id}.json").read_text())


def render(inputs, out):
    with open(HERE / "renders.log", "a") as log:
        log.write(ID + "\\n")
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><text x="1" y="9">'
            + str(inputs["value"]) + '</text></svg>')
'''


@pytest.fixture
def fakes(tmp_path):
    src = copy_fixture(tmp_path)
    figures = tmp_path / "fake-figures"
    figures.mkdir()
    for fig_id, value in (("alpha", 1), ("beta", 2), ("gamma", 3)):
        (figures / f"{fig_id}.py").write_text(FAKE.format(id=fig_id))
        (figures / f"{fig_id}.json").write_text(json.dumps({"value": value}))
    return src, figures, tmp_path


def build(src, figures, tmp, *extra):
    result = build_fixture(src, tmp / "site", tmp / "cache", "--figures", figures, *extra)
    assert result.returncode == 0, result.stderr
    log = figures / "renders.log"
    renders = log.read_text().split() if log.exists() else []
    if log.exists():
        log.unlink()
    return result.stdout, renders


def summary_counts(stdout):
    match = re.search(r"(\d+) figures: (\d+) rendered(?: \(([^)]*)\))?, (\d+) cached", stdout)
    return int(match.group(2)), (match.group(3) or ""), int(match.group(4))


def test_cold_then_noop_then_one_data_file_changes(fakes):
    src, figures, tmp = fakes
    stdout, renders = build(src, figures, tmp)
    assert renders == ["alpha", "beta", "gamma"]
    assert summary_counts(stdout) == (3, "alpha, beta, gamma", 0)
    assert re.search(r"figure alpha\s+rendered\s+\d+\.\d\d s", stdout)

    stdout, renders = build(src, figures, tmp)
    assert renders == []
    assert summary_counts(stdout) == (0, "", 3)
    assert re.search(r"figure beta\s+cached", stdout)

    (figures / "beta.json").write_text(json.dumps({"value": 20}))
    stdout, renders = build(src, figures, tmp)
    assert renders == ["beta"]
    assert summary_counts(stdout) == (1, "beta", 2)


def test_changing_module_source_or_helpers_rerenders(fakes):
    src, figures, tmp = fakes
    build(src, figures, tmp)
    with open(figures / "gamma.py", "a") as f:
        f.write("\n# a comment changes the source, so the key\n")
    assert build(src, figures, tmp)[1] == ["gamma"]
    (figures / "_shared.py").write_text("COLOUR = 'bus'\n")  # a helper no figure imports yet
    assert build(src, figures, tmp)[1] == []
    with open(figures / "beta.py", "a") as f:
        f.write("\n\ndef _colour():\n    from ._shared import COLOUR\n    return COLOUR\n")
    assert build(src, figures, tmp)[1] == ["beta"]
    (figures / "_shared.py").write_text("COLOUR = 'compute'\n")  # now only its importer re-renders
    assert build(src, figures, tmp)[1] == ["beta"]


def test_force_renders_everything(fakes):
    src, figures, tmp = fakes
    build(src, figures, tmp)
    stdout, renders = build(src, figures, tmp, "--force")
    assert renders == ["alpha", "beta", "gamma"]
    assert summary_counts(stdout)[0] == 3


def test_going_back_to_old_inputs_reuses_the_old_rendering(fakes):
    src, figures, tmp = fakes
    build(src, figures, tmp)
    (figures / "alpha.json").write_text(json.dumps({"value": 10}))
    assert build(src, figures, tmp)[1] == ["alpha"]
    (figures / "alpha.json").write_text(json.dumps({"value": 1}))
    assert build(src, figures, tmp)[1] == []


def test_figure_html_reaches_the_page_when_the_article_uses_it(fakes):
    src, figures, tmp = fakes
    chapter = src / "content" / "02-more.md"
    chapter.write_text(chapter.read_text() + "\n::: figure beta\nThe beta figure (fake).\n:::\n")
    build(src, figures, tmp)
    (figures / "beta.json").write_text(json.dumps({"value": 42}))
    build(src, figures, tmp)
    html = (tmp / "site" / "index.html").read_text()
    assert re.search(r'<figure id="fig-beta".*?>42</text>', html, re.S)


def test_a_helper_counts_for_the_figures_that_import_it_only():
    """Touching figures/_plot.py changes the keys of the matplotlib figures and no others;
    the Manim figures' keys cover their scene modules, imported by render() only; the
    interactive figures' keys cover the tokenwalk views that draw them."""
    from publish.registry import PROJECT, helper_modules

    folder = PROJECT / "figures"
    helpers = {p.stem: {h.relative_to(PROJECT).as_posix() for h in helper_modules(p)}
               for p in sorted(folder.glob("*.py")) if not p.name.startswith("_")}
    assert {fig for fig, used in helpers.items() if "figures/_plot.py" in used} == {"balance_point", "bandwidth_share"}
    assert "figures/_svg.py" in helpers["balance_point"]  # through _plot.py
    for fig in ("decode_head", "kv_cache", "residual_layer"):
        scenes = {h for h in helpers[fig] if h.startswith("figures/scenes/")}
        assert scenes == {f"figures/scenes/{fig}.py", "figures/scenes/base.py", "figures/scenes/__init__.py"}, fig
        assert "figures/_manim.py" in helpers[fig]
    assert {h for h in helpers["tile"] if h.startswith("figures/")} == {"figures/__init__.py", "figures/_svg.py"}
    assert "tokenwalk_app/quant_view.py" in helpers["quantization"]
    assert "tokenwalk_app/view.py" in helpers["simulator"]
    assert "tokenwalk/format.py" in helpers["chunked_prefill"]


def test_helper_modules_follow_relative_and_absolute_imports(tmp_path):
    from publish.registry import helper_modules

    pkg = tmp_path / "figs"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "_a.py").write_text("from ._b import X\n")
    (pkg / "_b.py").write_text("X = 1\n")
    (pkg / "_c.py").write_text("Y = 2\n")  # imported by nobody
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "scene.py").write_text("from .. import _c\nfrom figs._a import X\n")
    (pkg / "fig.py").write_text("import json\n\ndef render():\n    from figs.sub.scene import S\n")
    (pkg / "other.py").write_text("from . import _a\n")

    def names(path):
        return sorted(h.relative_to(pkg).as_posix() for h in helper_modules(path, "figs"))

    assert names(pkg / "fig.py") == ["_a.py", "_b.py", "_c.py", "sub/__init__.py", "sub/scene.py"]
    assert names(pkg / "other.py") == ["_a.py", "_b.py"]


def test_renderer_version_joins_the_key():
    import matplotlib

    from publish.registry import renderer_version
    assert renderer_version("matplotlib") == f"matplotlib=={matplotlib.__version__}"
    assert renderer_version("svg") == "svg"


def test_shared_svg_style_stays_with_the_first_figure_on_the_page(fakes):
    """Repeated <style> blocks are dropped in page order: a figure that is rendered but
    not on the page never takes the style away from one that is."""
    src, figures, tmp = fakes
    for fig_id in ("alpha", "beta", "gamma"):
        path = figures / f"{fig_id}.py"
        styled = 'viewBox="0 0 10 10"><style>.x{fill:red}</style>'
        path.write_text(path.read_text().replace('viewBox="0 0 10 10">', styled))
    chapter = src / "content" / "02-more.md"
    chapter.write_text(chapter.read_text() + "\n::: figure gamma\nG.\n:::\n\n::: figure beta\nB.\n:::\n")
    build(src, figures, tmp)
    html = (tmp / "site" / "index.html").read_text()
    gamma = re.search(r'<figure id="fig-gamma".*?</figure>', html, re.S).group(0)
    beta = re.search(r'<figure id="fig-beta".*?</figure>', html, re.S).group(0)
    assert "<style>.x{fill:red}</style>" in gamma
    assert "<style>" not in beta
