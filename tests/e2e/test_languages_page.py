"""The /languages page in Chromium: one model's runs in two languages side by side, reached from the runs list.

Runs are made cheaply: stdio datasets in C++ and Java, verdicts written directly (as a worker would), so no
language image runs here (their end-to-end tests are tests/languages/)."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import psycopg
import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy.engine import make_url

from tests.e2e.conftest import Stack
from tests.e2e.test_dashboard import _console_errors, _new_context, browser, client, login, shot  # noqa: F401

pytestmark = pytest.mark.slow
MODEL = f"polyglot-{secrets.token_hex(3)}"


def _language_run(stack: Stack, client: httpx.Client, language: str, passes: list[int], n: int = 4) -> dict[str, Any]:  # noqa: F811
    keys = [f"{language}/{i}" for i in range(len(passes))]
    dataset = client.post("/v1/datasets", json={
        "name": f"stdio-{language}-{secrets.token_hex(3)}", "language": language,
        "problems": [{"format": "stdio", "id": key, "cases": [{"input": "1\n", "output": "1\n"}]} for key in keys],
    }).raise_for_status().json()
    run = client.post("/v1/runs", json={
        "dataset_id": dataset["id"], "model": MODEL, "sampling": {"temperature": 0.8},
        "samples": [{"problem_id": key, "completion": f"// {key} {i}"} for key in keys for i in range(n)],
    }).raise_for_status().json()
    url = make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as conn:
        for key, c in zip(keys, passes, strict=True):
            conn.execute(
                "UPDATE samples s SET state = 'done', attempts = 1, finished_at = now(), "
                "verdict = CASE WHEN s.index < %s THEN 'passed' ELSE 'failed' END "
                "FROM problems p WHERE s.problem_id = p.id AND s.run_id = %s AND p.key = %s", (c, run["id"], key))
        conn.execute("UPDATE runs SET status = 'completed', started_at = created_at, finished_at = now() WHERE id = %s",
                     (run["id"],))
    return run


def test_languages_page_side_by_side(stack: Stack, browser: Browser, client: httpx.Client) -> None:  # noqa: F811
    cpp = _language_run(stack, client, "cpp", [4] * 9 + [0] * 3)  # pass@1 = 75 % over 12 problems
    java = _language_run(stack, client, "java", [2, 0, 0, 2])  # pass@1 = 25 % over 4
    api = client.get("/v1/languages/compare", params={"runs": f"{cpp['id']},{java['id']}", "k": "1"}).json()

    context = _new_context(browser, stack)
    page = context.new_page()
    errors = _console_errors(page)
    page.goto("/login")
    login(page, stack.api_key)
    # Reached from the runs list: tick the two runs, then "Compare languages".
    # The runs list opened on the search (as its search box leaves it in the URL), so no redraw follows the ticks.
    page.goto(f"/?q={MODEL}")
    for run in (cpp, java):
        expect(page.locator(f"tr[data-run-id='{run['id']}'] input[type=checkbox]")).to_be_visible(timeout=30_000)
    for run in (cpp, java):
        page.locator(f"tr[data-run-id='{run['id']}'] input[type=checkbox]").check()
    page.click("#compare-languages")
    page.wait_for_url("**/languages?runs=*")
    table = page.locator("#languages-table")
    expect(table).to_be_visible(timeout=30_000)
    expect(table.locator("tbody tr")).to_have_count(2)
    cpp_row = table.locator("tr[data-language='cpp']")
    expect(cpp_row).to_contain_text("75.0%")
    expect(cpp_row).to_contain_text("12")
    expect(table.locator("tr[data-language='java']")).to_contain_text("25.0%")
    micro, macro = table.locator("tr[data-average='micro']"), table.locator("tr[data-average='macro']")
    expect(micro).to_contain_text(f"{100 * api['micro']['pass_at_k'][0]['pass_at_k']['estimate']:.1f}%")  # 62.5 %
    expect(macro).to_contain_text("50.0%")
    expect(micro).to_contain_text("micro average")
    expect(macro).to_contain_text("macro average")
    expect(page.locator("#languages-legend")).to_contain_text("pooled")
    expect(page.locator("#languages-legend")).to_contain_text("unweighted")
    # Labelled intervals, the API's bounds.
    low = api["macro"]["pass_at_k"][0]["pass_at_k"]["ci_low"]
    expect(macro.locator(".ci")).to_have_attribute("data-ci-low", str(low).rstrip("0").rstrip(".") if low else "0")
    expect(macro.locator(".ci-label")).to_contain_text("95")
    shot(page, "languages-page")

    assert not errors, errors
    # Two runs of one language: the API's 422 is shown, saying so (the browser logs the failed fetch).
    cpp_again = _language_run(stack, client, "cpp", [1, 2])
    page.goto(f"/languages?runs={cpp['id']},{cpp_again['id']}")
    expect(page.locator("#languages-error")).to_contain_text("one run per language", timeout=30_000)
    errors.clear()

    # Fits a phone: nothing scrolls sideways at 390 px.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/languages?runs={cpp['id']},{java['id']}")
    expect(page.locator("#languages-table tfoot tr").first).to_be_visible(timeout=30_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "mobile-languages")
    assert not errors, errors
    assert not context.offsite, context.offsite  # type: ignore[attr-defined]
    context.close()
