"""Build benchmark (`make bench`): how fast build.py is, and how heavy the page.

    python -m benchmarks.build_bench [--data FILE --field NAME] [--fixture] [--runs N]

1. cold build: an empty figure cache (every figure renders);
2. no-op rebuild: nothing changed (target: under 2 s, Python start-up included);
3. one data file changes (by default the H100's bandwidth_gbs, +1 %): the time, and
   which figures re-rendered (read from the build's summary);
4. page weight by kind: HTML, CSS, JS, figures, fonts, the core wheel; Pyodide apart.

It works on a copy of the project under .cache/bench/ (same file system, so hard links
work as in a real build), never on the working tree: nothing it changes is tracked.
If the real article does not build yet, it says why and measures the fixture article.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "site"
COPY = ("build.py", "pyproject.toml", "publish", "article", "content", "figures", "tokenwalk")
KINDS = {  # site path pattern -> kind, first match wins
    r"^pyodide/": "Pyodide (apart)",
    r"^figures/": "figures",
    r"^wheels/": "core wheel",
    r"^static/fonts/": "fonts",
    r"^static/.*\.svg$": "icons",
    r"\.html$": "HTML",
    r"\.css$": "CSS",
    r"\.m?js$": "JS",
}


def make_tree(bench: Path) -> Path:
    """A private copy of the project (node_modules and the model file linked, not copied)."""
    tree = bench / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, tree / name, ignore=shutil.ignore_patterns("__pycache__", "_build_cache"))
        elif src.exists():
            shutil.copy2(src, tree / name)
    if (ROOT / "node_modules").exists():
        (tree / "node_modules").symlink_to(ROOT / "node_modules")
    if (ROOT / ".cache" / "models").exists():  # the model file the request's tokenizer reads
        (tree / ".cache").mkdir()
        (tree / ".cache" / "models").symlink_to(ROOT / ".cache" / "models")
    return tree


def run(tree: Path, args: list) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, str(tree / "build.py"), *map(str, args)],
                            cwd=tree, capture_output=True, text=True)
    return time.perf_counter() - start, result


def rendered(stdout: str) -> list[str]:
    match = re.search(r"figures: (\d+) rendered(?: \(([^)]*)\))?", stdout)
    return match.group(2).split(", ") if match and match.group(2) else []


def weights(site: Path) -> dict:
    """kind -> [bytes on disk, bytes sent with Brotli (the .br beside a file, where the
    build wrote one)]; the precompressed copies are not files of their own."""
    totals: dict[str, list] = {}
    for path in site.rglob("*"):
        if path.is_file() and path.suffix not in (".br", ".gz"):
            rel = path.relative_to(site).as_posix()
            rel = re.sub(r"\.[0-9a-f]{10}(?=/|\.[^/]+$)", "", rel)  # the content hashes (publish/optimize.py)
            kind = next((k for pattern, k in KINDS.items() if re.search(pattern, rel)), "other")
            br = path.with_name(path.name + ".br")
            sent = (br if br.is_file() else path).stat().st_size
            total = totals.setdefault(kind, [0, 0])
            total[0] += path.stat().st_size
            total[1] += sent
    return totals


def bump(path: Path, field: str) -> str:
    """Multiply one number in a JSON file by 1.01; returns 'old -> new'."""
    data = json.loads(path.read_text())
    old = data[field]
    data[field] = round(old * 1.01, 6)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return f"{old} -> {data[field]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="tokenwalk/data/machines/h100-sxm.json", help="data file to change")
    parser.add_argument("--field", default="bandwidth_gbs", help="number in it to change by +1 %%")
    parser.add_argument("--fixture", action="store_true", help="measure the fixture article")
    parser.add_argument("--runs", type=int, default=3, help="no-op rebuilds to time (median shown)")
    args = parser.parse_args(argv)

    bench = ROOT / ".cache" / "bench"
    tree = make_tree(bench)
    site, cache = bench / "site", bench / "figure-cache"
    shutil.rmtree(cache, ignore_errors=True)
    common = ["--out", site, "--cache", cache]
    what = "the article"
    if args.fixture:
        common += ["--content", FIXTURE / "content", "--figures", FIXTURE / "figures", "--numbers", FIXTURE / "numbers.json"]
        what = "the fixture article"

    cold_s, result = run(tree, common)
    if result.returncode != 0 and not args.fixture:
        print(f"the article does not build yet ({result.stderr.strip()}); measuring the fixture article")
        return main([*(argv or []), "--fixture"])
    if result.returncode != 0:
        print(result.stderr.strip())
        return 1
    figures_total = re.search(r"(\d+) figures:", result.stdout).group(1)
    print(f"build benchmark of {what} ({figures_total} figures)")
    print(f"  cold build (empty figure cache)   {cold_s:7.2f} s   rendered {len(rendered(result.stdout))}")

    noop = []
    for _ in range(args.runs):
        seconds, result = run(tree, common)
        assert result.returncode == 0, result.stderr
        noop.append(seconds)
    verdict = "ok" if statistics.median(noop) < 2.0 else "OVER the 2 s target"
    print(f"  no-op rebuild (median of {args.runs})      {statistics.median(noop):7.2f} s   "
          f"rendered {len(rendered(result.stdout))}   ({verdict})")

    data = tree / args.data
    if data.is_file() and not args.fixture:
        change = bump(data, args.field)
        seconds, result = run(tree, common)
        assert result.returncode == 0, result.stderr
        again = rendered(result.stdout)
        print(f"  one data file changed             {seconds:7.2f} s   rendered {len(again)}: "
              f"{', '.join(again) or 'none'}   ({args.data} {args.field} {change})")
    else:
        print(f"  one data file changed: skipped ({args.data} is not part of this build)")

    sizes = weights(site)
    print("  page weight by kind (bytes on disk; sent with Brotli):")
    for kind in sorted(sizes, key=lambda k: (k.startswith("Pyodide"), -sizes[k][0])):
        print(f"    {kind:<16} {sizes[kind][0] / 1e3:10.1f} KB {sizes[kind][1] / 1e3:10.1f} KB")
    page = [sum(v[i] for k, v in sizes.items() if not k.startswith("Pyodide")) for i in (0, 1)]
    print(f"    {'page total':<16} {page[0] / 1e3:10.1f} KB {page[1] / 1e3:10.1f} KB (without Pyodide)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
