"""What users see, through the real stack: one interval on every surface, what a score covers.

One run over a 30-problem slice of a 40-problem HumanEval dataset, judged by real workers. The
same pass@1 bracket is read from the API, the CLI (`metrics` table and JSON), the runs list and the
run page (rendered in Chromium) and `passk report` on the exported file, shuffled.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.e2e.conftest import Stack, wait_for_run
from tests.e2e.test_cli import ok, passk
from tests.e2e.test_dashboard import (  # noqa: F401 - fixtures used by name
    _console_errors,
    browser,
    client,
    create_dataset,
    humaneval_slice,
    make_samples,
    session,
    shot,
    submit,
)

pytestmark = pytest.mark.slow

DATASET_PROBLEMS = 40
RUN_PROBLEMS = 30
N = 5


def js_pct(value: float) -> str:
    """The dashboard's `pct(x, 2)`: (100 * x).toFixed(2) + "%"."""
    return f"{100 * value:.2f}%"


@pytest.fixture(scope="module")
def subset_run(stack: Stack, client: httpx.Client) -> dict[str, Any]:  # noqa: F811
    problems = humaneval_slice(DATASET_PROBLEMS)
    dataset = create_dataset(client, f"HumanEval-{DATASET_PROBLEMS}", problems)
    covered = dict(list(problems.items())[:RUN_PROBLEMS])
    stack.start_worker(concurrency=2)
    try:
        run = submit(client, dataset["id"], "surface-model", {"temperature": 0.6}, make_samples(covered, N, 0.4, 7))
        run = wait_for_run(client, run["id"])
    finally:
        stack.stop_workers()
    assert run["status"] == "completed", run
    return {"dataset": dataset, "run": run}


def test_one_interval_everywhere(
    stack: Stack, client: httpx.Client, session: BrowserContext, subset_run: dict[str, Any], tmp_path: Path  # noqa: F811
) -> None:
    run_id = subset_run["run"]["id"]
    # The API's default interval (no options).
    api = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1"}).json()
    pass1 = api["metrics"][0]["pass_at_k"]
    low, high = pass1["ci_low"], pass1["ci_high"]
    assert pass1["label"] == "95 % BCa" and pass1["method_used"] == "bca" and low < pass1["estimate"] < high
    # Asking for more k does not move pass@1's bracket (the run page asks for a grid of k).
    grid = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1,2,3,4,5"}).json()["metrics"][0]["pass_at_k"]
    assert (grid["ci_low"], grid["ci_high"]) == (low, high)
    # A non-default resample count is named in the label.
    other = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1", "resamples": 2000}).json()
    assert other["metrics"][0]["pass_at_k"]["label"] == "95 % BCa, 2,000 resamples"

    # CLI: JSON and the table.
    cli_json = json.loads(ok(passk(stack, "metrics", run_id, "-k", "1", "--json")).stdout)
    cli_pass1 = cli_json["metrics"][0]["pass_at_k"]
    assert (cli_pass1["ci_low"], cli_pass1["ci_high"]) == (low, high)
    table = ok(passk(stack, "metrics", run_id, "-k", "1")).stdout
    assert f"[{low:.2%}, {high:.2%}] 95 % BCa" in table, table

    # `passk report` on the export, in file order and shuffled: the same bounds to the last bit.
    exported = tmp_path / "samples.jsonl_results.jsonl"
    ok(passk(stack, "export", run_id, "-o", str(exported)))
    lines = exported.read_text().splitlines()
    random.Random(3).shuffle(lines)
    shuffled = tmp_path / "shuffled_results.jsonl"
    shuffled.write_text("\n".join(lines) + "\n")
    for path in (exported, shuffled):
        report = json.loads(ok(passk(None, "report", str(path), "-k", "1", "--json")).stdout)
        offline = report["metrics"][0]["pass_at_k"]
        assert (offline["estimate"], offline["ci_low"], offline["ci_high"]) == (pass1["estimate"], low, high), path
    text = ok(passk(None, "report", str(shuffled), "-k", "1")).stdout
    assert f"{100 * low:6.2f}%" in text and f"{100 * high:6.2f}%" in text and "95 % BCa" in text, text

    # The dashboard, read from the rendered pages: runs list row and run page.
    page = session.new_page()
    errors = _console_errors(page)
    # The dataset's runs only: other tests' runs may fill the first page of the whole list.
    page.goto(f"/?dataset_id={subset_run['dataset']['id']}")
    row = page.locator(f'tr[data-run-id="{run_id}"]')
    ci = row.locator(".ci")
    expect(ci).to_have_text(f"[{js_pct(low)}, {js_pct(high)}]", timeout=30_000)
    assert (float(ci.get_attribute("data-ci-low")), float(ci.get_attribute("data-ci-high"))) == (low, high)
    expect(row.locator(".ci-label")).to_have_text("95 % BCa")
    page.goto(f"/runs/{run_id}")
    ci = page.locator("#stat-pass1-ci .ci")
    expect(ci).to_have_text(f"[{js_pct(low)}, {js_pct(high)}]", timeout=30_000)
    assert (float(ci.get_attribute("data-ci-low")), float(ci.get_attribute("data-ci-high"))) == (low, high)
    expect(page.locator("#stat-pass1-ci .ci-label")).to_have_text("95 % BCa")
    # The band over the k grid is cheaper, and its caption says so.
    expect(page.locator("#curve-caption")).to_contain_text("band: 95 % BCa, 2,000 resamples interval")
    assert not errors, errors
    page.close()


