"""Files the page needs besides its HTML, all served from our own site.

- content/static/ -> site/static/ (CSS, JS, favicon), plus the generated code colours;
- the Pyodide runtime (five files of the pinned npm package) -> site/pyodide/<version>/;
- the math font (STIX Two Math from the npm @fontsource package), subset with fontTools to
  the characters the page's math uses (its MATH table kept: stretchy brackets still find
  their larger variants) -> site/static/fonts/;
- a wheel of the pure tokenwalk core and the page's app (tokenwalk_app) -> site/wheels/ for the browser (none of
  tokenwalk.EDGE_PACKAGES: native/, cli/, timing/fit/; the browser imports the core only).
Large files nobody edits (Pyodide, the figure cache) are hard-linked when the file system
allows (a no-op build stays fast); the static files are copied, so that an edit in place
never reaches an old build.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import tomllib
import zipfile
from pathlib import Path

from . import BuildError

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
MATH_FONT = Path("node_modules/@fontsource/stix-two-math/files/stix-two-math-latin-400-normal.woff2")
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources give the same wheel bytes


def link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def copy_tree(src: Path, dst: Path, link: bool = True) -> int:
    """Copy a folder, hard-linking where possible when `link` (for files nobody edits:
    the figure cache); returns the number of files."""
    count = 0
    for path in sorted(src.rglob("*")):
        if path.is_file() and not path.name.startswith(".") and "__pycache__" not in path.parts:
            target = dst / path.relative_to(src)
            if link:
                link_or_copy(path, target)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
            count += 1
    return count


def copy_pyodide(root: Path, out: Path) -> str | None:
    """Place the runtime under out/pyodide/<version>/; returns that path relative to the
    site, or None (with no error) when node_modules/pyodide is not installed."""
    package = root / "node_modules" / "pyodide"
    if not (package / "package.json").is_file():
        return None
    version = json.loads((package / "package.json").read_text())["version"]
    rel = f"pyodide/{version}/"
    for name in PYODIDE_FILES:
        if not (package / name).is_file():
            raise BuildError(f"node_modules/pyodide/{name}: missing from the pyodide package (run make setup)")
        link_or_copy(package / name, out / rel / name)
    return rel


# Chromium draws a one-letter <mi> in mathematical italic (text-transform: math-auto):
# those are the code points the font must hold, not the letter typed.
_ITALIC = {**{chr(0x41 + i): chr(0x1D434 + i) for i in range(26)}, **{chr(0x61 + i): chr(0x1D44E + i) for i in range(26)},
           **{chr(0x391 + i): chr(0x1D6E2 + i) for i in range(25)}, **{chr(0x3B1 + i): chr(0x1D6FC + i) for i in range(25)},
           "h": "\u210e"}
_MATH = re.compile(r"<math\b.*?</math>", re.S)
_MI = re.compile(r"<mi(?![^>]*mathvariant)[^>]*>([^<]+)</mi>")


def math_text(page_html: str) -> str:
    """Every character the MathML of `page_html` draws (its text, and the italic forms of
    one-letter identifiers); empty when there is no math."""
    import html as html_module

    chars = set()
    for formula in _MATH.findall(page_html):
        chars |= set(html_module.unescape(re.sub(r"<[^>]*>", "", formula)))
        chars |= {_ITALIC.get(c, "") for c in map(html_module.unescape, _MI.findall(formula)) if len(c) == 1} - {""}
    return "".join(sorted(chars))


def subset_math_font(root: Path, out: Path, text: str, cache: Path) -> str | None:
    """STIX Two Math cut to the glyphs `text` needs (and the brackets, radical and bars a
    formula may stretch), as woff2 under out/static/fonts/; its site path, or None if the
    package is absent (browsers then use their own math fonts). Cached by font and text."""
    font = root / MATH_FONT
    if not font.is_file():
        return None
    text = "".join(sorted(set(text) | set("()[]{}|\u2016\u221a\u2212")))
    key = hashlib.sha256(font.read_bytes() + text.encode()).hexdigest()[:16]
    cached = cache / f"stix-two-math-{key}.woff2"
    if not cached.is_file():
        import logging

        from fontTools import subset

        # the subsetter reports its work at INFO ("maxp pruned"), which a figure library's
        # logging set-up lets through to the build's output: the build speaks for itself
        logging.getLogger("fontTools").setLevel(logging.WARNING)
        options = subset.Options()
        options.flavor = "woff2"
        options.layout_features = ["*"]
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        face = subset.load_font(str(font), options)
        subsetter.populate(text=text)
        subsetter.subset(face)
        cache.mkdir(parents=True, exist_ok=True)
        part = cached.with_name(f"{cached.name}.{os.getpid()}.part")
        subset.save_font(face, str(part), options)
        os.replace(part, cached)
    rel = "static/fonts/stix-two-math.woff2"
    link_or_copy(cached, out / rel)
    return rel


def project_version(root: Path) -> str:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0"


def core_files(root: Path) -> list[tuple[str, Path]]:
    """(name in the wheel, file) for the core's modules (tokenwalk minus its edge packages,
    tokenwalk.EDGE_PACKAGES), tokenwalk/data/** and the page's app (tokenwalk_app/)."""
    from tokenwalk import is_edge

    package = root / "tokenwalk"
    files = [(p.relative_to(root).as_posix(), p) for p in sorted(package.rglob("*.py"))
             if not is_edge(p.relative_to(package)) and "__pycache__" not in p.parts
             and p.name != "__main__.py"]
    files += [(p.relative_to(root).as_posix(), p) for p in sorted((root / "tokenwalk_app").glob("*.py"))]
    data = package / "data"
    if data.is_dir():
        files += [(p.relative_to(root).as_posix(), p) for p in sorted(data.rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")]
    return files


def build_core_wheel(root: Path, out_dir: Path) -> Path:
    """A pure-Python wheel of the tokenwalk core (py3-none-any), loadable by Pyodide's
    loadPackage(url) and importable from sys.path as a zip."""
    version = project_version(root)
    dist_info = f"tokenwalk-{version}.dist-info"
    entries = [(name, path.read_bytes()) for name, path in core_files(root)]
    entries.append((f"{dist_info}/METADATA",
                    f"Metadata-Version: 2.1\nName: tokenwalk\nVersion: {version}\n"
                    "Summary: tokenwalk core (pure Python) for the browser\n".encode()))
    entries.append((f"{dist_info}/WHEEL",
                    b"Wheel-Version: 1.0\nGenerator: tokenwalk build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    entries.append((f"{dist_info}/top_level.txt", b"tokenwalk\ntokenwalk_app\n"))
    record = []
    for name, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = out_dir / f"tokenwalk-{version}-py3-none-any.whl"
    wheel.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return wheel
