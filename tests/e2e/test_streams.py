"""Streams through the real stack: /v1/judge and /run_code calls grouped by their X-Passk-Stream header, out of
the runs list, counted and charted over time (API and dashboard), another project's invisible, and retention
deleting old programs and outputs while the verdicts stay."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, expect
from sqlalchemy import text

from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.worker.retention import prune_cache, prune_streams
from tests.e2e.conftest import Stack, wait_for_run
from tests.e2e.test_dashboard import _console_errors, browser, session  # noqa: F401 - fixtures used by name

pytestmark = pytest.mark.slow

STREAM = "grpo-7.step:12"
ADD = {"id": "add", "prompt": "def add(a, b):\n", "entry_point": "add",
       "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n"}
PROGRAMS = {"right": "    return a + b\n", "wrong": "    return a - b\n", "exit": "    import os; os._exit(0)\n"}
CALLS = ["right", "right", "right", "wrong", "wrong", "exit"]


@pytest.fixture(scope="module")
def client(stack: Stack) -> Iterator[httpx.Client]:
    with stack.client(timeout=300) as http:
        yield http


def _post(client: httpx.Client, path: str, body: dict, stream: str | None) -> dict:
    headers = {"X-Passk-Stream": stream} if stream else {}
    for _ in range(3):  # a busy machine's 504 is retried, as clients do
        response = client.post(path, json=body, headers=headers)
        if response.status_code != 504:
            break
    assert response.status_code == 200, response.text
    return response


@pytest.fixture(scope="module")
def calls(stack: Stack, client: httpx.Client) -> dict[str, Any]:
    stack.start_worker(concurrency=2)
    try:
        judged = [_post(client, "/v1/judge", {"problem": ADD, "completion": PROGRAMS[kind]}, STREAM) for kind in CALLS]
        plain = _post(client, "/run_code", {"code": "print(1)", "language": "python"}, None)
        # A batch run on the same dataset: never a stream's, never pruned.
        dataset_id = judged[0].json()["dataset_id"]
        batch = client.post("/v1/runs", json={"dataset_id": dataset_id, "model": "batch", "sampling": {"temperature": 0},
                                              "samples": [{"problem_id": "add", "completion": PROGRAMS["right"]}]})
        assert batch.status_code == 202, batch.text
        batch_run = wait_for_run(client, batch.json()["id"])
    finally:
        stack.stop_workers()
    return {"judged": [r.json() for r in judged], "run_code_run": plain.headers["X-Passk-Run"], "batch": batch_run}


def test_calls_join_their_stream_and_leave_the_runs_list(client: httpx.Client, calls: dict[str, Any]) -> None:
    listed = {s["name"]: s for s in client.get("/v1/streams").json()["items"]}
    mine = listed[STREAM]
    assert mine["calls"] == len(CALLS) and mine["calls_last_hour"] == len(CALLS)
    assert (mine["verdicts"]["passed"], mine["verdicts"]["failed"]) == (3, 3)
    assert mine["reward_hacks"] >= 1  # the early exit
    assert mine["last_hour"]["p50_ms"] > 0 and mine["last_hour"]["p95_ms"] >= mine["last_hour"]["p50_ms"]
    assert listed["run_code"]["calls"] >= 1  # no header: the endpoint's own stream

    detail = client.get(f"/v1/streams/{STREAM}", params={"window_s": 3600, "buckets": 30}).json()
    assert detail["calls"] == len(CALLS) and detail["bucket_s"] == 120
    assert sum(b["calls"] for b in detail["buckets"]) == len(CALLS)
    assert sum(b["verdicts"]["passed"] for b in detail["buckets"]) == 3
    assert detail["calls_per_s"] == pytest.approx(len(CALLS) / 3600)

    ids = {c["run_id"] for c in calls["judged"]}
    default = {r["id"] for r in client.get("/v1/runs", params={"limit": 1000}).json()["items"]}
    assert not ids & default and calls["run_code_run"] not in default and calls["batch"]["id"] in default
    only = client.get("/v1/runs", params={"stream": STREAM, "limit": 1000}).json()
    assert {r["id"] for r in only["items"]} == ids and only["total"] == len(CALLS)
    one = next(iter(ids))
    assert [r["id"] for r in client.get("/v1/runs", params={"id_prefix": one[:13]}).json()["items"]] == [one]
    streams_too = {r["id"] for r in client.get("/v1/runs", params={"streams": "include", "limit": 1000}).json()["items"]}
    assert ids <= streams_too and calls["batch"]["id"] in streams_too


def test_bad_stream_names_and_other_projects(client: httpx.Client, stack: Stack, calls: dict[str, Any]) -> None:
    bad = client.post("/v1/judge", json={"problem": ADD, "completion": ""}, headers={"X-Passk-Stream": "no spaces"})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["header", "X-Passk-Stream"]
    assert client.get("/v1/streams/never-called").status_code == 404
    with stack.client(api_key=stack.project_key("streams-other")) as other:
        assert other.get("/v1/streams").json()["items"] == []
        assert other.get(f"/v1/streams/{STREAM}").status_code == 404


def test_retention_deletes_programs_and_outputs_and_keeps_the_counts(
    client: httpx.Client, stack: Stack, calls: dict[str, Any]
) -> None:
    before = client.get(f"/v1/streams/{STREAM}").json()
    run_ids = [c["run_id"] for c in calls["judged"]] + [calls["batch"]["id"]]
    engine = make_sync_engine(stack.database_url)
    try:
        sessions = make_sync_sessionmaker(engine)
        with transaction(sessions) as db:  # as if they had finished eight days ago
            db.execute(text("UPDATE runs SET finished_at = now() - interval '8 days' WHERE id = ANY(CAST(:ids AS uuid[]))"),
                       {"ids": run_ids})
        with transaction(sessions) as db:
            assert prune_streams(db, older_than_days=7) >= len(CALLS)
        with transaction(sessions) as db:
            assert prune_streams(db, older_than_days=7) == 0  # nothing left to prune
        # The result cache holds outputs too: its entries older than the retention time go, the others stay.
        with transaction(sessions) as db:
            db.execute(text("INSERT INTO verdict_cache (key, verdict, stdout, created_at) VALUES "
                            "(repeat('a', 64), 'passed', 'old output', now() - interval '8 days'), "
                            "(repeat('b', 64), 'passed', 'new output', now())"))
        with transaction(sessions) as db:
            assert prune_cache(db, older_than_days=7) == 1
        with transaction(sessions) as db:
            left = db.execute(text("SELECT key FROM verdict_cache WHERE key IN (repeat('a', 64), repeat('b', 64))"))
            assert [key[0] for key in left] == ["b" * 64]
    finally:
        engine.dispose()

    wrong = next(c for c, kind in zip(calls["judged"], CALLS, strict=True) if kind == "wrong")
    sample = client.get(f"/v1/runs/{wrong['run_id']}/samples", params={"include": "completion"}).json()["items"][0]
    assert (sample["completion"], sample["stdout"], sample["stderr"], sample["failure"]) == ("", None, None, None)
    assert sample["verdict"] == "failed"
    batch = client.get(f"/v1/runs/{calls['batch']['id']}/samples", params={"include": "completion"}).json()["items"][0]
    assert batch["completion"] == PROGRAMS["right"]  # not a stream's: kept

    after = client.get(f"/v1/streams/{STREAM}").json()
    assert (after["calls"], after["verdicts"], after["reward_hacks"]) == (
        before["calls"], before["verdicts"], before["reward_hacks"])
    listed = {s["name"]: s for s in client.get("/v1/streams").json()["items"]}
    assert listed[STREAM]["pruned_calls"] == len(CALLS)


def test_streams_page(session: BrowserContext, calls: dict[str, Any]) -> None:  # noqa: F811
    page = session.new_page()
    errors = _console_errors(page)
    page.goto("/streams")
    row = page.locator(f'#streams-table tr[data-stream="{STREAM}"]')
    expect(row).to_be_visible(timeout=60_000)
    expect(row.locator("td").nth(1)).to_have_text(str(len(CALLS)))
    expect(row.locator("td").nth(2)).to_have_text("50.0%")
    row.locator("a").click()
    page.wait_for_url("**/streams?name=*")
    expect(page.locator("#stream-calls")).to_have_text(str(len(CALLS)), timeout=60_000)
    expect(page.locator("#stream-hacks")).not_to_have_text("0")
    assert page.locator("#streams-calls rect.v-passed").count() >= 1
    assert page.locator("#streams-latency path.latency").count() == 2
    page.click("#stream-runs")
    page.wait_for_url("**/?stream=*")
    expect(page.locator("#runs-body tr[data-run-id]")).to_have_count(len(CALLS), timeout=60_000)

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/streams?name={STREAM}")
    expect(page.locator("#streams-calls")).to_be_visible(timeout=60_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.goto("/streams")
    expect(page.locator("#streams-table")).to_be_visible(timeout=60_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not errors, errors
    page.close()