def test_a_score_says_what_it_covers(
    stack: Stack, client: httpx.Client, session: BrowserContext, subset_run: dict[str, Any]  # noqa: F811
) -> None:
    run_id, name = subset_run["run"]["id"], subset_run["dataset"]["name"]
    text = f"{RUN_PROBLEMS} of {DATASET_PROBLEMS} problems"
    run = client.get(f"/v1/runs/{run_id}").json()
    assert run["coverage"] == {"problems": RUN_PROBLEMS, "dataset_problems": DATASET_PROBLEMS, "subset": True, "text": text}
    assert run["dataset_name"] == name and run["problem_count"] == RUN_PROBLEMS
    listed = client.get("/v1/runs", params={"dataset_id": subset_run["dataset"]["id"]}).json()["items"]
    assert [r["coverage"]["text"] for r in listed if r["id"] == run_id] == [text]
    metrics = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1"}).json()
    assert metrics["coverage"]["subset"] is True and metrics["coverage"]["text"] == text
    # First after the reward-hack warning (the run's broken samples include sys.exit(0), flagged ended_early).
    ordinary = [w for w in metrics["warnings"] if "only a forger does" not in w]
    assert ordinary[0].startswith(f"subset: these figures cover {text} of {name}"), metrics["warnings"]
    # CLI: metrics and status.
    table = ok(passk(stack, "metrics", run_id, "-k", "1")).stdout
    assert f"{name}: {text} (SUBSET)" in table, table
    status = ok(passk(stack, "status", run_id)).stdout
    assert f"dataset   {name} (" in status and f"{text} (SUBSET)" in status, status
    # Dashboard: runs list and run page flag the subset.
    page = session.new_page()
    errors = _console_errors(page)
    # The dataset's runs only: other tests' runs may fill the first page of the whole list.
    page.goto(f"/?dataset_id={subset_run['dataset']['id']}")
    row = page.locator(f'tr[data-run-id="{run_id}"]')
    # Once the row's live status has been read (a later update of the same row), the badges must stand.
    expect(row.locator(".status-cell .badge.status-completed")).to_have_text("completed")
    expect(row.locator(".coverage-cell")).to_contain_text(text)
    expect(row.locator(".subset-flag")).to_have_text("subset")
    expect(row.locator(".run-id")).to_have_text(run_id[:8])
    page.goto(f"/runs/{run_id}")
    expect(page.locator("#stat-problems-sub")).to_contain_text(text, timeout=30_000)
    expect(page.locator("#stat-problems-sub .subset-flag")).to_be_visible()
    expect(page.locator("#metrics-note")).to_contain_text("subset:")
    assert not errors, errors
    page.close()


