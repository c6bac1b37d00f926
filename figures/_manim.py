"""Shared helpers for the Manim figures: themes, a pixel-based canvas, still rendering,
WebP compression and the <picture> markup.

Each Manim figure is a still image drawn at a fixed *CSS size* (say 640 x 960 CSS px). The
build renders it at `QUALITIES["full"]` = 2 device pixels per CSS pixel (sharp on
high-density screens); tests render at `QUALITIES["low"]` (half a pixel per CSS pixel) to
stay fast. The <img> always carries the CSS size, so the page reserves the right box
whatever the quality.

Why two opaque variants rather than one transparent image: the light image sits on the
light page and the dark one on the dark page; if a reader's manual theme toggle is not
wired to the images, an opaque card still reads (dark text on a transparent image over a
dark page would not). `THEMES` holds both palettes; the light one follows the light
fallbacks of `figures._svg.PALETTE` so schematics and scenes share colours.

Scenes lay out in CSS pixels from the top-left corner (`Canvas.at(x, y)`), because the
figures are designed for a page column, and set text in CSS pixels (`Canvas.text(s, 22)`).
A phone shows a 640 px still about 358 px wide, so no label is set below `MIN_LABEL_PX`.

Rendering happens in-process under `manim.tempconfig` (about a second per still at full
quality), or in a fresh interpreter with `subprocess=True` (isolates Manim's global
state; costs the Manim import, about 2 s).
"""

from __future__ import annotations

import html
import json
import os
import pathlib
import subprocess as _subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from figures._svg import PALETTE
from tokenwalk import format as fmt

FONT = "DejaVu Sans"  # installed by the Makefile (fonts-dejavu-core): same metrics everywhere
# DejaVu Sans cap height is 1493 units of a 2048-unit em: used to size text in CSS px.
FONT_CAP_HEIGHT_EM = 1493 / 2048
# The smallest type a still may set, in CSS px of its canvas: a 640 px still shown 358 px
# wide (a 390 px phone's column) scales it by 0.56, and 20 px becomes about 11 px there.
MIN_LABEL_PX = 20
CSS_PX_PER_UNIT = 80.0  # Manim units are arbitrary; 1 unit = 80 CSS px keeps numbers small
# Cairo strokes are stroke_width x 0.01 Manim units wide, so one CSS px of line is:
STROKE_PER_PX = 100 / CSS_PX_PER_UNIT

# device pixels per CSS pixel
QUALITIES = {"full": 2.0, "medium": 1.0, "low": 0.5}
QUALITY_ENV = "TOKENWALK_MANIM_QUALITY"  # the build may lower quality for previews

_LIGHT = {name: fallback for name, (_var, fallback) in PALETTE.items()}
_LIGHT.update({
    "bg": "#fdfdfb",           # the page's background, so the still has no visible edge
    "panel": "#f4f4f6",        # a faint card behind a group of elements
    "cell_old": "#c9c9d3",     # stored, unchanged
    "ink_on_accent": "#ffffff",
    "pos": "#2f6fb3",          # toy vector entries > 0
    "neg": "#d97706",          # toy vector entries < 0
    "halo": "#7b7b84",         # edge of the white lines, so they read on a white page
})
# The page's dark figure colours (content/static/style.css, --fig-* under data-theme="dark"),
# repeated here because a still cannot read CSS; the extra keys are the scenes' own.
_DARK = {
    "fg": "#e6e6e3",
    "muted": "#a3a3a8",
    "bg": "#16171a",
    "grid": "#3a3b41",
    "accent": "#fb923c",
    "bus": "#5b9be0",
    "compute": "#f0a63a",
    "kv": "#a78bfa",
    "wait": "#2c2d33",
    "free": "#222328",
    "system": "#6b7280",
    "weights": "#5b9be0",
    "mask": "#26272c",
    "highlight": "#7a5a12",
    "panel": "#202126",
    "cell_old": "#4a4b57",
    "ink_on_accent": "#16171a",
    "pos": "#5b9be0",
    "neg": "#f0a63a",
    "halo": "#16171a",
}
THEMES = {"light": _LIGHT, "dark": _DARK}


