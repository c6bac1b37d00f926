"""`build.py --serve`: serve site/ on localhost, rebuild on change, reload the browser.

The handler (SiteHandler) serves as a host should: a file's precompressed `.br` or `.gz`
(publish/optimize.py writes them) with `Content-Encoding` when the browser accepts it,
`Cache-Control: public, max-age=31536000, immutable` for every versioned URL (a content
hash in the file's or its folder's name) and `no-cache` for the rest (the page itself).
The benchmarks and the browser tests serve the site with the same handler.

The server is the standard library's, in a thread; the page (built with live_reload on)
listens to /__reload, a server-sent-events stream that says "reload" after each good
build. A failed rebuild prints its one-line error and the previous site stays served.
Before each rebuild every module the build runs is imported afresh: the figures, the
article layer, tokenwalk and this package itself (an edit to a markdown rule rebuilds
with the new rule).
"""

from __future__ import annotations

import functools
import http.server
import importlib
import os
import re
import sys
import threading
from pathlib import Path


class Reloads:
    """A build counter that SSE clients wait on."""

    def __init__(self):
        self.generation = 0
        self.changed = threading.Condition()

    def bump(self):
        with self.changed:
            self.generation += 1
            self.changed.notify_all()

    def wait_after(self, seen: int, timeout: float) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.generation != seen, timeout=timeout)
            return self.generation


IMMUTABLE = "public, max-age=31536000, immutable"
# A content hash in a name: name.HASH.ext (a file) or name.HASH/ (a folder), publish/optimize.py
VERSIONED = re.compile(r"\.[0-9a-f]{10}(?:/|\.[^/]+$)")
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))


def cache_control(url_path: str) -> str:
    """The Cache-Control a host should send for a URL path of the built site."""
    return IMMUTABLE if VERSIONED.search(url_path) else "no-cache"


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """The built site as a host should serve it: precompressed files and cache lifetimes."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
                      ".whl": "application/zip", ".svg": "image/svg+xml", ".woff2": "font/woff2"}

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.split("?")[0].endswith("/"):
            path = os.path.join(path, "index.html")  # what the parent class sends for a folder
        accepted = {e.split(";")[0].strip() for e in self.headers.get("Accept-Encoding", "").split(",")}
        if os.path.isfile(path):
            for encoding, suffix in ENCODINGS:
                if encoding in accepted and os.path.isfile(path + suffix):
                    return self._send_file(path, path + suffix, encoding)
        return super().send_head()

    def _send_file(self, path: str, stored: str, encoding: str):
        try:
            f = open(stored, "rb")
        except OSError:
            return super().send_head()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(os.fstat(f.fileno()).st_size))
        self.end_headers()
        return f

    def end_headers(self):
        self.send_header("Cache-Control", cache_control(self.path.split("?")[0]))
        self.send_header("Vary", "Accept-Encoding")
        super().end_headers()

    def log_message(self, *args):  # quiet: the build's own lines matter more
        pass


def make_handler(site: Path, reloads: Reloads | None = None):
    class Handler(SiteHandler):
        def do_GET(self):
            if self.path != "/__reload" or reloads is None:
                return super().do_GET()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            seen = reloads.generation
            try:
                while True:
                    now = reloads.wait_after(seen, timeout=15)
                    message = b"event: reload\ndata: 1\n\n" if now != seen else b": keep-alive\n\n"
                    self.wfile.write(message)
                    self.wfile.flush()
                    seen = now
            except (BrokenPipeError, ConnectionResetError):
                return

    return functools.partial(Handler, directory=str(site))


class SiteServer(http.server.ThreadingHTTPServer):
    """The threaded server, quiet when a reader goes away mid-download (a closed tab, a
    stopped page): that is no error of the site's, and the socketserver's default prints a
    traceback for it."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def serve_site(site: Path, port: int = 0) -> SiteServer:
    """Serve a built site on 127.0.0.1 in a thread (port 0: any free one); returns the
    server (its server_port; shutdown() to stop)."""
    server = SiteServer(("127.0.0.1", port), make_handler(site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# The modules a rebuild imports afresh (names and their submodules); "_figures_*" are the
# private packages the registry makes for a figures folder other than the project's.
FRESH = ("figures", "article", "tokenwalk", "publish")


def serve(options, port: int, watch: list[Path]) -> int:
    """Serve options.out until Ctrl-C, rebuilding (with freshly imported code) when a
    file under `watch` changes."""
    from watchfiles import watch as watch_changes

    reloads = Reloads()
    server = SiteServer(("127.0.0.1", port), make_handler(options.out, reloads))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"serving {options.out} at http://127.0.0.1:{server.server_port}/ (Ctrl-C to stop)", flush=True)
    folders = [str(p) for p in watch if p.exists()]

    def relevant(change, path: str) -> bool:
        name = Path(path).name
        return not (name.startswith(".") or name.endswith((".pyc", "~")) or "__pycache__" in path)

    try:
        for changes in watch_changes(*folders, watch_filter=relevant):
            names = sorted({Path(p).name for _, p in changes})
            print(f"changed: {', '.join(names)}", flush=True)
            forget_modules()
            if importlib.import_module("publish.pipeline").build_and_report(options):
                reloads.bump()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


def forget_modules() -> list[str]:
    """Drop the imported modules of FRESH so the next import reads the edited code;
    returns their names."""
    gone = [name for name in sys.modules
            if name.split(".")[0] in FRESH or name.startswith("_figures_")]
    for name in gone:
        del sys.modules[name]
    return gone
