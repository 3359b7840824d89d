"""An estimate that few problems carry is warned about on every surface that shows it.

pass^20 of a run where two problems of forty are always solved rests on two problems,
however many problems the run has: the API says so in the interval (`effective_problems`, `warning`) and in
the run's warnings, the CLI's table marks it and prints the warning, the run page marks the number and lists
the warning (read in Chromium), and `passk report` on the exported file does the same. Verdicts are written
directly (as a worker would), so no program runs here.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy.engine import make_url

from tests.e2e.conftest import Stack
from tests.e2e.test_cli import ok, passk
from tests.e2e.test_dashboard import _console_errors, _new_context, browser, client, login, shot  # noqa: F401

pytestmark = pytest.mark.slow

N = 20
PASSES = [20, 20, 19] + [6] * 37  # pass^20 = C(c, 20) / C(20, 20): 1, 1, then 0 for the other 38 problems


@pytest.fixture(scope="module")
def long_tail_run(stack: Stack, client: httpx.Client) -> dict[str, Any]:  # noqa: F811
    keys = [f"tail/{i}" for i in range(len(PASSES))]
    dataset = client.post("/v1/datasets", json={
        "name": f"tail-{secrets.token_hex(3)}", "language": "python",
        "problems": [{"format": "stdio", "id": key, "cases": [{"input": "1\n", "output": "1\n"}]} for key in keys],
    }).raise_for_status().json()
    run = client.post("/v1/runs", json={
        "dataset_id": dataset["id"], "model": f"long-tail-{secrets.token_hex(3)}", "sampling": {"temperature": 1.0},
        "samples": [{"problem_id": key, "completion": f"print(1)  # {i}"} for key in keys for i in range(N)],
    }).raise_for_status().json()
    url = make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as conn:
        for key, c in zip(keys, PASSES, strict=True):
            conn.execute(
                "UPDATE samples s SET state = 'done', attempts = 1, finished_at = now(), "
                "verdict = CASE WHEN s.index < %s THEN 'passed' ELSE 'failed' END "
                "FROM problems p WHERE s.problem_id = p.id AND s.run_id = %s AND p.key = %s", (c, run["id"], key))
        conn.execute("UPDATE runs SET status = 'completed', started_at = created_at, finished_at = now() WHERE id = %s",
                     (run["id"],))
    return run


def test_few_effective_problems_on_every_surface(
    stack: Stack, browser: Browser, client: httpx.Client, long_tail_run: dict[str, Any], tmp_path: Path,  # noqa: F811
) -> None:
    run_id = long_tail_run["id"]
    api = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1,20"}).json()
    at1, hat20 = api["metrics"][0]["pass_at_k"], api["metrics"][1]["pass_hat_k"]
    assert at1["warning"] is None and at1["effective_problems"] > 30
    assert hat20["effective_problems"] == pytest.approx(2.0, rel=1e-12)  # (1 + 1)^2 / (1 + 1)
    assert "rests on about 2.0 problems" in hat20["warning"]
    warning = next(w for w in api["warnings"] if w.startswith("pass^20:"))

    # CLI: the number marked in the table, the warning under it; JSON as the API
    table = ok(passk(stack, "metrics", run_id, "-k", "1,20")).stdout
    row = next(line for line in table.splitlines() if line.strip().startswith("20 "))
    assert "(! rests on ~2.0 problems)" in row, table
    assert f"warning: {warning}" in table, table
    as_json = json.loads(ok(passk(stack, "metrics", run_id, "-k", "1,20", "--json")).stdout)
    assert as_json["metrics"][1]["pass_hat_k"]["warning"] == hat20["warning"]

    # passk report on the export: the same warning, the same mark
    exported = tmp_path / "results.jsonl"
    ok(passk(stack, "export", run_id, "-o", str(exported)))
    report = json.loads(ok(passk(None, "report", str(exported), "-k", "1,20", "--json")).stdout)
    assert report["metrics"][1]["pass_hat_k"]["effective_problems"] == pytest.approx(hat20["effective_problems"])
    assert warning in report["warnings"]
    text = ok(passk(None, "report", str(exported), "-k", "1,20")).stdout
    assert "! ~2.0 effective problems" in text and warning in text, text

    # the run page: pass^20 (its largest k) marked where the number is shown, the warning listed
    context = _new_context(browser, stack)
    page = context.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run_id}")
    page.wait_for_url("**/login?next=*")
    login(page, stack.api_key, expect_path=f"/runs/{run_id}")
    expect(page.locator("#stat-hatn-label")).to_have_text("pass^20", timeout=30_000)
    mark = page.locator("#stat-hatn-ci .ci-warning")
    expect(mark).to_contain_text("rests on ~2.0 problems")
    expect(mark).to_have_attribute("title", hat20["warning"])
    expect(page.locator("#stat-pass1-ci .ci-warning")).to_have_count(0)
    expect(page.locator("#metrics-note")).to_contain_text(warning)
    shot(page, "few-effective-problems")
    assert not errors, errors
    context.close()