def test_degenerate_interval_says_why(stack: Stack, client: httpx.Client, session: BrowserContext) -> None:  # noqa: F811
    """One problem, 3 of 4 samples passing: 75 % with no interval, and the reason on every surface."""
    problems = humaneval_slice(1)
    (task_id, problem), = problems.items()
    dataset = create_dataset(client, "HumanEval-1", problems)
    samples = [{"problem_id": task_id, "completion": problem["canonical_solution"] + f"    # {i}\n"} for i in range(3)]
    samples.append({"problem_id": task_id, "completion": "    return None\n"})
    stack.start_worker(concurrency=2)
    try:
        run = wait_for_run(client, submit(client, dataset["id"], "one-problem", {"temperature": 0.2}, samples)["id"])
    finally:
        stack.stop_workers()
    pass1 = client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "1"}).json()["metrics"][0]["pass_at_k"]
    assert (pass1["estimate"], pass1["ci_low"], pass1["ci_high"]) == (0.75, None, None)  # no bounds, not a zero-width one
    assert pass1["method_used"] == "none" and pass1["label"] == "no interval"
    assert pass1["fallback_reason"].startswith("a single problem")
    table = ok(passk(stack, "metrics", run["id"], "-k", "1")).stdout
    assert "75.00% no interval (a single problem)" in table, table
    page = session.new_page()
    page.goto(f"/runs/{run['id']}")
    expect(page.locator("#stat-pass1-ci .ci-why")).to_have_text(" (a single problem)", timeout=30_000)
    expect(page.locator("#stat-pass1-ci .ci-label")).to_have_text("no interval")
    expect(page.locator("#stat-pass1-ci .ci")).to_have_text("")  # no "[–, –]" brackets
    assert page.locator("#stat-pass1-ci .ci").get_attribute("data-ci-low") is None
    assert "a single problem" in page.locator("#stat-pass1-ci .bracket").get_attribute("title")
    page.close()


def test_docs_work_offline(stack: Stack, browser: Browser) -> None:  # noqa: F811
    """/docs and /redoc render from passk's own assets; "Try it out" with a key gets a 200."""
    spec = httpx.get(f"{stack.api_url}/openapi.json").json()
    assert spec["components"]["securitySchemes"]["apiKey"] == {
        "type": "http", "scheme": "bearer", "bearerFormat": "pk_…",
        "description": "An API key (`passk keys create`), sent as `Authorization: Bearer <key>`.",
    }
    assert {"apiKey": []} in spec["paths"]["/v1/runs"]["get"]["security"]
    assert "security" not in spec["paths"]["/healthz"]["get"]
    context = browser.new_context(base_url=stack.api_url, viewport={"width": 1280, "height": 900})
    offsite: list[str] = []
    context.route(lambda url: not url.startswith(stack.api_url), lambda route: (offsite.append(route.request.url), route.abort()))
    page = context.new_page()
    errors = _console_errors(page)
    responses: list[tuple[str, int]] = []
    page.on("response", lambda r: responses.append((r.url, r.status)))
    response = page.goto("/docs")
    assert response is not None and "default-src 'self'" in response.headers["content-security-policy"]
    operation = page.locator("#operations-runs-list_runs_v1_runs_get")
    expect(operation).to_be_visible(timeout=30_000)
    expect(page.locator(".opblock")).to_have_count(len([m for p in spec["paths"].values() for m in p]))
    # Authorize with the key (the bearer scheme), then Try it out on GET /v1/runs.
    page.click("button.authorize")
    page.fill("input[aria-label='auth-bearer-value']", stack.api_key)
    page.locator(".auth-container").filter(has=page.locator("input[aria-label='auth-bearer-value']")).locator(
        "button[type=submit]").click()
    page.click("button.btn-done")
    operation.locator(".opblock-summary").first.click()
    operation.locator("button.try-out__btn").click()
    with page.expect_response(lambda r: "/v1/runs?" in r.url or r.url.endswith("/v1/runs")) as answer:
        operation.locator("button.execute").click()
    assert answer.value.status == 200, answer.value.text()
    assert answer.value.request.headers.get("authorization") == f"Bearer {stack.api_key}"
    expect(operation.locator(".live-responses-table tbody .response-col_status").first).to_have_text("200")
    shot(page, "docs")
    page.goto("/redoc")
    expect(page.locator("h2", has_text="List the project's runs, newest first")).to_be_visible(timeout=30_000)
    shot(page, "redoc")
    assert not offsite, f"docs tried to reach other origins: {offsite}"
    assert all(status < 400 for url, status in responses if "/docs-assets/" in url), responses
    # The one refusal: ReDoc's vendor logo, blocked by the page's same-origin policy, never requested.
    assert all("cdn.redoc.ly" in e and "Content Security Policy" in e for e in errors), errors
    context.close()


# ---------------------------------------------------------------- the CLI


