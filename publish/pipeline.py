"""The build: content/ + figures/ + the article's numbers -> site/ (what `python build.py` runs).

Steps: (1) the context (article.context): the namespace `n` and the scenario (or `n` from a JSON file);
(2) every figures/*.py through the registry (registry.py), `inputs(ctx)`, cached under
.cache/figures/<ID>/<key>/; (3) each chapter content/NN-*.md through Jinja (with `n` and
the number filters, chapters.py), then markdown-it (markdown/), then the templates in
content/templates/; (4) static files, the Pyodide runtime, the math font (subset to the
page's math), a wheel of the tokenwalk core (assets.py); (5) minified, every URL versioned
by content, text precompressed (optimize.py); (6) all of it into a temporary folder that replaces site/ only
when every step succeeded. A failure prints one line, `file[:line]: cause`, exits 1 and
leaves the previous site/ as it was.

Choices:
- Math is MathML Core from `math-core` (a pinned Rust wheel): pure build-time, no Node
  process per build and no JavaScript in the page; it handles fractions, \\text,
  \\operatorname, \\sqrt, \\max, aligned environments, and browsers render MathML natively.
  Its weakness (stretchy brackets in Chromium's default font) is covered by a self-hosted
  STIX Two Math font, linked only when the page has math. KaTeX would need Node and its CSS
  and fonts on every build; latex2mathml has no aligned environments.
- The build machinery lives here, beside build.py and outside content/: content/ holds
  only what the article is, and tokenwalk must not know about publishing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from pathlib import Path

from . import assets, changes, optimize, registry
from .chapters import chapter_files, lazy_height_px, render_page, render_sources
from .errors import BuildError, fail, shown
from .meta import CARD_FILE, citation, load_meta, render_card

ROOT = Path(__file__).resolve().parent.parent  # the project: build.py, content/, figures/, ...
DEFAULT_TITLE = "Transformers and local inference"


@dataclasses.dataclass
class Options:
    out: Path = ROOT / "site"
    content: Path = ROOT / "content"
    figures: Path = ROOT / "figures"
    cache: Path = ROOT / ".cache" / "figures"
    compressed: Path = ROOT / ".cache" / "compressed"  # .br/.gz by content (publish/optimize.py)
    numbers: Path | None = None  # a JSON file instead of article.numbers
    force: bool = False
    live_reload: bool = False
    quiet: bool = False
    publish: str | None = None  # why: record this build as a publication (publish/changes.py)


@dataclasses.dataclass
class Summary:
    rendered: list = dataclasses.field(default_factory=list)
    cached: list = dataclasses.field(default_factory=list)
    placeholders: list = dataclasses.field(default_factory=list)
    pages: int = 0
    total_bytes: int = 0
    pyodide_bytes: int = 0
    seconds: float = 0.0
    claims: int = 0  # distinct claims the chapters name, every one checked true
    moved: list = dataclasses.field(default_factory=list)  # lines: what moved since the last publication
    notes: list = dataclasses.field(default_factory=list)
    phases: dict = dataclasses.field(default_factory=dict)  # phase -> seconds


def load_context(options: Options, summary: Summary):
    """The one context of the build (article.context.Context): the namespace `n` the
    Markdown sees and the scenario it was computed for; every figure gets the same one."""
    try:
        from article.context import Context, build_context
    except Exception as exc:
        raise fail(ROOT / "article", exc, "cannot import", fallback=ROOT / "article" / "context.py") from exc
    if options.numbers is not None:
        try:
            return Context(json.loads(options.numbers.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise BuildError(f"{shown(options.numbers)}: cannot read numbers: {exc}") from exc
    from tokenwalk.errors import TokenwalkError
    try:
        return build_context()
    except TokenwalkError as exc:
        raise BuildError(str(exc)) from exc
    except Exception as exc:
        raise fail(ROOT / "article", exc, "the article's context failed", fallback=ROOT / "article" / "context.py") from exc


def render_figures(options: Options, tmp: Path, summary: Summary, say, ctx) -> dict:
    """Every figure module through the registry (cached or rendered), its files placed
    under tmp/figures/ID/; returns id -> (HTML, alt text, the disclosures under it) for the chapters."""
    figure_list = registry.discover(options.figures, ROOT)
    figures_html, seen_ids = {}, set()
    for fig in figure_list:
        registry.compute_key(fig, ctx)
    # a render can take minutes (Manim): say which one is under way and how many are left
    to_render = [fig.id for fig in figure_list if options.force or not registry.is_cached(fig, options.cache)]
    for fig in figure_list:
        if fig.id in to_render:
            done = to_render.index(fig.id)
            say(f"  rendering figure {fig.id} ({done + 1} of {len(to_render)}, {len(to_render) - done - 1} left after it)")
        registry.render_or_reuse(fig, options.cache, force=options.force)
        (summary.rendered if fig.status == "rendered" else summary.cached).append(fig.id)
        say(f"  figure {fig.id:<24} {fig.status:<8} {fig.seconds:6.2f} s")
        if fig.import_seconds > 1.0:
            summary.notes.append(f"{shown(fig.path)} takes {fig.import_seconds:.1f} s to import: "
                                 "import the renderer inside render() to keep no-op builds fast")
        assets.copy_tree(fig.cache_dir / "files", tmp / "figures" / fig.id)
        html = registry.scope_ids(registry.with_alt(fig.html, fig.alt), fig.id, seen_ids)
        figures_html[fig.id] = (html, fig.alt, registry.extras_html(fig))
    return figures_html


def place_files(content: Path, tmp: Path, chapters: list, summary: Summary) -> dict:
    """Static files, code colours, the math font (when there is math), the Pyodide
    runtime and the core wheel; returns their paths for the templates."""
    from .markdown import pygments_css
    static = content / "static" if (content / "static").is_dir() else ROOT / "content" / "static"
    assets.copy_tree(static, tmp / "static", link=False)
    (tmp / "static" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    math_text = "".join(assets.math_text(ch["html"]) for ch in chapters)
    math_font = assets.subset_math_font(ROOT, tmp, math_text, ROOT / ".cache" / "fonts") if math_text else None
    if math_text and not math_font:
        summary.notes.append(f"{assets.MATH_FONT} is missing: math uses the browser's own fonts")
    pyodide = assets.copy_pyodide(ROOT, tmp)
    if pyodide is None:
        summary.notes.append("node_modules/pyodide is missing (make setup): no Python runtime in the site")
    wheel = assets.build_core_wheel(ROOT, tmp / "wheels" / "core")
    if pyodide is not None:
        from .stdlib import prepare_stdlib
        prepared, why_not = prepare_stdlib(ROOT / "node_modules" / "pyodide", wheel, ROOT / ".cache" / "stdlib")
        if prepared is not None:
            target = tmp / pyodide / "python_stdlib.zip"
            target.unlink()  # a hard link to the package's own file: replaced, never written through
            assets.link_or_copy(prepared, target)
        else:
            summary.notes.append(why_not)
    return {"math_font": math_font, "pyodide": f"{pyodide}pyodide.mjs" if pyodide else "",
            "wheel": f"wheels/core/{wheel.name}"}


def build(options: Options) -> Summary:
    """Build into a temporary folder, then swap it into options.out."""
    from .markdown import Article, check_claims, render_chapters
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
        meta = load_meta(options.content)  # checked first: a bad field stops the build before any work
        ctx = load_context(options, summary)
        numbers = ctx.n
        if options.numbers is None:  # the article's own namespace, not a test's
            summary.moved = changes.report(numbers, options.content, options.figures)
            if options.publish is not None:  # recorded first, so the page shows the entry; undone below on failure
                record = changes.backup()
                changes.publish(numbers, options.publish, options.content, options.figures)
        phase("numbers")

        figures_html = render_figures(options, tmp, summary, say, ctx)
        phase("figures")
        content = options.content
        files = chapter_files(content)
        if not files:
            summary.notes.append(f"no chapters in {shown(content)}/: the page is an empty shell")
        article = Article(figures=figures_html)
        chapters = render_chapters(render_sources(files, numbers, updates=changes.updates()), article)
        for i, chapter in enumerate(chapters):
            chapter["lazy_height_px"] = lazy_height_px(chapter["html"]) if i else 0
        summary.placeholders = article.placeholders
        summary.claims = check_claims(article.claims, numbers, files)
        phase("chapters")

        templates = content / "templates" if (content / "templates").is_dir() else ROOT / "content" / "templates"
        files_for_page = place_files(content, tmp, chapters, summary)
        described = meta or {"title": article.meta.get("article_title", DEFAULT_TITLE),
                             "subtitle": article.meta.get("subtitle", ""),
                             "description": article.meta.get("description", "")}
        if meta:
            render_card(meta, tmp)
        page = render_page(templates, tmp, {
            "title": described["title"],
            "subtitle": described["subtitle"],
            "description": described["description"],
            "meta": meta,
            "citation": citation(meta) if meta else None,
            "card": (meta["url"] + CARD_FILE if meta["url"] else CARD_FILE) if meta else None,
            "chapters": chapters,
            "toc": article.headings,
            "live_reload": options.live_reload,
            **files_for_page,
        })
        (tmp / "index.html").write_text(page, encoding="utf-8")
        summary.pages = 1
        phase("files")
        summary.notes += optimize.optimize(tmp, ROOT, options.compressed)["notes"]
        phase("optimize")

        for path in tmp.rglob("*"):
            if path.is_file() and path.suffix not in (".br", ".gz"):  # not the precompressed copies
                size = path.stat().st_size
                summary.total_bytes += size
                if path.relative_to(tmp).parts[0] == "pyodide":
                    summary.pyodide_bytes += size
        swap(tmp, out)
    except BaseException:
        if options.publish is not None and "record" in locals():
            changes.restore(record)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary.seconds = time.perf_counter() - start
    return summary


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
    if summary.moved:
        print(f"  since the last publication ({shown(changes.PUBLISHED)}): "
              + ("; ".join(summary.moved) if len(summary.moved) == 1 and summary.moved[0].startswith("no ")
                 else f"{len(summary.moved)} moved"))
        for line in summary.moved if not summary.moved[0].startswith("no ") else []:
            print(f"    {line}")
    elif summary.pages:
        print("  since the last publication: nothing moved")
    if summary.claims:
        print(f"  claims: {summary.claims} checked against the numbers, all true")
    if summary.placeholders:
        print(f"  placeholders for figures not drawn yet: {', '.join(summary.placeholders)}")
    if summary.phases:
        print("  time: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in summary.phases.items()))
    for note in summary.notes:
        print(f"  note: {note}")


def parse_args(argv) -> tuple[Options, argparse.Namespace]:
    parser = argparse.ArgumentParser(prog="build.py", description="Build the article into a static site.")
    parser.add_argument("--serve", action="store_true", help="serve site/ and rebuild on change")
    parser.add_argument("--force", action="store_true", help="render every figure again")
    parser.add_argument("--out", type=Path, default=ROOT / "site")
    parser.add_argument("--content", type=Path, default=ROOT / "content", help="chapters, templates, static")
    parser.add_argument("--figures", type=Path, default=ROOT / "figures", help="figure modules")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "figures", help="figure cache")
    parser.add_argument("--numbers", type=Path, default=None, help="JSON namespace instead of the article's")
    parser.add_argument("--port", type=int, default=8000, help="--serve: port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--quiet", action="store_true", help="no line per figure, only the summary")
    parser.add_argument("--publish", metavar="WHY", default=None,
                        help="record this build as a publication: the namespace becomes the published one and "
                             "the Updates appendix gains a dated entry (WHY: one line)")
    args = parser.parse_args(argv)
    options = Options(out=args.out, content=args.content, figures=args.figures, cache=args.cache,
                      numbers=args.numbers, force=args.force, live_reload=args.serve, quiet=args.quiet,
                      publish=args.publish)
    return options, args


def build_and_report(options: Options) -> bool:
    """Build and print the summary, or print the one-line failure; True on success."""
    try:
        print_summary(build(options), options.out)
        return True
    except BuildError as exc:
        error = exc
    except Exception as exc:  # a bug somewhere: still one line (the deepest project file), never a traceback
        error = fail(ROOT, exc, fallback=ROOT / "build.py")
    print(f"build failed: {error}", file=sys.stderr, flush=True)
    return False


def watched(options: Options) -> list[Path]:
    """What `--serve` watches: the article's sources and every module the build runs."""
    return [options.content, options.figures, ROOT / "article", ROOT / "tokenwalk", ROOT / "publish"]


def main(argv=None) -> int:
    options, args = parse_args(argv)
    if not build_and_report(options) and not args.serve:
        return 1
    if args.serve:
        from .serve import serve
        return serve(options, args.port, watch=watched(options))
    return 0