def quality_name(quality: str | None = None) -> str:
    """The quality to render at: `quality`, else $TOKENWALK_MANIM_QUALITY, else "full".

    Figures put it in their inputs(), so it joins the build's cache key: a preview built
    at low quality is never reused as the full-quality image.
    """
    name = quality or os.environ.get(QUALITY_ENV) or "full"
    if name not in QUALITIES:
        raise ValueError(f"unknown Manim quality {name!r}; expected one of {sorted(QUALITIES)}")
    return name


def quality_scale(quality: str | None) -> float:
    """Device pixels per CSS pixel for a quality name (None: $TOKENWALK_MANIM_QUALITY or full)."""
    return QUALITIES[quality_name(quality)]


@dataclass
class Canvas:
    """Pixel geometry of one still: CSS size and the mapping to Manim units."""

    width_px: int
    height_px: int

    @property
    def frame_width(self) -> float:
        return self.width_px / CSS_PX_PER_UNIT

    @property
    def frame_height(self) -> float:
        return self.height_px / CSS_PX_PER_UNIT

    def u(self, px: float) -> float:
        """A length in CSS px as Manim units."""
        return px / CSS_PX_PER_UNIT

    def at(self, x_px: float, y_px: float):
        """The Manim point of CSS pixel (x, y), measured from the top-left corner."""
        import numpy as np
        return np.array([self.u(x_px) - self.frame_width / 2, self.frame_height / 2 - self.u(y_px), 0.0])


_EM_UNITS_AT_48: float | None = None


def _em_units_at_48() -> float:
    """Height of one em, in Manim units, of Text at font_size 48 (measured once)."""
    global _EM_UNITS_AT_48
    if _EM_UNITS_AT_48 is None:
        from manim import Text
        _EM_UNITS_AT_48 = Text("H", font=FONT, font_size=48).height / FONT_CAP_HEIGHT_EM
    return _EM_UNITS_AT_48


def text(s: str, size_px: float, color: str, *, weight: str = "NORMAL", slant: str = "NORMAL",
         markup: bool = False):
    """A Pango Text whose em is `size_px` CSS px (so 22 means 22 px type, as in CSS).

    markup=True takes Pango markup (MarkupText), e.g. "W<sub>O</sub>" for subscripts.
    Raises ValueError below `MIN_LABEL_PX` (unreadable on a phone).
    """
    if size_px < MIN_LABEL_PX:
        raise ValueError(f"text {s!r} at {size_px} px: below MIN_LABEL_PX = {MIN_LABEL_PX} (unreadable on a phone)")
    key = (s, size_px, weight, slant, markup)
    template = _TEXT_CACHE.get(key)
    if template is None:
        # Pango layout and SVG parsing dominate a still's time: lay each string out once
        from manim import MarkupText, Text
        font_size = 48 * (size_px / CSS_PX_PER_UNIT) / _em_units_at_48()
        cls = MarkupText if markup else Text
        template = _TEXT_CACHE[key] = cls(s, font=FONT, font_size=font_size, weight=weight, slant=slant)
    return template.copy().set_color(color)


_TEXT_CACHE: dict = {}


fmt_int = fmt.count  # 12288 -> '12,288': one formatting module (tokenwalk.format) for the prose and figures


_MEDIA_DIR: str | None = None


def _media_dir() -> str:
    """A private scratch folder for Manim (text SVG cache), removed when the process exits."""
    global _MEDIA_DIR
    if _MEDIA_DIR is None:
        import atexit
        import shutil
        _MEDIA_DIR = tempfile.mkdtemp(prefix="tokenwalk-manim-")
        atexit.register(shutil.rmtree, _MEDIA_DIR, True)
    return _MEDIA_DIR


def gpt3_sizes(n) -> dict:
    """GPT-3's sizes (every Manim figure draws them), from the namespace's gpt3_* names."""
    return {
        "model": n["gpt3_name"],
        "layers": n["gpt3_layers"],
        "embedding_length": n["gpt3_width"],
        "head_count": n["gpt3_heads"],
        "head_dim": n["gpt3_head_dim"],
        "feed_forward_length": n["gpt3_ffn"],
        "vocab_size": n["gpt3_vocab"],
        "softmaxes_per_step": n["gpt3_softmaxes_per_step"],
    }