def test_cli_runs_list_edit_cancel_and_prefixes(stack: Stack, client: httpx.Client, subset_run: dict[str, Any]) -> None:  # noqa: F811
    run_id, prefix = subset_run["run"]["id"], subset_run["run"]["id"][:8]
    edited = ok(passk(stack, "runs", "edit", prefix, "--name", "surface A", "--tag", "alpha", "--tag", "beta",
                      "--note", "first try")).stdout
    assert "name      surface A" in edited and "tags      alpha, beta" in edited and "note      first try" in edited
    listed = ok(passk(stack, "runs", "list", "--tag", "alpha")).stdout
    assert prefix in listed and "surface A" in listed and f"{RUN_PROBLEMS} of {DATASET_PROBLEMS} SUBSET" in listed
    for flags in (["--model", "surface-model"], ["--status", "completed"], ["--dataset", subset_run["dataset"]["name"]],
                  ["--search", "first try"]):
        assert prefix in ok(passk(stack, "runs", "list", *flags)).stdout, flags
    assert prefix not in ok(passk(stack, "runs", "list", "--tag", "gamma")).stdout
    # Archived runs leave the default list, and come back.
    ok(passk(stack, "runs", "edit", prefix, "--archive"))
    assert prefix not in ok(passk(stack, "runs", "list")).stdout
    assert prefix in ok(passk(stack, "runs", "list", "--archived")).stdout
    assert run_id not in [r["id"] for r in client.get("/v1/runs").json()["items"]]
    ok(passk(stack, "runs", "edit", prefix, "--unarchive"))
    assert prefix in ok(passk(stack, "runs", "list")).stdout
    # Prefixes work for every command that takes a run; unknown and malformed ones say so.
    assert f"run {run_id}" in ok(passk(stack, "status", prefix)).stdout
    assert json.loads(ok(passk(stack, "metrics", prefix, "-k", "1", "--json")).stdout)["run_id"] == run_id
    result = passk(stack, "status", "ffff0000")
    assert result.returncode == 1 and "no run id starts with 'ffff0000'" in result.stderr, result.stderr
    result = passk(stack, "metrics", "xyz")
    assert result.returncode == 1 and "not a run id or a prefix of one" in result.stderr, result.stderr
    # cancel: a queued run (no workers), then a finished one.
    queued = submit(client, subset_run["dataset"]["id"], "to-cancel", {"temperature": 1.0},
                    [{"problem_id": "HumanEval/0", "completion": "    pass\n"}])
    cancelled = ok(passk(stack, "cancel", queued["id"][:10])).stdout
    assert f"run {queued['id']}  cancelled" in cancelled, cancelled
    result = passk(stack, "cancel", prefix)
    assert result.returncode == 1 and "has already ended" in result.stderr, result.stderr


def test_cli_checks_and_words(stack: Stack, client: httpx.Client, subset_run: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    name = subset_run["dataset"]["name"]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": f"HumanEval/{i}", "completion": "    pass\n"}) + "\n"
                               for i in range(3) for _ in range(2)))
    before = client.get("/v1/runs", params={"archived": "include"}).json()["total"]
    # k is checked against the file before anything is sent.
    result = passk(stack, "submit", str(samples), "--dataset", name, "--model", "m", "--temperature", "1", "-k", "1,5",
                   "--wait")
    assert result.returncode == 1, result
    assert "-k 5 exceeds the samples per problem: HumanEval/0 has only 2 (and 2 more problems); choose -k up to 2. " \
           "Nothing was submitted." in result.stderr, result.stderr
    assert client.get("/v1/runs", params={"archived": "include"}).json()["total"] == before
    # A JSON line cut short names its real column.
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text('{"task_id": "HumanEval/0", "completion": "    pass\\n"}\n{"task_id": "HumanEval/1"\n')
    result = passk(stack, "submit", str(truncated), "--dataset", name, "--model", "m", "--temperature", "1")
    assert "truncated.jsonl:2: not valid JSON (Expecting ',' delimiter at column 26, the line ends early" in result.stderr
    # `report` given a samples file says so.
    result = passk(None, "report", str(samples))
    assert result.returncode == 2 and "samples.jsonl:1: this is a samples file" in result.stderr, result.stderr
    # Errors in the CLI's words: --intersection, not intersection=true.
    other = create_dataset(client, "HumanEval-2", humaneval_slice(2))
    other_run = submit(client, other["id"], "other", {"temperature": 1.0}, [{"problem_id": "HumanEval/0", "completion": "    pass\n"}])
    result = passk(stack, "compare", subset_run["run"]["id"][:8], other_run["id"][:8])
    assert result.returncode == 1 and "pass --intersection to compare" in result.stderr, result.stderr
    assert "intersection=true" not in result.stderr
    client.post(f"/v1/runs/{other_run['id']}/cancel")
    # status --wait on a finished run prints the run and its metrics.
    waited = ok(passk(stack, "status", subset_run["run"]["id"], "--wait", "-k", "1,2")).stdout
    assert f"dataset   {name}" in waited and "pass@k" in waited and "95 % BCa" in waited, waited


