"""GET /v1/compare additions: MDD and problems needed (seed 004), paired cost per success and p95 latency."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import create_dataset
from tests.test_api_compare import _compare, fourteen_five  # noqa: F401  (fixture)
from tests.test_api_run_figures import _run_with_metadata


async def test_fourteen_five_detectability(client: httpx.AsyncClient, fourteen_five: tuple[Any, Any, Any]) -> None:
    _, base, candidate = fourteen_five
    body = (await _compare(client, base["id"], candidate["id"], k="1")).json()
    d = body["metrics"][0]["detectability"]
    assert d["discordance"] == pytest.approx(19 / 200)
    assert d["observed_difference"] == pytest.approx(0.045)
    assert round(d["standard_error"] * 100, 2) == 2.16
    assert round(d["minimum_detectable_difference"] * 100, 1) == 6.1
    assert d["detectable"] is False
    # a planning figure, and it says so wherever it is shown
    assert d["label"].startswith("planning figure") and "not a test of this comparison" in d["label"]
    assert (d["problems_needed"], d["more_problems_needed"]) == (369, 169)
    assert body["figures"] == {} and body["incremental_cost_per_success"] is None


async def test_paired_cost_per_success_and_p95_latency(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    rng = np.random.default_rng(11)
    keys = [f"q/{i}" for i in range(60)]
    dataset = await create_dataset(client, keys)
    base_out = [[int(o) for o in rng.random(2) < 0.7] for _ in keys]
    cand_out = [[int(o) for o in rng.random(2) < 0.8] for _ in keys]
    base_lat = rng.lognormal(6.8, 0.4, (60, 2)).round(1)
    cand_lat = rng.lognormal(7.0, 0.4, (60, 2)).round(1)

    def meta(cost: float, latency: np.ndarray) -> list[list[dict[str, Any]]]:
        return [[{"cost": cost, "latency_ms": float(latency[i, j])} for j in range(2)] for i in range(60)]

    base = await _run_with_metadata(
        client, db_session, dataset["id"], keys, base_out, meta(0.012, base_lat), currency="USD"
    )
    candidate = await _run_with_metadata(
        client, db_session, dataset["id"], keys, cand_out, meta(0.031, cand_lat), currency="USD"
    )
    response = await _compare(client, base["id"], candidate["id"], k="1", resamples=2000, seed=1)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["currency"] == "USD"
    cps = body["figures"]["cost_per_success"]
    b_pass, c_pass = sum(map(sum, base_out)), sum(map(sum, cand_out))
    assert cps["base"]["estimate"] == pytest.approx(0.012 * 120 / b_pass)
    assert cps["candidate"]["estimate"] == pytest.approx(0.031 * 120 / c_pass)
    assert cps["difference"]["estimate"] == pytest.approx(cps["candidate"]["estimate"] - cps["base"]["estimate"])
    rel = cps["relative_difference"]
    assert rel["estimate"] == pytest.approx(cps["candidate"]["estimate"] / cps["base"]["estimate"] - 1)
    assert rel["ci_low"] < rel["estimate"] < rel["ci_high"]

    p95 = body["figures"]["latency_p95_ms"]
    assert p95["base"]["estimate"] == np.percentile(base_lat, 95, method="inverted_cdf")
    assert p95["candidate"]["estimate"] == np.percentile(cand_lat, 95, method="inverted_cdf")
    assert p95["difference"]["ci_low"] <= p95["difference"]["estimate"] <= p95["difference"]["ci_high"]
    # each run's p95 with Woodruff's interval, the difference and ratio linearised over the shared problems
    assert p95["base"]["method_used"] == p95["candidate"]["method_used"] == "woodruff"
    assert p95["difference"]["method_used"] == p95["relative_difference"]["method_used"] == "woodruff, linearised"
    assert list(body["figures"]) == ["mean_cost_per_sample", "cost_per_success", "latency_p95_ms"]
    # seed 004's price of an extra success: delta cost per request / delta success rate
    pass1 = body["metrics"][0]
    expected = (0.031 - 0.012) / (pass1["candidate"]["estimate"] - pass1["base"]["estimate"])
    assert body["incremental_cost_per_success"] == pytest.approx(expected)


async def test_costs_in_two_currencies_are_not_compared(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = ["a", "b", "c"]
    dataset = await create_dataset(client, keys)
    outcomes = [[1], [0], [1]]
    base = await _run_with_metadata(
        client, db_session, dataset["id"], keys, outcomes, [[{"cost": 1, "latency_ms": 5}]] * 3, currency="USD"
    )
    candidate = await _run_with_metadata(
        client, db_session, dataset["id"], keys, outcomes, [[{"cost": 1, "latency_ms": 6}]] * 3, currency="EUR"
    )
    body = (await _compare(client, base["id"], candidate["id"])).json()
    assert "cost_per_success" not in body["figures"] and "latency_p95_ms" in body["figures"]
    assert any("USD and EUR" in w for w in body["warnings"])
