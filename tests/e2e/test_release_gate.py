"""Release rules for real: runs with costs, latencies and confidences judged by real workers, the rule's
verdict from `passk gate` (exit 0 / 1 / 2, 3 without a verdict) and on the compare page in Chromium,
and the run page's cost, latency and calibration panels with the reliability diagram.
"""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from service.api.release.schemas import SHIP_GATE_CLAUSES
from tests.e2e.conftest import Stack, wait_for_run
from tests.e2e.test_cli import passk
from tests.e2e.test_dashboard import _console_errors, _new_context, browser, client, login, shot  # noqa: F401  (fixtures)
from tests.e2e.test_dashboard_pages import assert_curves_inside_bands
from tests.test_api_release_rules import _outcomes

pytestmark = pytest.mark.slow

PROBLEMS = 60
RULE = {
    "name": "e2e-ship-gate",
    "description": "seed 004: pass@1 must not drop by more than 1 point, cost per success must not rise more "
    "than 10 %, p95 latency under 2.5 s",
    "clauses": SHIP_GATE_CLAUSES,
}


def _samples(keys: list[str], outcomes: list[int], rng: np.random.Generator) -> list[dict[str, Any]]:
    """Two samples per problem, alike: `return x` passes the test, `return 0` fails it; real workers judge them.
    Two, so that the p95 latency's upper bound lies inside the 120 latencies observed (of 60 the largest would
    be needed, and the truth may lie beyond it: an open bound, which no rule can pass)."""
    return [
        {
            "problem_id": key,
            "completion": "    return x\n" if passes else "    return 0\n",
            "cost": 0.012,
            "latency_ms": round(float(rng.uniform(400, 1500)), 1),
            "input_tokens": 120,
            "output_tokens": int(rng.integers(20, 80)),
            "confidence": float(rng.choice([0.6, 0.8, 0.9] if passes else [0.2, 0.4, 0.6])),
        }
        for key, passes in zip(keys, outcomes, strict=True)
        for _ in range(2)
    ]


@pytest.fixture(scope="module")
def gate(stack: Stack, client: httpx.Client) -> dict[str, Any]:
    rng = np.random.default_rng(12)
    keys = [f"gate/{i}" for i in range(PROBLEMS)]
    problems = [
        {"id": key, "prompt": f"def f{i}(x):\n", "test": "def check(candidate):\n    assert candidate(1) == 1\n",
         "entry_point": f"f{i}"}
        for i, key in enumerate(keys)
    ]
    dataset = client.post("/v1/datasets", json={"name": "gate-e2e", "problems": problems}).json()
    base_out = [int(o) for o in rng.random(PROBLEMS) < 0.6]

    def submit(model: str, outcomes: list[int], temperature: float = 0.2) -> dict[str, Any]:
        body = {"dataset_id": dataset["id"], "model": model, "sampling": {"temperature": temperature},
                "currency": "USD", "samples": _samples(keys, outcomes, rng)}
        response = client.post("/v1/runs", json=body)
        assert response.status_code == 202, response.text
        return response.json()

    base = submit("model-a", base_out)
    # The rule is stored before any candidate run.
    response = client.post("/v1/release-rules", json=RULE)
    assert response.status_code in (200, 201), response.text
    candidates = {
        "pass": submit("model-b-better", _outcomes(base_out, 6, 0)),
        "fail": submit("model-b-worse", _outcomes(base_out, 0, 15)),
        "not_enough_data": submit("model-b-same", _outcomes(base_out, 2, 2)),
    }
    # The base model at two more temperatures: a sweep for its run page.
    sweep = [submit("model-a", _outcomes(base_out, 0, 8), 0.8), submit("model-a", _outcomes(base_out, 0, 16), 1.2)]
    stack.start_worker(concurrency=2)
    try:
        runs = [wait_for_run(client, run["id"]) for run in (base, *candidates.values(), *sweep)]
    finally:
        stack.stop_workers()
    assert all(run["status"] == "completed" for run in runs), runs
    return {"base": base, "candidates": candidates, "base_outcomes": base_out}


def test_gate_api_and_cli_exit_codes(stack: Stack, client: httpx.Client, gate: dict[str, Any]) -> None:
    base = gate["base"]["id"]
    expected_exit = {"pass": 0, "fail": 1, "not_enough_data": 2}
    for expected, candidate in gate["candidates"].items():
        params = {"base": base, "candidate": candidate["id"]}
        evaluation = client.get(f"/v1/release-rules/{RULE['name']}/evaluate", params=params).json()
        assert evaluation["verdict"] == expected, evaluation["clauses"]
        assert evaluation["rule_written_before_candidate"] is True
        result = passk(stack, "gate", RULE["name"], "--base", base, "--candidate", candidate["id"])
        assert result.returncode == expected_exit[expected], result.stdout + result.stderr
        assert f"verdict: {expected.upper()}" in result.stdout
        assert "before the candidate run" in result.stdout
    unknown = passk(stack, "gate", "no-such-rule", "--base", base, "--candidate", base)
    assert unknown.returncode == 3 and "no-such-rule" in unknown.stderr and "Traceback" not in unknown.stderr


