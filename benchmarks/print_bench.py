"""Print benchmark: the built article printed to PDF by headless Chromium.

    python -m benchmarks.print_bench [--site DIR] [--out FILE] [--paper A4|Letter]

Prints the page as a reader's "Print" would (the print stylesheet, every chapter laid
out, the live figures in their build-time state), writes the PDF (default
.cache/bench/article.pdf, to look at page by page) and reports its page count and size.
It builds the article into a temporary folder (the figure cache makes that quick) unless
--site names a built one.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
DEFAULT_OUT = ROOT / ".cache" / "bench" / "article.pdf"


def pdf_page_count(pdf: bytes) -> int:
    """Pages of a PDF as Chromium (Skia) writes it: the page tree's root holds the count.
    Each /Pages node carries /Count of the pages beneath it; the root's is the largest."""
    counts = [int(m) for m in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", pdf)]
    counts += [int(m) for m in re.findall(rb"/Count\s+(\d+)[^>]*?/Type\s*/Pages\b", pdf)]
    if not counts:
        raise ValueError("no page tree (/Type /Pages ... /Count N) in the PDF")
    return max(counts)


def print_pdf(browser, url: str, paper: str = "A4") -> bytes:
    """The page printed to PDF once every lazy chapter and image has been laid out and loaded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    page.emulate_media(media="print")
    # images load lazily: bring every one in before printing
    page.evaluate("""async () => {
        const images = [...document.images];
        images.forEach(img => { img.loading = 'eager'; });
        await Promise.all(images.map(img => img.complete ? null : new Promise(r => { img.onload = img.onerror = r; })));
    }""")
    pdf = page.pdf(format=paper, print_background=False, margin={"top": "18mm", "bottom": "18mm",
                                                                    "left": "16mm", "right": "16mm"})
    context.close()
    return pdf


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build the article into a temporary folder)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the PDF")
    parser.add_argument("--paper", default="A4", choices=["A4", "Letter"])
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from publish.serve import serve_site

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            done = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(site), "--quiet"], cwd=ROOT,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
        server = serve_site(site)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                pdf = print_pdf(browser, f"http://127.0.0.1:{server.server_port}/", args.paper)
                browser.close()
        finally:
            server.shutdown()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(pdf)
    shown = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"printed to PDF ({args.paper}): {pdf_page_count(pdf)} pages, {len(pdf) / 1e6:.1f} MB, written to {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