def test_export_writes_humaneval_result_strings(stack: Stack, subset_run: dict[str, Any], tmp_path: Path) -> None:
    exported = tmp_path / "results.jsonl"
    ok(passk(stack, "export", subset_run["run"]["id"][:8], "-o", str(exported)))
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    by_detail = {(r["passk_verdict"], r["passk_detail"]): r["result"] for r in rows}
    assert all(r["result"] == "passed" for r in rows if r["passed"])
    value_errors = [(d, res) for (v, d), res in by_detail.items() if d and d.startswith("ValueError: ")]
    assert value_errors and all(res == "failed: " + d.removeprefix("ValueError: ") for d, res in value_errors)
    asserts = [res for (v, d), res in by_detail.items() if v == "failed" and d and d.startswith("AssertionError")]
    assert asserts, by_detail
    bare = [res for (v, d), res in by_detail.items() if d in ("AssertionError", "AssertionError: ")]
    assert all(res == "failed: " for res in bare), bare
    assert not any(r["result"].startswith("failed: AssertionError") or r["result"].startswith("failed: ValueError")
                   for r in rows)


# ---------------------------------------------------------------- the dashboard


@pytest.fixture(scope="module")
def leaderboard_runs(stack: Stack, client: httpx.Client, subset_run: dict[str, Any]) -> list[dict[str, Any]]:  # noqa: F811
    """Two more runs on the 40-problem dataset, at other temperatures: three runs in all."""
    problems = humaneval_slice(DATASET_PROBLEMS)
    dataset_id = subset_run["dataset"]["id"]
    stack.start_worker(concurrency=2)
    try:
        runs = [submit(client, dataset_id, "board-low", {"temperature": 0.2}, make_samples(problems, N, 0.6, 11)),
                submit(client, dataset_id, "board-high", {"temperature": 1.0, "top_p": 0.95}, make_samples(problems, N, 0.2, 12))]
        runs = [wait_for_run(client, run["id"]) for run in runs]
    finally:
        stack.stop_workers()
    assert all(run["status"] == "completed" for run in runs), runs
    return [subset_run["run"], *runs]


def test_leaderboard(session: BrowserContext, client: httpx.Client, subset_run: dict[str, Any],  # noqa: F811
                     leaderboard_runs: list[dict[str, Any]]) -> None:
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/leaderboard?dataset_id={subset_run['dataset']['id']}")
    rows = page.locator("#leaderboard-body tr[data-run-id]")
    expect(rows).to_have_count(2)  # the full runs; the subset run is ranked in a table of its own
    subset_row = page.locator(f'#leaderboard-subset-body tr[data-run-id="{leaderboard_runs[0]["id"]}"]')
    expect(subset_row).to_have_count(1)
    expect(page.locator("#leaderboard-chart path.curve-line")).to_have_count(2, timeout=30_000)
    expect(page.locator("#leaderboard-chart .chart-legend li")).to_have_count(2)
    pass1 = {}
    for run in leaderboard_runs:
        metrics = client.get(f"/v1/runs/{run['id']}/metrics", params={"k": "1,5"}).json()["metrics"]
        pass1[run["id"]] = metrics[0]["pass_at_k"]
        cell = page.locator(f'tr[data-run-id="{run["id"]}"] td[data-k="1"]')
        expect(cell.locator(".estimate")).to_have_text(js_pct(metrics[0]["pass_at_k"]["estimate"]), timeout=30_000)
        expect(cell.locator(".ci")).to_have_text(f"[{js_pct(pass1[run['id']]['ci_low'])}, {js_pct(pass1[run['id']]['ci_high'])}]")
        hat5 = page.locator(f'tr[data-run-id="{run["id"]}"] td[data-k="5"]')
        expect(hat5.locator(".estimate")).to_have_text(js_pct(metrics[1]["pass_at_k"]["estimate"]))
    # Sampling settings beside each row; the subset run says so.
    high = page.locator(f'#leaderboard-body tr[data-run-id="{leaderboard_runs[2]["id"]}"]')
    expect(high.locator(".sampling-cell")).to_have_text("temperature=1 · top_p=0.95")
    expect(subset_row.locator(".subset-flag")).to_be_visible()
    # Sorted by pass@1, highest first; a click reverses it.
    order = sorted((rid for rid in pass1 if rid != leaderboard_runs[0]["id"]), key=lambda rid: -pass1[rid]["estimate"])
    assert [rows.nth(i).get_attribute("data-run-id") for i in range(2)] == order
    page.click('#leaderboard-head th[data-sort="k1"]')
    assert [rows.nth(i).get_attribute("data-run-id") for i in range(2)] == order[::-1]
    shot(page, "leaderboard")
    # pass^k instead of pass@k; one temperature at a time (runs are never pooled).
    page.select_option("#lb-metric", "pass_hat_k")
    expect(page.locator('#leaderboard-head th[data-sort="k5"]')).to_have_text("pass^5")
    page.select_option("#lb-temperature", "0.2")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-run-id", leaderboard_runs[1]["id"])
    assert not errors, errors
    page.close()


