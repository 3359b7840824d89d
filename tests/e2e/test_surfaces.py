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
    page.goto("/")
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
    expect(page.locator("#curve-caption")).to_contain_text("95 % BCa")
    assert not errors, errors
    page.close()
