"""`build.py --serve`: serve site/ on localhost, rebuild on change, reload the browser.

The server is the standard library's, in a thread; the page (built with live_reload on)
listens to /__reload, a server-sent-events stream that says "reload" after each good
build. A failed rebuild prints its one-line error and the previous site stays served.
"""

from __future__ import annotations

import functools
import http.server
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


def make_handler(site: Path, reloads: Reloads):
    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                          ".mjs": "text/javascript", ".wasm": "application/wasm",
                          ".whl": "application/zip", ".svg": "image/svg+xml"}

        def end_headers(self):
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

        def do_GET(self):
            if self.path != "/__reload":
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

        def log_message(self, *args):  # quiet: the build's own lines matter more
            pass

    return functools.partial(Handler, directory=str(site))


def serve(options, port: int, build_and_report, watch: list[Path]) -> int:
    """Serve options.out until Ctrl-C; build_and_report(options) -> bool rebuilds."""
    from watchfiles import watch as watch_changes

    reloads = Reloads()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), make_handler(options.out, reloads))
    server.daemon_threads = True
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
            _forget_modules()
            if build_and_report(options):
                reloads.bump()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


def _forget_modules() -> None:
    """Drop imported figure, article and tokenwalk modules so a rebuild sees edited code."""
    import sys
    for name in list(sys.modules):
        if name in ("figures", "article") or name.startswith(("figures.", "article.", "tokenwalk", "_figures_")):
            del sys.modules[name]
