"""Publish the article: content/ + figures/ + tokenwalk's numbers -> site/.

    python build.py                 build into site/ (only figures whose key changed render)
    python build.py --force         render every figure again
    python build.py --serve         build, serve on http://127.0.0.1:8000/, rebuild and
                                    reload the browser when content/, figures/ or
                                    tokenwalk/ (code and data) change
    python build.py --out DIR --content DIR --figures DIR --numbers FILE.json --cache DIR
                                    build elsewhere, from other sources (tests use these)
    python build.py --quiet         the summary only, no line per figure

Steps: (1) the number namespace `n` = article.numbers.article_numbers();
(2) every figures/*.py through the registry (publish/registry.py), cached under
.cache/figures/<ID>/<key>/; (3) each chapter content/NN-*.md through Jinja (with `n` and
number filters), then markdown-it (publish/markdown.py), then the templates in
content/templates/; (4) static files, the Pyodide runtime, the math font, a wheel of the
tokenwalk core; (5) all of it into a temporary folder that replaces site/ only when every
step succeeded. A failure prints one line, `file[:line]: cause`, exits 1 and leaves the
previous site/ as it was.

Choices:
- Math is MathML Core from `math-core` (a pinned Rust wheel): pure build-time, no Node
  process per build and no JavaScript in the page; it handles fractions, \\text,
  \\operatorname, \\sqrt, \\max, aligned environments, and browsers render MathML natively.
  Its weakness (stretchy brackets in Chromium's default font) is covered by a self-hosted
  STIX Two Math font, linked only when the page has math. KaTeX would need Node and its CSS
  and fonts on every build; latex2mathml has no aligned environments.
- The internals live in publish/ (see its __init__.py): the top-level layout is
  fixed and tokenwalk must not know about publishing.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import importlib
import json
import os
import re
import shutil
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from publish import BuildError, assets  # noqa: E402
from publish import registry  # noqa: E402
from publish.filters import FILTERS  # noqa: E402

DEFAULT_TITLE = "Transformers and local inference"


@dataclasses.dataclass
class Options:
    out: Path = ROOT / "site"
    content: Path = ROOT / "content"
    figures: Path = ROOT / "figures"
    cache: Path = ROOT / ".cache" / "figures"
    numbers: Path | None = None  # a JSON file instead of article.numbers
    force: bool = False
    live_reload: bool = False
    quiet: bool = False


@dataclasses.dataclass
class Summary:
    rendered: list = dataclasses.field(default_factory=list)
    cached: list = dataclasses.field(default_factory=list)
    placeholders: list = dataclasses.field(default_factory=list)
    pages: int = 0
    total_bytes: int = 0
    pyodide_bytes: int = 0
    seconds: float = 0.0
    notes: list = dataclasses.field(default_factory=list)
    phases: dict = dataclasses.field(default_factory=dict)  # phase -> seconds


def shown(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_numbers(options: Options, summary: Summary) -> dict:
    """The namespace `n` the Markdown sees."""
    if options.numbers is not None:
        try:
            return json.loads(options.numbers.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BuildError(f"{shown(options.numbers)}: cannot read numbers: {exc}") from exc
    try:
        module = importlib.import_module("article.numbers")
    except ModuleNotFoundError as exc:
        if exc.name != "article.numbers":
            raise BuildError(f"article/numbers.py: cannot import: {exc}") from exc
        summary.notes.append("article/numbers.py is missing: the namespace n is empty")
        return {}
    except Exception as exc:
        raise registry._fail(ROOT / "tokenwalk" / "article_numbers.py", exc, "cannot import") from exc
    from tokenwalk.errors import TokenwalkError
    original = module.article_numbers
    try:
        numbers = dict(original())
    except TokenwalkError as exc:
        raise BuildError(str(exc)) from exc
    except Exception as exc:
        raise registry._fail(Path(module.__file__), exc, "article_numbers() failed") from exc

    def computed_once(*args, **kwargs):
        """The namespace is computed once per build: figure modules that ask for it in
        inputs() get a copy of the same numbers instead of a fresh computation."""
        return original(*args, **kwargs) if args or kwargs else copy.deepcopy(numbers)

    module.article_numbers = computed_once  # for this build process only
    return numbers


def chapter_files(content: Path) -> list[Path]:
    """content/*.md in name order (01-..., 02-...), without README.md and _drafts."""
    return [p for p in sorted(content.glob("*.md")) if not p.name.startswith("_") and p.name != "README.md"]


def jinja_error(exc: Exception, template_file: Path) -> BuildError:
    """One line naming the file and the line of a Jinja failure."""
    lineno = getattr(exc, "lineno", None)
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if Path(frame.f_code.co_filename).resolve() == template_file.resolve():
            lineno = line
    where = f"{shown(template_file)}:{lineno}" if lineno else shown(template_file)
    message = getattr(exc, "message", None) or str(exc)
    error = BuildError(f"{where}: {type(exc).__name__}: {message.splitlines()[0] if message else ''}")
    try:
        error.line = template_file.read_text(encoding="utf-8").splitlines()[lineno - 1] if lineno else None
    except (OSError, IndexError):
        error.line = None
    return error


def _jinja_cache() -> Path:
    """Compiled chapter templates (a long chapter takes ~0.1 s to compile)."""
    folder = ROOT / ".cache" / "jinja"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def render_sources(files: list[Path], numbers: dict) -> list[tuple[str, str]]:
    """Each chapter through Jinja with `n` and the number filters (line numbers kept)."""
    import jinja2
    if not files:
        return []
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(files[0].parent)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
                             bytecode_cache=jinja2.FileSystemBytecodeCache(str(_jinja_cache())))
    env.filters.update(FILTERS)
    out = []
    for path in files:
        try:
            out.append((shown(path), env.get_template(path.name).render(n=numbers)))
        except Exception as exc:
            error = jinja_error(exc, path)
            line = getattr(error, "line", None)
            missing = sorted({m for m in re.findall(r"\bn\.(\w+)", line or "") if m not in numbers})
            if missing:
                error = BuildError(f"{error}; n has no {', '.join(missing)}"
                                   + ("" if numbers else " (the namespace n is empty)"))
            raise error from exc
    return out


def render_figures(options: Options, tmp: Path, summary: Summary, say) -> dict:
    """Every figure module through the registry (cached or rendered), its files placed
    under tmp/figures/ID/; returns id -> (HTML, alt text) for the chapters."""
    figure_list = registry.discover(options.figures, ROOT)
    helpers = registry.helpers_source(options.figures) if options.figures.is_dir() else b""
    figures_html, seen_ids = {}, set()
    for fig in figure_list:
        registry.compute_key(fig, helpers)
        registry.render_or_reuse(fig, options.cache, force=options.force)
        (summary.rendered if fig.status == "rendered" else summary.cached).append(fig.id)
        say(f"  figure {fig.id:<24} {fig.status:<8} {fig.seconds:6.2f} s")
        if fig.import_seconds > 1.0:
            summary.notes.append(f"{shown(fig.path)} takes {fig.import_seconds:.1f} s to import: "
                                 "import the renderer inside render() to keep no-op builds fast")
        assets.copy_tree(fig.cache_dir / "files", tmp / "figures" / fig.id)
        html = registry.scope_ids(registry.with_alt(fig.html, fig.alt), fig.id, seen_ids)
        figures_html[fig.id] = (html, fig.alt)
    return figures_html


def place_files(content: Path, tmp: Path, chapters: list, summary: Summary) -> dict:
    """Static files, code colours, the math font (when there is math), the Pyodide
    runtime and the core wheel; returns their paths for the templates."""
    static = content / "static" if (content / "static").is_dir() else ROOT / "content" / "static"
    assets.copy_tree(static, tmp / "static", link=False)
    from publish.markdown import pygments_css
    (tmp / "static" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    has_math = any("<math" in ch["html"] for ch in chapters)
    math_font = assets.copy_math_font(ROOT, tmp) if has_math else None
    if has_math and not math_font:
        summary.notes.append(f"{assets.MATH_FONT} is missing: math uses the browser's own fonts")
    pyodide = assets.copy_pyodide(ROOT, tmp)
    if pyodide is None:
        summary.notes.append("node_modules/pyodide is missing (make setup): no Python runtime in the site")
    wheel = assets.build_core_wheel(ROOT, tmp / "wheels")
    return {"math_font": math_font, "pyodide": f"{pyodide}pyodide.mjs" if pyodide else "",
            "wheel": f"wheels/{wheel.name}"}


def build(options: Options) -> Summary:
    """Build into a temporary folder, then swap it into options.out."""
    from publish.markdown import Article, render_chapters
    start = time.perf_counter()
    summary = Summary()
    say = (lambda *a: None) if options.quiet else (lambda *a: print(*a, flush=True))
    out = options.out.resolve()
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise BuildError(f"{shown(out)}: refusing to replace a folder that is not a built site (no index.html)")
    tmp = out.parent / f".{out.name}-build-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    clock = time.perf_counter()

    def phase(name):
        nonlocal clock
        now = time.perf_counter()
        summary.phases[name] = now - clock
        clock = now

    try:
        numbers = load_numbers(options, summary)
        phase("numbers")

        figures_html = render_figures(options, tmp, summary, say)
        phase("figures")
        content = options.content
        files = chapter_files(content)
        if not files:
            summary.notes.append(f"no chapters in {shown(content)}/: the page is an empty shell")
        article = Article(figures=figures_html)
        chapters = render_chapters(render_sources(files, numbers), article)
        summary.placeholders = article.placeholders
        phase("chapters")

        templates = content / "templates" if (content / "templates").is_dir() else ROOT / "content" / "templates"
        files_for_page = place_files(content, tmp, chapters, summary)
        page = render_page(templates, tmp, {
            "title": article.meta.get("article_title", DEFAULT_TITLE),
            "subtitle": article.meta.get("subtitle", ""),
            "description": article.meta.get("description", ""),
            "chapters": chapters,
            "toc": article.headings,
            "live_reload": options.live_reload,
            **files_for_page,
        })
        (tmp / "index.html").write_text(page, encoding="utf-8")
        summary.pages = 1
        phase("files")

        for path in tmp.rglob("*"):
            if path.is_file():
                size = path.stat().st_size
                summary.total_bytes += size
                if path.relative_to(tmp).parts[0] == "pyodide":
                    summary.pyodide_bytes += size
        swap(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary.seconds = time.perf_counter() - start
    return summary


def render_page(templates: Path, site: Path, context: dict) -> str:
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)),
                             autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined)
    env.filters.update(FILTERS)
    env.globals["asset"] = lambda rel: f"{rel}?v={assets.fingerprint(site / rel)}"
    env.globals["import_map"] = lambda: assets.import_map(site)
    try:
        return env.get_template("article.html").render(**context)
    except jinja2.TemplateNotFound as exc:
        raise BuildError(f"{shown(templates)}/{exc.name}: template not found") from exc
    except Exception as exc:
        filename = getattr(exc, "filename", None)
        if not filename:
            frames = [f.f_code.co_filename for f, _ in traceback.walk_tb(exc.__traceback__)]
            filename = next((f for f in reversed(frames) if f.endswith(".html")), str(templates / "article.html"))
        raise jinja_error(exc, Path(filename)) from exc


def swap(tmp: Path, out: Path) -> None:
    """Replace `out` by `tmp` with two renames (the old site is removed afterwards)."""
    old = out.parent / f".{out.name}-old-{os.getpid()}"
    if out.exists():
        os.replace(out, old)
    os.replace(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def print_summary(summary: Summary, out: Path) -> None:
    figures = len(summary.rendered) + len(summary.cached)
    rendered = f" ({', '.join(summary.rendered)})" if summary.rendered else ""
    print(f"built {shown(out)}/ in {summary.seconds:.2f} s: {summary.pages} page, "
          f"{figures} figures: {len(summary.rendered)} rendered{rendered}, {len(summary.cached)} cached; "
          f"{summary.total_bytes / 1e6:.1f} MB (Pyodide {summary.pyodide_bytes / 1e6:.1f} MB)")
    if summary.placeholders:
        print(f"  placeholders for figures not drawn yet: {', '.join(summary.placeholders)}")
    if summary.phases:
        print("  time: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in summary.phases.items()))
    for note in summary.notes:
        print(f"  note: {note}")


def parse_args(argv) -> tuple[Options, argparse.Namespace]:
    parser = argparse.ArgumentParser(description="Build the article into a static site.")
    parser.add_argument("--serve", action="store_true", help="serve site/ and rebuild on change")
    parser.add_argument("--force", action="store_true", help="render every figure again")
    parser.add_argument("--out", type=Path, default=ROOT / "site")
    parser.add_argument("--content", type=Path, default=ROOT / "content", help="chapters, templates, static")
    parser.add_argument("--figures", type=Path, default=ROOT / "figures", help="figure modules")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "figures", help="figure cache")
    parser.add_argument("--numbers", type=Path, default=None, help="JSON namespace instead of tokenwalk's")
    parser.add_argument("--port", type=int, default=8000, help="--serve: port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--quiet", action="store_true", help="no line per figure, only the summary")
    args = parser.parse_args(argv)
    options = Options(out=args.out, content=args.content, figures=args.figures, cache=args.cache,
                      numbers=args.numbers, force=args.force, live_reload=args.serve, quiet=args.quiet)
    return options, args


def unexpected(exc: Exception) -> BuildError:
    """An error nobody anticipated, still as one line: the deepest project file and line."""
    where = "build.py"
    for frame, line in traceback.walk_tb(exc.__traceback__):
        path = Path(frame.f_code.co_filename).resolve()
        if path.is_relative_to(ROOT) and ".venv" not in path.parts:
            where = f"{shown(path)}:{line}"
    message = str(exc).splitlines()[0] if str(exc) else ""
    return BuildError(f"{where}: {type(exc).__name__}: {message}")


def build_and_report(options: Options) -> bool:
    """Build and print the summary, or print the one-line failure; True on success."""
    try:
        print_summary(build(options), options.out)
        return True
    except BuildError as exc:
        error = exc
    except Exception as exc:  # a bug somewhere: still one line, never a traceback
        error = unexpected(exc)
    print(f"build failed: {error}", file=sys.stderr, flush=True)
    return False


def main(argv=None) -> int:
    options, args = parse_args(argv)
    if not build_and_report(options) and not args.serve:
        return 1
    if args.serve:
        from publish.serve import serve
        return serve(options, args.port, build_and_report,
                     watch=[options.content, options.figures, ROOT / "tokenwalk"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