def _render_config(canvas: Canvas, palette: dict, media_dir: str, pixel_width: int, pixel_height: int,
                   **extra) -> dict:
    """Manim's config for one render: the canvas mapped onto `pixel_width` x `pixel_height`
    device pixels, the theme's background, no cache, quiet; `extra` adds or overrides keys."""
    return {
        "pixel_width": pixel_width,
        "pixel_height": pixel_height,
        "frame_width": canvas.frame_width,
        "frame_height": canvas.frame_height,
        "background_color": palette["bg"],
        "background_opacity": 1.0,
        "media_dir": media_dir,
        "disable_caching": True,
        "verbosity": "WARNING",
        "progress_bar": "none",
        **extra,
    }


def _scene_image(scene_cls, scene_args: dict, theme: str, canvas: Canvas, scale: float):
    """Construct `scene_cls(inputs=..., palette=..., canvas=...)`, draw it, return the frame (PIL RGB)."""
    from manim import tempconfig

    palette = THEMES[theme]
    # one media folder per process: Pango's text SVGs are reused across the two variants
    conf = _render_config(canvas, palette, _media_dir(), max(1, round(canvas.width_px * scale)),
                          max(1, round(canvas.height_px * scale)), write_to_movie=False, save_last_frame=False)
    with tempconfig(conf):
        scene = scene_cls(inputs=scene_args, palette=palette, canvas=canvas)
        scene.construct()
        scene.renderer.update_frame(scene)
        return scene.renderer.camera.get_image().convert("RGB")


def save_webp(image, path: pathlib.Path) -> None:
    """Lossless WebP: flat colours and text compress far better losslessly than lossy."""
    image.save(path, "WEBP", lossless=True, quality=100, method=5)


def render_still(scene_cls, scene_args: dict, out_path: pathlib.Path, *, canvas: Canvas,
                 theme: str = "light", quality: str | None = None,
                 subprocess: bool = False) -> tuple[int, int]:
    """Render one still of `scene_cls` to `out_path` (.webp or .png); return its pixel size.

    `subprocess=True` renders in a fresh interpreter (`python -m figures._manim`), which
    keeps Manim's global config and caches out of the calling process; the child rebuilds
    the class by its module and name (every scene is a top-level class in figures/scenes/).
    """
    out_path = pathlib.Path(out_path)
    scale = quality_scale(quality)
    if subprocess:
        job = {
            "module": scene_cls.__module__, "class": scene_cls.__name__,
            "args": scene_args, "out": str(out_path), "theme": theme,
            "canvas": [canvas.width_px, canvas.height_px], "scale": scale,
        }
        root = pathlib.Path(__file__).resolve().parent.parent
        proc = _subprocess.run([sys.executable, "-m", "figures._manim"], input=json.dumps(job),
                               text=True, capture_output=True, cwd=root)
        if proc.returncode != 0:
            raise RuntimeError(f"{scene_cls.__qualname__}: Manim render failed: {proc.stderr.strip()[-500:]}")
        from PIL import Image
        with Image.open(out_path) as im:
            return im.size
    image = _scene_image(scene_cls, scene_args, theme, canvas, scale)
    if out_path.suffix == ".png":
        image.save(out_path, "PNG", optimize=True)
    else:
        save_webp(image, out_path)
    return image.size


