"""Lighthouse benchmark (`make bench`): the built page as a phone sees it.

    python -m benchmarks.lighthouse_bench [--site DIR] [--runs N]

Lighthouse (npm, pinned in package.json) with Debian's chromium, its default mobile
profile (simulated slow 4G, 4x CPU slowdown), against the built site behind the
project's own server (publish/serve.py: precompressed text, cache headers), as a static
host serves it. Prints the four category scores, first and largest contentful paint,
cumulative layout shift, total blocking time and the bytes transferred, for the run with
the median performance score of N.

Targets (issue 16): performance >= 0.95; accessibility, best practices, SEO 1.00;
CLS < 0.01; FCP < 1.8 s. It builds the article into a temporary folder unless --site
names a built one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
METRICS = (("first-contentful-paint", "FCP", 1e-3, "s"), ("largest-contentful-paint", "LCP", 1e-3, "s"),
           ("cumulative-layout-shift", "CLS", 1, ""), ("total-blocking-time", "TBT", 1, "ms"))


def build_site(tmp: Path) -> Path:
    site = tmp / "site"
    done = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(site), "--quiet"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr.strip() or "the build failed")
    return site


def run_lighthouse(url: str) -> dict:
    """One Lighthouse run (mobile defaults); its JSON report."""
    if not LIGHTHOUSE.exists():
        sys.exit(f"{LIGHTHOUSE.relative_to(ROOT)} is missing: run make setup")
    done = subprocess.run(
        [str(LIGHTHOUSE), url, "--output=json", "--output-path=stdout", "--quiet",
         f"--only-categories={','.join(CATEGORIES)}", f"--chrome-path={CHROMIUM}",
         "--chrome-flags=--headless=new --no-sandbox"],
        capture_output=True, text=True, env={**os.environ, "CHROME_PATH": CHROMIUM})
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"lighthouse failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    return json.loads(done.stdout)


def summary(report: dict) -> dict:
    audits = report["audits"]
    out = {c: report["categories"][c]["score"] for c in CATEGORIES}
    for key, name, scale, _ in METRICS:
        out[name] = audits[key]["numericValue"] * scale
    out["bytes"] = audits["total-byte-weight"]["numericValue"]
    out["failing"] = sorted(k for k, a in audits.items()
                            if a.get("scoreDisplayMode") in ("binary", "numeric", "metricSavings")
                            and a.get("score") is not None and a["score"] < 0.9)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build the article into a temporary folder)")
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs; the median performance run is shown")
    parser.add_argument("--json", type=Path, help="also write the chosen run's report here")
    args = parser.parse_args(argv)
    from publish.serve import serve_site

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build_site(Path(tmp))
        server = serve_site(site)
        url = f"http://127.0.0.1:{server.server_port}/"
        reports = [run_lighthouse(url) for _ in range(max(1, args.runs))]
        server.shutdown()
    runs = sorted(((summary(r), r) for r in reports), key=lambda sr: sr[0]["performance"])
    chosen, report = runs[len(runs) // 2]
    if args.json:
        args.json.write_text(json.dumps(report), encoding="utf-8")
    print(f"Lighthouse {report['lighthouseVersion']}, mobile (simulated slow 4G, 4x CPU), "
          f"median of {len(runs)} run(s) by performance:")
    print("  " + ", ".join(f"{c} {chosen[c]:.2f}" for c in CATEGORIES))
    print("  " + ", ".join(f"{name} {chosen[name]:.{3 if name == 'CLS' else 2 if unit == 's' else 0}f}{' ' + unit if unit else ''}"
                           for _, name, _, unit in METRICS)
          + f", {chosen['bytes'] / 1024:,.0f} KiB transferred")
    scores = [s["performance"] for s, _ in runs]
    print(f"  performance over the runs: {', '.join(f'{x:.2f}' for x in scores)} (median {statistics.median(scores):.2f})")
    if chosen["failing"]:
        print(f"  audits below 0.9: {', '.join(chosen['failing'])}")
    ok = (chosen["performance"] >= 0.95 and all(chosen[c] == 1 for c in CATEGORIES[1:])
          and chosen["CLS"] < 0.01 and chosen["FCP"] < 1.8)
    print("  targets (performance >= 0.95, the others 1.00, CLS < 0.01, FCP < 1.8 s): " + ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
