"""Figures 4 residual-layer, 7 decode-head and 8 kv-cache render with Manim at low quality:
two WebP stills (light, dark) at the stated size, nothing cut off at the edges, and a
<picture> whose width/height match the canvas. The build renders them at full quality."""

from __future__ import annotations

import importlib
import re

import pytest

from figures import _manim
from tests.support.context import default_context

MODULES = ["residual_layer", "decode_head", "kv_cache"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MODULES)
def test_renders_light_and_dark_at_low_quality(name, tmp_path):
    from PIL import Image

    m = importlib.import_module(f"figures.{name}")
    inputs = m.inputs(default_context())
    html = m.render(inputs, tmp_path, quality="low")

    scale = _manim.QUALITIES["low"]
    want = (round(m.CANVAS.width_px * scale), round(m.CANVAS.height_px * scale))
    files = {theme: tmp_path / f"{m.ID}-{theme}.webp" for theme in _manim.THEMES}
    bgs = {}
    for theme, path in files.items():
        assert path.is_file(), f"{path.name} not written"
        with Image.open(path) as im:
            assert im.format == "WEBP"
            assert im.size == want
            rgb = im.convert("RGB")
        bg = tuple(int(_manim.THEMES[theme]["bg"][i:i + 2], 16) for i in (1, 3, 5))
        w, h = rgb.size
        # nothing drawn on the outermost pixels: the layout fits the canvas
        edge = [rgb.getpixel((x, y)) for x in range(w) for y in (0, h - 1)]
        edge += [rgb.getpixel((x, y)) for y in range(h) for x in (0, w - 1)]
        assert all(max(abs(a - b) for a, b in zip(px, bg, strict=False)) <= 3 for px in edge), f"{theme}: drawing touches the edge"
        # and something is drawn: many pixels differ from the background
        colours = rgb.getcolors(maxcolors=1 << 20)
        assert len(colours) > 50
        bgs[theme] = sum(bg)
    assert bgs["dark"] < bgs["light"]

    # the HTML: a <picture> with the dark <source>, the light <img>, CSS sizes and alt
    assert html.startswith("<picture")
    if name == "kv_cache":  # and its optional animation: nothing loads until played
        video = re.search(r"<video [^>]*>", html).group(0)
        assert 'preload="none"' in video
        assert (tmp_path / f"{m.ID}-animation.mp4").stat().st_size > 1000
        assert (tmp_path / f"{m.ID}-animation-poster.webp").is_file()
        assert f'width="{m.ANIMATION_CANVAS.width_px}"' in video
        assert html.index("<video") > html.index("<details")
    assert re.search(r'<source[^>]*media="\(prefers-color-scheme: dark\)"[^>]*srcset="figures/%s/%s"'
                     % (m.ID, files["dark"].name), html)
    img = re.search(r"<img [^>]*>", html).group(0)
    assert f'src="figures/{m.ID}/{files["light"].name}"' in img
    assert f'width="{m.CANVAS.width_px}"' in img and f'height="{m.CANVAS.height_px}"' in img
    assert "GPT-3" in img and "not Qwen" in img


@pytest.mark.slow
def test_subprocess_render_matches_size(tmp_path):
    """The helper can render a still in a fresh interpreter (keeps Manim's state out)."""
    from PIL import Image

    from figures.scenes.kv_cache import KVCacheScene

    m = importlib.import_module("figures.kv_cache")
    out = tmp_path / "still.png"
    size = _manim.render_still(KVCacheScene, m.inputs(default_context()), out, canvas=m.CANVAS, theme="dark",
                               quality="low", subprocess=True)
    with Image.open(out) as im:
        assert im.size == size == (m.CANVAS.width_px // 2, m.CANVAS.height_px // 2)
