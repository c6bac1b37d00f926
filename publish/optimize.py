"""The written site made fast to load: minified, versioned by content, precompressed.

Runs on the staging folder after the page and its files are written (never on a live
site/), in three steps:

1. **Minify** every CSS and JavaScript file under static/ with esbuild (npm, pinned in
   package.json): one process for all files, each transformed alone (no bundling), so the
   modules keep their imports. A stylesheet linked with `data-inline` is then written into
   the page as a `<style>` (the CSS the first screen needs, without a request).
2. **Version**: every URL the page loads carries a content hash, so a host can let
   browsers keep it forever (`Cache-Control: immutable`). Loose files become
   `name.HASH.ext`; folders whose files find each other by relative URL are hashed as a
   whole and keep their file names: static/interactive/ (modules importing `./python.js`,
   the worker), each figures/ID/, pyodide/<version>/ (loadPyodide fetches its files next
   to pyodide.mjs) and wheels/ (the wheel's file name is read by Pyodide). The page's
   references (`src`, `href`, `srcset`, `poster`, `data-*`, CSS `url()`) are rewritten
   from the manifest; index.html and the sharing card (card.png) keep their names.
3. **Precompress**: `.br` and `.gz` beside every text asset (and the wasm and the
   standard library's zip), so any static host, and `make serve`, sends them compressed. Results are cached by content under
   .cache/compressed/ (Pyodide's 9 MB wasm takes seconds at Brotli's best level).
"""

from __future__ import annotations

import gzip
import hashlib
import html
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import BuildError

HASH_LENGTH = 10
ESBUILD = Path("node_modules/.bin/esbuild")
# Folders hashed as a whole (their files refer to each other by relative URL).
WHOLE_FOLDERS = ("static/interactive", "figures/*", "pyodide/*", "wheels/*")
# Files other sites fetch by a fixed address, long after the page (the sharing card's image,
# publish/meta.py): they keep their names.
FIXED_NAMES = ("card.png",)
# .zip: Pyodide's standard library, stored uncompressed (publish/stdlib.py)
COMPRESSED_SUFFIXES = (".html", ".css", ".js", ".mjs", ".svg", ".json", ".wasm", ".zip", ".txt", ".xml")
# The references rewritten in HTML and CSS: a site path in an attribute value or a url().
REFERENCE = re.compile(r"""(?P<lead>(?:\b(?:src|href|srcset|poster|data-[\w-]+)\s*=\s*["'])|url\(\s*["']?)"""
                       r"""(?P<dot>\./)?(?P<path>(?:static|figures|pyodide|wheels)/[^"'()\s?#]*)""")
INLINE_LINK = re.compile(r"""<link\b[^>]*\bdata-inline\b[^>]*>""")


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_LENGTH]


def optimize(site: Path, root: Path, cache: Path) -> dict:
    """Minify, version and precompress the staged site in place; returns the manifest
    (old site path -> new site path, folders with a trailing slash) and a list of notes."""
    notes = []
    if not minify(site, root):
        notes.append(f"{ESBUILD} is missing (make setup): CSS and JavaScript are not minified")
    page = site / "index.html"
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    text = inline_stylesheets(text, site)
    manifest = version(site)
    if text:
        page.write_text(rewrite(text, manifest), encoding="utf-8")
    precompress(site, cache)
    return {"manifest": manifest, "notes": notes}