def render_variants(scene_cls, scene_args: dict, out_dir: pathlib.Path, *, canvas: Canvas,
                    quality: str | None = None, stem: str = "still",
                    subprocess: bool = False) -> dict[str, str]:
    """Render the light and dark stills into `out_dir`; return theme -> file name."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = {}
    for theme in THEMES:
        name = f"{stem}-{theme}.webp"
        render_still(scene_cls, scene_args, out_dir / name, canvas=canvas, theme=theme,
                     quality=quality, subprocess=subprocess)
        names[theme] = name
    return names


ANIMATION_MAX_SCALE = 1.5   # device px per CSS px for video: 2x would quadruple the bytes
ANIMATION_FPS = {"full": 24, "medium": 24, "low": 8}


def render_animation(scene_cls, scene_args: dict, out_dir: pathlib.Path, *, canvas: Canvas,
                     theme: str = "dark", quality: str | None = None, stem: str = "animation") -> dict:
    """Render an animated Scene to `stem`.mp4 (H.264) and its last frame to `stem`-poster.webp.

    Returns {"video": name, "poster": name, "seconds": duration}. One theme only: a video
    reads as a player on either page.
    """
    import glob
    import shutil

    from manim import tempconfig

    name = quality_name(quality)
    scale = min(QUALITIES[name], ANIMATION_MAX_SCALE)
    palette = THEMES[theme]
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tokenwalk-manim-video-") as media:
        # even sizes: H.264 in yuv420p needs them
        conf = _render_config(canvas, palette, media, 2 * round(canvas.width_px * scale / 2),
                              2 * round(canvas.height_px * scale / 2), frame_rate=ANIMATION_FPS[name],
                              write_to_movie=True, format="mp4", output_file=stem)
        with tempconfig(conf):
            scene = scene_cls(inputs=scene_args, palette=palette, canvas=canvas)
            scene.render()
            last = scene.renderer.get_frame()
            seconds = scene.renderer.time
        found = glob.glob(os.path.join(media, "videos", "**", f"{stem}.mp4"), recursive=True)
        if not found:
            raise RuntimeError(f"{scene_cls.__qualname__}: Manim wrote no {stem}.mp4")
        shutil.copyfile(found[0], out_dir / f"{stem}.mp4")
    from PIL import Image
    save_webp(Image.fromarray(last).convert("RGB"), out_dir / f"{stem}-poster.webp")
    return {"video": f"{stem}.mp4", "poster": f"{stem}-poster.webp", "seconds": seconds}


def video_html(fig_id: str, files: dict, canvas: Canvas, label: str, summary: str) -> str:
    """A closed <details> holding the <video>: nothing of the video loads until the reader
    opens it and presses play (preload="none"); the poster is its last frame."""
    base = f"figures/{fig_id}/"
    q = html.escape
    w, h = canvas.width_px, canvas.height_px
    return (
        f'<details class="manim-animation"><summary>{q(summary)}</summary>'
        f'<video controls preload="none" playsinline muted width="{w}" height="{h}" '
        f'poster="{q(base + files["poster"])}" aria-label="{q(label)}">'
        f'<source src="{q(base + files["video"])}" type="video/mp4">'
        f'{q(label)}</video></details>'
    )


def still_html(fig_id: str, scene_cls, inputs: dict, out_dir: pathlib.Path, *, canvas: Canvas, alt: str,
               quality: str | None = None) -> str:
    """Render the light and dark stills of a figure into `out_dir`; return the <picture> for the page.

    quality: "full" (2 device px per CSS px, the build), "medium" or "low" (tests); default:
    the one the figure's inputs() chose (`inputs["quality"]`).
    """
    files = render_variants(scene_cls, inputs, out_dir, canvas=canvas, quality=quality or inputs.get("quality"),
                            stem=fig_id)
    return picture_html(fig_id, files, canvas, alt)


def picture_html(fig_id: str, files: dict[str, str], canvas: Canvas, alt: str) -> str:
    """The <picture> for a light/dark pair, sized in CSS px so the page does not jump.

    Without JavaScript the browser picks the variant from prefers-color-scheme. For the
    page's manual theme toggle, the <picture> carries `data-theme-swap` and the <source>
    the class `theme-dark-source`: the page script sets that source's `media` to "all"
    (dark forced), "not all" (light forced) or back to its `data-media` (follow the system).
    """
    base = f"figures/{fig_id}/"
    dark, light = base + files["dark"], base + files["light"]
    w, h = canvas.width_px, canvas.height_px
    q = html.escape
    return (
        f'<picture class="manim-still" data-theme-swap data-src-light="{q(light)}" data-src-dark="{q(dark)}">'
        f'<source class="theme-dark-source" media="(prefers-color-scheme: dark)" '
        f'data-media="(prefers-color-scheme: dark)" srcset="{q(dark)}" width="{w}" height="{h}">'
        f'<img src="{q(light)}" width="{w}" height="{h}" alt="{q(alt)}" loading="lazy" decoding="async">'
        f'</picture>'
    )


def _main() -> int:
    """Subprocess entry: read one job (JSON) on stdin, render it, exit 0."""
    import importlib
    job = json.loads(sys.stdin.read())
    scene_cls: Any = getattr(importlib.import_module(job["module"]), job["class"])
    canvas = Canvas(*job["canvas"])
    image = _scene_image(scene_cls, job["args"], job["theme"], canvas, job["scale"])
    out = pathlib.Path(job["out"])
    if out.suffix == ".png":
        image.save(out, "PNG", optimize=True)
    else:
        save_webp(image, out)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