def test_run_page_cost_latency_and_reliability_diagram(
    stack: Stack, browser: Browser, client: httpx.Client, gate: dict[str, Any]  # noqa: F811
) -> None:
    run_id = gate["base"]["id"]
    metrics = client.get(f"/v1/runs/{run_id}/metrics", params={"k": 1, "resamples": 2000}).json()
    passes = sum(gate["base_outcomes"])
    assert metrics["cost"]["per_success"]["estimate"] == pytest.approx(0.012 * PROBLEMS / passes)
    context = _new_context(browser, stack)
    page = context.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run_id}")
    page.wait_for_url("**/login?next=*")
    login(page, stack.api_key, expect_path=f"/runs/{run_id}")
    expect(page.locator("#figures-panel")).to_be_visible(timeout=30_000)
    cost = metrics["cost"]["per_success"]["estimate"]
    expect(page.locator("#stat-cost-per-success .value")).to_have_text(f"{cost:.4g}")
    filled = [b for b in metrics["calibration"]["reliability_diagram"] if b["count"]]
    expect(page.locator("#reliability-diagram svg circle.bin-dot")).to_have_count(len(filled))
    expect(page.locator("#reliability-diagram svg line.diagonal")).to_have_count(1)
    # the ECE with its interval, labelled biased, beside what a perfectly calibrated model shows
    ece = metrics["calibration"]["ece"]
    expect(page.locator("#cal-ece")).to_contain_text(f"{ece['estimate']:.3g} [")
    expect(page.locator("#cal-ece-calibrated")).to_contain_text(f"{ece['calibrated']['expected']:.3g}")
    expect(page.locator("#cal-ece-label")).to_contain_text("BIASED")
    expect(page.locator("#figures-caption")).to_contain_text("Woodruff")
    p95 = metrics["latency"]["p95_ms"]["estimate"]
    # the same model at 0.2, 0.8 and 1.2: the sweep panel, one curve per temperature, best is T=0.2 at k = 1
    expect(page.locator("#sweep-panel")).to_be_visible(timeout=30_000)
    expect(page.locator("#sweep-chart path.curve-line")).to_have_count(3)
    expect(page.locator("#sweep-chart .legend")).to_contain_text("T=0.2 (this run)")
    assert_curves_inside_bands(page, "#sweep-chart", 3)
    expect(page.locator("#sweep-best tbody tr").first).to_contain_text("T=0.2")
    expect(page.locator("#stat-latency-p95 .value")).to_have_text(f"{p95 / 1000:.2f} s" if p95 >= 1000 else f"{p95:.0f} ms")
    shot(page, "run-calibration")
    assert not errors, errors
    assert not context.offsite  # type: ignore[attr-defined]
    context.close()


def test_compare_page_shows_the_rule_verdict(
    stack: Stack, browser: Browser, client: httpx.Client, gate: dict[str, Any]  # noqa: F811
) -> None:
    base = gate["base"]["id"]
    context = _new_context(browser, stack)
    page = context.new_page()
    errors = _console_errors(page)
    page.goto("/login")
    login(page, stack.api_key)
    for expected, text in (("fail", "FAIL"), ("not_enough_data", "NOT ENOUGH DATA"), ("pass", "PASS")):
        candidate = gate["candidates"][expected]["id"]
        page.goto(f"/compare?base={base}&candidate={candidate}&k=1&rule={RULE['name']}")
        expect(page.locator("#release-verdict-badge")).to_have_text(text, timeout=30_000)
        expect(page.locator("#release-clauses tbody tr")).to_have_count(3)
        expect(page.locator("#release-verdict")).to_contain_text("written before the candidate run")
        expect(page.locator("#ship-figures tbody tr")).to_have_count(4)  # pass@1, cost per success, p95, Brier
        report = client.get(
            "/v1/compare", params={"base": base, "candidate": candidate, "k": 1, "resamples": 2000, "items_limit": 0}
        ).json()
        mdd = report["metrics"][0]["detectability"]["minimum_detectable_difference"]
        expect(page.locator("#ship-mdd")).to_contain_text(f"{100 * mdd:.1f} pp")
        expect(page.locator("#ship-mdd")).to_contain_text("Planning figure, not a verdict")
        expect(page.locator("#compare-rule")).to_have_value(RULE["name"])
        shot(page, f"compare-verdict-{expected}")
    assert not errors, errors
    context.close()
