"""The article's one metadata file, content/article.toml: title, subtitle, description,
the author and year a citation names, the address it is published at, the figure under the
title on the sharing card, and the reuse licence. The page's <head> (title, description,
Open Graph and Twitter card), the "Cite this" block and the reuse notice all read it, so
the article is described once.

The card (`card.png`, 1200 x 630, the size Open Graph and Twitter's large card show) is
drawn by the build: the title and subtitle set in DejaVu Sans beside the light still of a
Manim figure. It keeps a plain name at the site's root: a shared link's card is fetched
long after the page, by its address.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from . import BuildError
from .errors import shown

META_FILE = "article.toml"
CARD_FILE = "card.png"
CARD_SIZE_PX = (1200, 630)
FIELDS = {  # name -> type; every field is required (url may be empty)
    "title": str, "subtitle": str, "description": str, "author": str, "year": int, "url": str,
    "card_figure": str, "bibtex_key": str, "license": str, "license_url": str, "reuse": str,
}
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")  # fonts-dejavu-core (Makefile)


def load_meta(content: Path) -> dict | None:
    """content/article.toml checked field by field; None when the content has none (the
    build then takes the title from the first chapter's front matter)."""
    path = content / META_FILE
    if not path.is_file():
        return None
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BuildError(f"{shown(path)}: not valid TOML ({exc})") from exc
    for name, kind in FIELDS.items():
        if name not in meta:
            raise BuildError(f"{shown(path)}: field {name!r} is missing")
        value = meta[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BuildError(f"{shown(path)}: field {name!r} must be {'an integer' if kind is int else 'text'}, "
                             f"got {value!r}")
        if kind is str and name != "url" and not value.strip():
            raise BuildError(f"{shown(path)}: field {name!r} is empty")
    unknown = sorted(set(meta) - set(FIELDS))
    if unknown:
        raise BuildError(f"{shown(path)}: unknown field {unknown[0]!r} (expected {', '.join(FIELDS)})")
    if meta["url"] and not re.fullmatch(r"https?://[^\s\"'<>]+/", meta["url"]):
        raise BuildError(f"{shown(path)}: field 'url' must be an http(s) address ending in '/', got {meta['url']!r}")
    if not re.fullmatch(r"[A-Za-z0-9_:-]+", meta["bibtex_key"]):
        raise BuildError(f"{shown(path)}: field 'bibtex_key' must be letters, digits, '_', ':' or '-'")
    meta["path"] = path
    return meta


def citation(meta: dict) -> dict:
    """The short citation and the BibTeX entry (the URL left out when the file has none:
    the page's script adds the reader's address to the short form)."""
    url = meta["url"]
    text = f"{meta['author']}, \u201c{meta['title']}\u201d, {meta['year']}." + (f" {url}" if url else "")
    fields = [("author", meta["author"]), ("title", meta["title"]), ("year", str(meta["year"]))]
    if url:
        fields.append(("url", url))
    body = ",\n".join(f"  {name} = {{{_bibtex_escape(value)}}}" for name, value in fields)
    return {"text": text, "bibtex": f"@misc{{{meta['bibtex_key']},\n{body}\n}}"}


def _bibtex_escape(value: str) -> str:
    return re.sub(r"([&%$#_{}])", r"\\\1", value)


def card_still(site: Path, meta: dict) -> Path:
    """The light still of the card's figure, as the registry placed it under figures/ID/."""
    fig_id = meta["card_figure"]
    still = site / "figures" / fig_id / f"{fig_id}-light.webp"
    if not still.is_file():
        raise BuildError(f"{shown(meta['path'])}: field 'card_figure': {fig_id!r} is not a Manim figure of the article "
                         f"(no figures/{fig_id}/{fig_id}-light.webp)")
    return still


def render_card(meta: dict, site: Path) -> Path:
    """Draw card.png at the site's root: title and subtitle on the left, the figure on the right."""
    from PIL import Image, ImageDraw, ImageFont

    from figures._manim import THEMES

    colours = THEMES["light"]
    width, height = CARD_SIZE_PX
    card = Image.new("RGB", CARD_SIZE_PX, colours["bg"])
    with Image.open(card_still(site, meta)) as still:
        still = still.convert("RGB")
        scale = height / still.height
        still = still.resize((round(still.width * scale), height), Image.LANCZOS)
    figure_x = width - still.width
    card.paste(still, (figure_x, 0))
    draw = ImageDraw.Draw(card)
    left, text_width = 64, figure_x - 64 - 48
    title_font = ImageFont.truetype(str(FONT_DIR / "DejaVuSans-Bold.ttf"), 60)
    sub_font = ImageFont.truetype(str(FONT_DIR / "DejaVuSans.ttf"), 28)
    name_font = ImageFont.truetype(str(FONT_DIR / "DejaVuSans-Bold.ttf"), 26)
    y = 72
    draw.text((left, y), meta["author"], font=name_font, fill=colours["muted"])
    y += 70
    for line in _wrap(draw, meta["title"], title_font, text_width):
        draw.text((left, y), line, font=title_font, fill=colours["fg"])
        y += 74
    y += 20
    for line in _wrap(draw, meta["subtitle"], sub_font, text_width)[:6]:
        draw.text((left, y), line, font=sub_font, fill=colours["muted"])
        y += 38
    draw.rectangle((0, height - 10, width, height), fill=colours["accent"])
    out = site / CARD_FILE
    card.save(out, "PNG", optimize=True)
    return out


def _wrap(draw, text: str, font, width_px: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and draw.textlength(trial, font=font) > width_px:
            lines.append(line)
            line = word
        else:
            line = trial
    return lines + ([line] if line else [])
