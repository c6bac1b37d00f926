"""Shared fixtures. The project root is on sys.path through pytest's `pythonpath = ["."]`
(pyproject.toml), so tests import the project's packages (tokenwalk, article, publish,
figures) and their helper modules (`tests.build_support`, ...) by name, with no sys.path
edits of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def project_root() -> Path:
    """The project: build.py, content/, figures/, tokenwalk/, publish/, article/."""
    return ROOT


@pytest.fixture(scope="session")
def numbers() -> dict:
    """The article's namespace `n`, computed once per test session (do not mutate)."""
    from tests.support.content import default_numbers

    return default_numbers()


@pytest.fixture
def fixture_site(tmp_path) -> Path:
    """A writable copy of the fixture article (content/, figures/, numbers.json)."""
    from tests.support.build import copy_fixture

    return copy_fixture(tmp_path)


CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through playwright (no browser download), for the browser tests."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make setup` installs Debian's chromium")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def real_article(tmp_path_factory):
    """The real article, built once for the whole run (with the project's figure cache) and
    served on localhost by each worker: (base URL, site folder). Tests read it, never write
    into it. Under pytest-xdist the workers share one build: the first to get the lock builds
    into the run's common temporary folder, the others wait for it and reuse it."""
    import fcntl
    import importlib.util
    import os

    from tests.support.browser import serve
    from tests.support.build import run_build

    if importlib.util.find_spec("article.numbers") is None:
        pytest.skip("article/numbers is missing: the real article cannot build")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # an xdist worker: its parent folder is the run's
        shared = shared.parent
    site, done = shared / "real-article" / "site", shared / "real-article" / "built"
    site.parent.mkdir(parents=True, exist_ok=True)
    with open(shared / "real-article.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            result = run_build("--out", site)
            assert result.returncode == 0, result.stderr
            done.write_text("ok\n")
    server = serve(site)
    yield f"http://127.0.0.1:{server.server_port}/", site
    server.shutdown()
