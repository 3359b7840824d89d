"""The documentation site under /guide/, served by the real API, read in Chromium with every other origin blocked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from service.cli.docs import build_site
from tests.e2e.conftest import Stack
from tests.e2e.test_dashboard import _console_errors, browser, shot  # noqa: F401 - fixtures used by name


@pytest.fixture(scope="module")
def guide_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """An API whose PASSK_GUIDE_DIR holds the site, built as `passk docs build` builds it (strict)."""
    site = tmp_path_factory.mktemp("guide")
    build_site(site)
    with Stack(prefix="passk_guide", extra_env={"PASSK_GUIDE_DIR": str(site)}) as running:
        yield running


def test_guide_renders_offline_and_search_works(guide_stack: Stack, browser: Browser) -> None:  # noqa: F811
    assert httpx.get(f"{guide_stack.api_url}/guide", follow_redirects=False).headers["location"] == "/guide/"
    context = browser.new_context(base_url=guide_stack.api_url, viewport={"width": 1280, "height": 900})
    offsite: list[str] = []
    context.route(lambda url: not url.startswith(guide_stack.api_url),
                  lambda route: (offsite.append(route.request.url), route.abort()))
    page = context.new_page()
    errors = _console_errors(page)
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    response = page.goto("/guide/")
    assert response is not None and response.status == 200
    assert "default-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator("article h1")).to_have_text(re.compile("passk"))
    # The theme's own stylesheet applied (not a bare HTML page), and the navigation leads to every section.
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") in ("sticky", "fixed")
    page.locator("nav.md-nav--primary a.md-nav__link", has_text="Concepts").first.click()
    expect(page.locator("article h2", has_text="Intervals and how to read them")).to_be_visible()
    # The CLI reference is generated from the parser: a command and an option of it are there.
    page.goto("/guide/cli.html")
    expect(page.locator("article h2", has_text="passk submit")).to_be_visible()
    submit = page.locator("xpath=//h2[@id='passk-submit']/following::table[1]")
    expect(submit).to_contain_text("--name NAME")
    expect(submit).to_contain_text("--tag TAG")
    # Search works from the bundled index, with no network.
    page.locator("input.md-search__input").click()
    # "Initializing search" until the worker has loaded the index; a query typed before that is dropped.
    expect(page.locator(".md-search-result__meta")).to_have_text("Type to start searching", timeout=30_000)
    page.keyboard.type("clopper")
    results = page.locator(".md-search-result__item")
    expect(results.first).to_be_visible(timeout=30_000)
    assert results.count() >= 1
    results.first.locator("a").first.click()
    expect(page.locator("article")).to_contain_text("Clopper")
    shot(page, "guide")
    assert not offsite, f"the guide tried to reach other origins: {offsite}"
    assert not failed, failed
    assert not errors, errors
    context.close()


def test_guide_missing_says_how_to_build(tmp_path: Path) -> None:
    """A server without a built site answers /guide/ with how to build it, not a bare 404."""
    from fastapi.testclient import TestClient

    from service.api.app import create_app
    from service.core.settings import Settings

    app = create_app(Settings(env="test", guide_dir=tmp_path / "absent", database_url="postgresql+psycopg://x@127.0.0.1:1/x"))
    answer = TestClient(app).get("/guide/")
    assert answer.status_code == 404 and "passk docs build" in answer.text
