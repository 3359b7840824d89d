"""GET /v1/runs/{id}/metrics with per-sample metadata: cost, latency, tokens, steps, calibration (real Postgres)."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import create_dataset
from tests.test_api_compare import _bulk_verdicts


async def _run_with_metadata(
    client: httpx.AsyncClient,
    db_session: AsyncSession,
    dataset_id: str,
    keys: list[str],
    outcomes: list[list[int]],
    metadata: list[list[dict[str, Any]]],
    **body: Any,
) -> dict[str, Any]:
    samples = [
        {"problem_id": key, "completion": f"    return x  # {key} {i}\n", **meta}
        for key, metas in zip(keys, metadata, strict=True)
        for i, meta in enumerate(metas)
    ]
    payload = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.8}, "samples": samples, **body}
    response = await client.post("/v1/runs", json=payload)
    assert response.status_code == 202, response.text
    run = response.json()
    verdicts = {k: ["passed" if o else "failed" for o in out] for k, out in zip(keys, outcomes, strict=True)}
    await _bulk_verdicts(db_session, run["id"], verdicts)
    return run


async def test_cost_latency_tokens_steps_and_calibration(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    rng = np.random.default_rng(7)
    keys = [f"p/{i}" for i in range(50)]
    dataset = await create_dataset(client, keys)
    outcomes = [[int(o) for o in rng.random(2) < 0.82] for _ in keys]
    latency = rng.lognormal(6.5, 0.6, (50, 2)).round(1)
    confidence = rng.choice([0.15, 0.4, 0.6, 0.9], (50, 2))
    metadata = [
        [
            {"cost": 0.012, "latency_ms": float(latency[i, j]), "input_tokens": 100 + j, "output_tokens": 40,
             "confidence": float(confidence[i, j]), "steps": 2 + j}
            for j in range(2)
        ]
        for i in range(50)
    ]
    run = await _run_with_metadata(client, db_session, dataset["id"], keys, outcomes, metadata, currency="USD")
    params = {"k": "1,2", "method": "percentile", "resamples": 1001, "seed": 3, "bins": 4}
    response = await client.get(f"/v1/runs/{run['id']}/metrics", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    passes = sum(map(sum, outcomes))

    cost = body["cost"]
    assert cost["currency"] == "USD" and cost["samples"] == 100 and cost["passes"] == passes
    assert cost["total"] == pytest.approx(1.2)
    assert cost["mean_per_sample"]["estimate"] == pytest.approx(0.012)
    assert cost["per_success"]["estimate"] == pytest.approx(1.2 / passes, rel=1e-12)
    # Same resampled problems as pass@k: with a constant cost, cost per solved problem at k = 1 is
    # 0.012 / pass@1 in every resample, so its bounds are 0.012 / pass@1's bounds (1001 resamples: no
    # interpolation between order statistics).
    pass1 = body["metrics"][0]["pass_at_k"]
    at1 = cost["at_k"][0]
    assert at1["per_problem"]["estimate"] == pytest.approx(0.012)
    assert at1["per_solved_problem"]["ci_low"] == pytest.approx(0.012 / pass1["ci_high"], rel=1e-12)
    assert at1["per_solved_problem"]["ci_high"] == pytest.approx(0.012 / pass1["ci_low"], rel=1e-12)
    assert cost["at_k"][1]["per_problem"]["estimate"] == pytest.approx(0.024)

    lat = body["latency"]
    expected = np.percentile(latency.ravel(), [50, 95, 99], method="inverted_cdf")
    assert [lat["p50_ms"]["estimate"], lat["p95_ms"]["estimate"], lat["p99_ms"]["estimate"]] == pytest.approx(expected)
    assert lat["p50_ms"]["ci_low"] <= lat["p50_ms"]["estimate"] <= lat["p50_ms"]["ci_high"]
    # Woodruff's interval, the same as the statistics module gives on these samples (no resampling)
    from service.statistics.operating import woodruff_percentiles

    (p95,) = woodruff_percentiles(np.repeat(np.arange(50), 2), latency.ravel(), 50, (0.95,), confidence=0.95)
    assert lat["p95_ms"]["method_used"] == "woodruff" and lat["p95_ms"]["resamples"] == 0
    assert (lat["p95_ms"]["ci_low"], lat["p95_ms"]["ci_high"]) == (p95.figure.ci_low, p95.figure.ci_high)
    # 100 samples: the p99 is the largest but one, its upper bound beyond anything observed (open) and said so
    assert lat["p99_ms"]["ci_high"] is None and "beyond the largest value" in lat["p99_ms"]["note"]

    assert body["tokens"]["mean_input"]["estimate"] == pytest.approx(100.5)
    assert body["tokens"]["total_output"] == 4000
    assert body["steps"]["mean"]["estimate"] == pytest.approx(2.5)
    assert body["steps"]["per_success"]["estimate"] == pytest.approx(250 / passes)

    cal = body["calibration"]
    f = confidence.ravel()
    o = np.array(outcomes, dtype=float).ravel()
    assert cal["samples"] == 100 and cal["bins"] == 4
    assert cal["brier"]["estimate"] == pytest.approx(float(np.mean((f - o) ** 2)))
    d = cal["decomposition"]
    # four confidence values in four bins of width 0.25: one value per bin, the three terms add up
    assert d["within_bin_variance"] == pytest.approx(0, abs=1e-15)
    assert d["reliability"] - d["resolution"] + d["uncertainty"] == pytest.approx(cal["brier"]["estimate"], abs=1e-12)
    diagram = cal["reliability_diagram"]
    assert [b["count"] for b in diagram] == [int(np.sum((f >= lo) & (f < lo + 0.25))) for lo in (0, 0.25, 0.5, 0.75)]
    expected_ece = sum(
        b["count"] / 100 * abs(b["accuracy"] - b["mean_confidence"]) for b in diagram if b["count"]
    )
    assert cal["ece_equal_width"] == pytest.approx(expected_ece)
    assert len(cal["reliability_diagram_equal_count"]) == 4
    # the ECE labelled biased, with its interval over problems and what a calibrated model would show
    ece = cal["ece"]
    assert ece["estimate"] == cal["ece_equal_width"] and ece["biased"] is True and "BIASED" in ece["label"]
    assert ece["interval"]["method_used"] == "basic bootstrap" and ece["interval"]["resamples"] == 1001
    assert ece["interval"]["ci_low"] <= ece["estimate"] or ece["interval"]["ci_low"] == 0.0
    assert 0 < ece["calibrated"]["expected"] < ece["calibrated"]["high"]


async def test_no_metadata_no_figures_and_no_pass_no_cost_per_success(
    client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    keys = ["a", "b"]
    dataset = await create_dataset(client, keys)
    plain = await _run_with_metadata(client, db_session, dataset["id"], keys, [[1], [0]], [[{}], [{}]])
    body = (await client.get(f"/v1/runs/{plain['id']}/metrics")).json()
    assert body["cost"] is None and body["latency"] is None and body["calibration"] is None

    failing = await _run_with_metadata(
        client, db_session, dataset["id"], keys, [[0], [0]], [[{"cost": 1}], [{"cost": 2}]], currency="EUR"
    )
    body = (await client.get(f"/v1/runs/{failing['id']}/metrics")).json()
    assert body["cost"]["mean_per_sample"]["estimate"] == 1.5
    per_success = body["cost"]["per_success"]
    assert per_success["estimate"] is None and per_success["method_used"] == "none"


async def test_bins_out_of_range_is_a_422(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a"])
    run = await _run_with_metadata(client, db_session, dataset["id"], ["a"], [[1]], [[{"confidence": 0.5}]])
    response = await client.get(f"/v1/runs/{run['id']}/metrics", params={"bins": 0})
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["query", "bins"]