def minify(site: Path, root: Path) -> bool:
    """esbuild --minify on every .css/.js/.mjs under site/static/, in place; False when
    esbuild is not installed."""
    esbuild = root / ESBUILD
    files = sorted(p for p in (site / "static").rglob("*") if p.suffix in (".css", ".js", ".mjs") and p.is_file())
    if not files:
        return True
    if not esbuild.is_file():
        return False
    static = site / "static"
    # esbuild names every JavaScript output .js: module workers (.mjs) keep their suffix
    for group, extra in (([p for p in files if p.suffix != ".mjs"], []),
                         ([p for p in files if p.suffix == ".mjs"], ["--out-extension:.js=.mjs"])):
        if not group:
            continue
        done = subprocess.run([str(esbuild), *[str(p.relative_to(static)) for p in group], "--minify", "--charset=utf8",
                               "--log-level=error", "--color=false", "--outdir=.", "--outbase=.", "--allow-overwrite", *extra],
                              cwd=static, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(esbuild_error(done.stderr))
    return True


def esbuild_error(stderr: str) -> str:
    """esbuild's first error as one line: `content/static/FILE:LINE: message`."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    message = next((line.split("]", 1)[1].strip() for line in lines if "[ERROR]" in line), lines[0] if lines else "failed")
    where = next((re.match(r"^(\S+?):(\d+):\d+:$", line) for line in lines if re.match(r"^\S+?:\d+:\d+:$", line)), None)
    place = f"content/static/{where.group(1)}:{where.group(2)}" if where else "content/static"
    return f"{place}: esbuild cannot minify it: {message}"


def inline_stylesheets(text: str, site: Path) -> str:
    """`<link rel="stylesheet" href="X" data-inline>` -> `<style>` with X's (minified) CSS."""
    def inline(match):
        href = re.search(r"""\bhref\s*=\s*["']([^"']+)["']""", match.group(0))
        if not href:
            return match.group(0)
        path = site / html.unescape(href.group(1)).removeprefix("./")
        if not path.is_file():
            raise BuildError(f"{path.relative_to(site)}: a stylesheet to inline is missing from the site")
        css = path.read_text(encoding="utf-8").strip().replace("</", "<\\/")
        return f"<style>{css}</style>"
    return INLINE_LINK.sub(inline, text)


def _folders(site: Path) -> list[Path]:
    found = []
    for pattern in WHOLE_FOLDERS:
        found += sorted(p for p in site.glob(pattern) if p.is_dir())
    return found


def _folder_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:HASH_LENGTH]


def version(site: Path) -> dict:
    """Rename every asset after its content; returns old -> new site paths (folders with
    a trailing slash). Files in a hashed folder keep their names."""
    manifest = {}
    folders = _folders(site)
    for folder in folders:
        rel = folder.relative_to(site).as_posix()
        name = f"{folder.name}.{_folder_hash(folder)}"
        os.replace(folder, folder.with_name(name))
        manifest[rel + "/"] = f"{folder.parent.relative_to(site).as_posix()}/{name}/".removeprefix("./")
    hashed = {site / new.rstrip("/") for new in manifest.values()}
    for path in sorted(site.rglob("*")):
        if (not path.is_file() or path.name == "index.html" or path.relative_to(site).as_posix() in FIXED_NAMES
                or any(h in path.parents for h in hashed)):
            continue
        rel = path.relative_to(site).as_posix()
        new = path.with_name(f"{path.stem}.{content_hash(path.read_bytes())}{path.suffix}")
        os.replace(path, new)
        manifest[rel] = new.relative_to(site).as_posix()
    return manifest


def resolve(path: str, manifest: dict) -> str | None:
    """The versioned site path of `path` (a file, or a file inside a hashed folder)."""
    if path in manifest:
        return manifest[path]
    for old, new in manifest.items():
        if old.endswith("/") and path.startswith(old):
            return new + path[len(old):]
    return None


def rewrite(text: str, manifest: dict) -> str:
    """Every site path the page refers to, by its versioned name (unknown paths stay)."""
    def one(match):
        new = resolve(match.group("path"), manifest)
        if new is None:
            return match.group(0)
        return match.group("lead") + (match.group("dot") or "") + new
    return REFERENCE.sub(one, text)


def precompress(site: Path, cache: Path) -> int:
    """Write name.br and name.gz beside every text asset (skipped when compression saves
    nothing); returns the number of files compressed."""
    import brotli

    count = 0
    cache.mkdir(parents=True, exist_ok=True)
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSED_SUFFIXES:
            continue
        data = path.read_bytes()
        key = hashlib.sha256(data).hexdigest()
        for suffix, compress in ((".br", _brotli(brotli)), (".gz", _gzip)):
            cached = cache / f"{key}{suffix}"
            if not cached.is_file():
                part = cached.with_name(f"{cached.name}.{os.getpid()}.part")
                part.write_bytes(compress(data))
                os.replace(part, cached)
            if cached.stat().st_size < len(data):
                _link_or_copy(cached, path.with_name(path.name + suffix))
        count += 1
    return count


def _brotli(brotli):
    # Brotli's best level on everything but the largest files, where it takes tens of seconds
    return lambda data: brotli.compress(data, quality=11 if len(data) < 4_000_000 else 9)


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
