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
    """The real article, built once for every browser test module (with the project's figure
    cache) and served on localhost: (base URL, site folder). Tests read it, never write into it."""
    import importlib.util

    from tests.support.browser import serve
    from tests.support.build import run_build

    if importlib.util.find_spec("article.numbers") is None:
        pytest.skip("article/numbers is missing: the real article cannot build")
    tmp = tmp_path_factory.mktemp("article")
    result = run_build("--out", tmp / "site")
    assert result.returncode == 0, result.stderr
    server = serve(tmp / "site")
    yield f"http://127.0.0.1:{server.server_port}/", tmp / "site"
    server.shutdown()