def test_run_management_and_downloads(session: BrowserContext, client: httpx.Client,  # noqa: F811
                                      leaderboard_runs: list[dict[str, Any]], tmp_path: Path) -> None:
    run_id = leaderboard_runs[1]["id"]
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run_id}")
    expect(page.locator("#stat-pass1-ci .ci")).not_to_have_text("", timeout=30_000)
    page.click("#run-manage summary")
    page.fill("#edit-name", "low temperature run")
    page.fill("#edit-tags", "board, low-t")
    page.fill("#edit-note", "checked by hand")
    page.click("#edit-save")
    expect(page.locator("#edit-status")).to_have_text("saved")
    expect(page.locator("#run-name")).to_have_text("low temperature run")
    run = client.get(f"/v1/runs/{run_id}").json()
    assert (run["display_name"], run["tags"], run["note"], run["archived"]) == (
        "low temperature run", ["board", "low-t"], "checked by hand", False)

    # Downloads parse back to what the API says.
    with page.expect_download() as download:
        page.click("#dl-problems-csv")
    path = tmp_path / "problems.csv"
    download.value.save_as(path)
    import csv

    rows = list(csv.DictReader(path.open()))
    api_rows = client.get(f"/v1/runs/{run_id}/problems", params={"k": "1"}).json()["problems"]
    assert [(r["problem_id"], int(r["n"]), int(r["c"])) for r in rows] == [(p["problem_id"], p["n"], p["c"]) for p in api_rows]
    with page.expect_download() as download:
        page.click("#dl-metrics-json")
    downloaded = json.loads(Path(download.value.path()).read_text())
    ks = ",".join(str(m["k"]) for m in downloaded["metrics"])
    assert downloaded["metrics"] == client.get(f"/v1/runs/{run_id}/metrics", params={"k": ks}).json()["metrics"]
    with page.expect_download() as download:
        page.click("#dl-metrics-csv")
    metric_rows = list(csv.DictReader(Path(download.value.path()).open()))
    first = next(r for r in metric_rows if r["k"] == "1" and r["metric"] == "pass_at_k")
    assert float(first["ci_low"]) == downloaded["metrics"][0]["pass_at_k"]["ci_low"] and first["interval"] == "95 % BCa"

    # The runs list: search, tags, archive.
    page.goto("/?q=low-t")
    expect(page.locator("#runs-body tr[data-run-id]")).to_have_count(1)
    expect(page.locator(f'tr[data-run-id="{run_id}"] .run-link')).to_have_text("low temperature run")
    page.goto(f"/runs/{run_id}")
    page.click("#run-manage summary")
    page.check("#edit-archived")
    page.click("#edit-save")
    expect(page.locator("#edit-status")).to_have_text("saved")
    page.goto("/")
    expect(page.locator("#runs-body tr[data-run-id]").first).to_be_visible()
    expect(page.locator(f'tr[data-run-id="{run_id}"]')).to_have_count(0)
    page.check("#filter-archived")
    page.fill("#filter-search", "low-t")
    archived_row = page.locator(f'tr[data-run-id="{run_id}"]')
    expect(archived_row.locator(".status-cell .badge.status-completed")).to_have_text("completed")
    expect(archived_row.locator(".badge.tiny:not(.flag-badge)")).to_have_text("archived")
    client.patch(f"/v1/runs/{run_id}", json={"archived": False}).raise_for_status()
    page.select_option("#filter-sort", "score")
    expect(page.locator("#runs-body tr[data-run-id] .pass1").first).to_be_visible(timeout=30_000)
    assert not errors, errors
    page.close()


