"""Release rules through the API: stored before the run, immutable, and pass / fail / not enough data on three cases."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.release.schemas import SHIP_GATE_CLAUSES
from tests.conftest import create_dataset
from tests.test_api_run_figures import _run_with_metadata

PROBLEMS = 200
# Seed 004's rule: pass@1 must not drop by more than 1 point (lower bound of the paired interval),
# cost per success must not rise more than 10 %, p95 latency under 2.5 s.
SHIP_GATE: dict[str, Any] = {"name": "ship-gate", "description": "seed 004", "clauses": SHIP_GATE_CLAUSES}


def _outcomes(base: list[int], wins: int, losses: int) -> list[int]:
    """The candidate's 0/1 outcomes: flips `wins` of the base's failures and `losses` of its passes."""
    out = list(base)
    failures = [i for i, o in enumerate(base) if o == 0]
    passes = [i for i, o in enumerate(base) if o == 1]
    for i in failures[:wins]:
        out[i] = 1
    for i in passes[:losses]:
        out[i] = 0
    return out


async def _submit(
    client: httpx.AsyncClient, db_session: AsyncSession, dataset: dict[str, Any], keys: list[str],
    outcomes: list[int], latency: np.ndarray, confidence: np.ndarray,
) -> dict[str, Any]:
    metadata = [
        [{"cost": 0.012, "latency_ms": float(latency[i]), "confidence": float(confidence[i]), "output_tokens": 50}]
        for i in range(len(keys))
    ]
    return await _run_with_metadata(
        client, db_session, dataset["id"], keys, [[o] for o in outcomes], metadata, currency="USD"
    )


@pytest.fixture
async def gate_runs(client: httpx.AsyncClient, db_session: AsyncSession) -> dict[str, Any]:
    rng = np.random.default_rng(4)
    keys = [f"task/{i}" for i in range(PROBLEMS)]
    dataset = await create_dataset(client, keys)
    base_out = [int(o) for o in rng.random(PROBLEMS) < 0.6]
    confidence = rng.choice([0.2, 0.5, 0.8], PROBLEMS)
    base = await _submit(
        client, db_session, dataset, keys, base_out, rng.uniform(400, 1500, PROBLEMS), confidence
    )
    response = await client.post("/v1/release-rules", json=SHIP_GATE)
    assert response.status_code == 201, response.text
    rule = response.json()
    cases = {
        # better: 12 wins, 2 losses; same cost per sample (so cheaper per success); fast
        "pass": (_outcomes(base_out, 12, 2), rng.uniform(400, 1500, PROBLEMS)),
        # pass@1 drops by 14 points: the whole paired interval is below -1 point
        "fail": (_outcomes(base_out, 2, 30), rng.uniform(400, 1500, PROBLEMS)),
        # 5 wins, 6 losses: -0.5 points, the interval straddles -1 point
        "not_enough_data": (_outcomes(base_out, 5, 6), rng.uniform(400, 1500, PROBLEMS)),
    }
    candidates = {
        name: await _submit(client, db_session, dataset, keys, out, latency, confidence)
        for name, (out, latency) in cases.items()
    }
    return {"dataset": dataset, "keys": keys, "base": base, "rule": rule, "candidates": candidates}


async def test_pass_fail_and_not_enough_data(client: httpx.AsyncClient, gate_runs: dict[str, Any]) -> None:
    base = gate_runs["base"]["id"]
    for expected, candidate in gate_runs["candidates"].items():
        response = await client.get(
            "/v1/release-rules/ship-gate/evaluate", params={"base": base, "candidate": candidate["id"]}
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["verdict"] == expected, (expected, body["clauses"])
        assert body["rule_written_before_candidate"] is True
        assert body["rule"]["created_at"] < body["candidate_created_at"]
        quality, cost, latency = body["clauses"]
        assert quality["figure"] == "pass@1 difference (candidate - base)" and quality["checked"] == "ci_low"
        assert quality["ci_low"] <= quality["estimate"] <= quality["ci_high"]
        assert "must not drop by more than 0.01" in quality["text"]
        assert cost["figure"] == "cost per success relative change (candidate / base - 1)"
        assert latency["figure"] == "p95 latency (ms) of the candidate" and latency["verdict"] == "pass"
        assert latency["ci_high"] < 2500
        if expected == "pass":
            assert [c["verdict"] for c in body["clauses"]] == ["pass", "pass", "pass"]
            assert quality["ci_low"] > -0.01
        elif expected == "fail":
            assert quality["verdict"] == "fail" and quality["ci_high"] < -0.01
            assert cost["verdict"] == "fail"  # 28 fewer passes at the same cost per sample: +~27 % per success
        else:
            assert quality["verdict"] == "not_enough_data"
            assert quality["ci_low"] < -0.01 < quality["ci_high"]
            assert "contains the threshold -0.01" in quality["reason"]


async def test_compare_page_data_carries_the_verdict(client: httpx.AsyncClient, gate_runs: dict[str, Any]) -> None:
    base = gate_runs["base"]["id"]
    candidate = gate_runs["candidates"]["fail"]["id"]
    body = (await client.get("/v1/compare", params={"base": base, "candidate": candidate, "k": "1", "rule": "ship-gate"})).json()
    assert body["release"]["verdict"] == "fail"
    assert set(body["figures"]) == {"mean_cost_per_sample", "cost_per_success", "latency_p95_ms", "brier"}
    # by id too
    rule_id = gate_runs["rule"]["id"]
    by_id = await client.get(f"/v1/release-rules/{rule_id}/evaluate", params={"base": base, "candidate": candidate})
    assert by_id.json()["verdict"] == "fail"


async def test_rule_written_after_the_candidate_is_flagged(
    client: httpx.AsyncClient, gate_runs: dict[str, Any]
) -> None:
    late = {**SHIP_GATE, "name": "late-gate"}
    assert (await client.post("/v1/release-rules", json=late)).status_code == 201
    params = {"base": gate_runs["base"]["id"], "candidate": gate_runs["candidates"]["pass"]["id"]}
    body = (await client.get("/v1/release-rules/late-gate/evaluate", params=params)).json()
    assert body["rule_written_before_candidate"] is False
    assert "after the candidate run was submitted" in body["warnings"][0]


async def test_rules_are_immutable(client: httpx.AsyncClient) -> None:
    first = await client.post("/v1/release-rules", json=SHIP_GATE)
    assert first.status_code == 201
    again = await client.post("/v1/release-rules", json=SHIP_GATE)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert again.json()["created_at"] == first.json()["created_at"]
    changed = {**SHIP_GATE, "clauses": SHIP_GATE["clauses"][:1]}
    response = await client.post("/v1/release-rules", json=changed)
    assert response.status_code == 409 and "immutable" in response.json()["detail"]
    listed = (await client.get("/v1/release-rules")).json()["items"]
    assert [r["name"] for r in listed] == ["ship-gate"] and len(listed[0]["clauses"]) == 3
    assert (await client.get("/v1/release-rules/nope")).status_code == 404


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ({"metric": "cost_per_success", "k": 1, "limit": "max", "threshold": 1}, "k applies to pass_at_k only"),
        ({"metric": "pass_at_k", "limit": "max_drop", "threshold": -0.01}, "must be at least 0"),
        ({"metric": "pass_at_k", "limit": "max_relative_increase", "threshold": 0.1}, "not ratios"),
        ({"metric": "pass_at_k", "limit": "min", "threshold": 70}, "fraction in [0, 1]"),
        ({"metric": "accuracy", "limit": "min", "threshold": 0.5}, "pass_at_k"),
        ({"metric": "brier", "limit": "max", "threshold": "0.2"}, ""),
        ({"metric": "brier", "limit": "below", "threshold": 0.2}, "max_drop"),
    ],
)
async def test_bad_clauses_are_422(client: httpx.AsyncClient, clause: dict[str, Any], message: str) -> None:
    response = await client.post("/v1/release-rules", json={"name": "bad", "clauses": [clause]})
    assert response.status_code == 422, response.text
    assert message in response.text
    assert (await client.get("/v1/release-rules")).json()["items"] == []