def test_problem_page_items(session: BrowserContext, client: httpx.Client, leaderboard_runs: list[dict[str, Any]]) -> None:  # noqa: F811
    run_id = leaderboard_runs[2]["id"]
    problems = client.get(f"/v1/runs/{run_id}/problems", params={"k": "1"}).json()["problems"]
    mixed = next(p for p in problems if 0 < p["c"] < p["n"])
    samples = client.get(f"/v1/runs/{run_id}/samples", params={"problem_id": mixed["problem_id"], "include": "completion"}).json()["items"]
    failing = next(s for s in samples if s["verdict"] != "passed" and s["index"] > 0)
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run_id}/problems/{mixed['problem_id']}")
    page.locator(f'.sample-row[data-sample-id="{failing["id"]}"]').click()
    assert f"sample={failing['id']}" in page.url
    page.reload()
    expect(page.locator(f'.sample-row[data-sample-id="{failing["id"]}"]')).to_have_class("sample-row selected")
    if "File \"" in (failing["stderr"] or ""):
        expect(page.locator("#sample-stderr")).to_contain_text("File \"")
    # Identical programs grouped, with counts adding up to the samples.
    page.click("#group-identical")
    copies = page.locator("#identical-table td.copies")
    expect(copies.first).to_be_visible()
    distinct = len({s["completion"] for s in samples})
    expect(copies).to_have_count(distinct)
    assert sum(int(t) for t in copies.all_inner_texts()) == len(samples)
    # Long test lines wrap instead of widening the box.
    page.click("#tests summary")
    assert page.evaluate("(() => { const pre = document.getElementById('test-code'); return pre.scrollWidth <= pre.clientWidth + 1; })()")
    shot(page, "problem-page")
    assert not errors, errors
    page.close()


def test_compare_page_items(session: BrowserContext, client: httpx.Client, leaderboard_runs: list[dict[str, Any]]) -> None:  # noqa: F811
    base, candidate = leaderboard_runs[1]["id"], leaderboard_runs[2]["id"]
    report = client.get("/v1/compare", params={"base": base, "candidate": candidate, "k": "1"}).json()
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/compare?base={base}&candidate={candidate}&k=1")
    expect(page.locator("#compare-metrics tbody tr")).to_have_count(1, timeout=30_000)
    # Overlapping points share a dot sized by count; the counts add up to the problems; a legend says so.
    counts = [int(c) for c in page.locator("#compare-scatter circle.dot").evaluate_all("(els) => els.map((e) => e.dataset.count)")]
    assert sum(counts) == len(report["per_problem"]["items"]) and max(counts) > 1, counts
    expect(page.locator("#compare-scatter .scatter-legend")).to_contain_text("candidate better")
    # Axis ticks read as signed percentage points.
    ticks = page.locator("#compare-forest text.tick").evaluate_all("(els) => els.map((e) => e.textContent)")
    assert any(t.startswith("−") and t.endswith(" pp") for t in ticks) and any(t.startswith("+") for t in ticks), ticks
    # The per-problem table sits under the paired table (same column): no blank area beside the scatter.
    paired = page.locator(".compare-main > section").first.bounding_box()
    table = page.locator(".compare-main > section").nth(1).bounding_box()
    assert paired and table and table["y"] - (paired["y"] + paired["height"]) < 40
    # The run pickers are searchable.
    page.fill("#compare-search", "board-high")
    visible = page.locator("#compare-base option:not([hidden])").all_inner_texts()
    assert any("board-high" in v for v in visible) and not any("surface" in v for v in visible), visible
    # Downloads parse back.
    with page.expect_download() as download:
        page.click("#dl-compare-json")
    assert json.loads(Path(download.value.path()).read_text())["per_problem"] == report["per_problem"]
    with page.expect_download() as download:
        page.click("#dl-compare-csv")
    import csv

    rows = list(csv.DictReader(Path(download.value.path()).open()))
    assert sorted(r["problem_id"] for r in rows) == sorted(i["problem_id"] for i in report["per_problem"]["items"])
    shot(page, "compare-page")
    assert not errors, errors
    page.close()
