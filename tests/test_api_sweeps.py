"""GET /v1/sweeps: one model at several temperatures (seed 001: pass@1 falls, pass@k rises), never pooled."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from service.statistics.sweeps import sweep_summary
from tests.conftest import create_dataset, create_run
from tests.test_api_compare import _bulk_verdicts

PROBLEMS = 40


async def _run_at(
    client: httpx.AsyncClient, db_session: AsyncSession, dataset_id: str, temperature: float, passes: list[int],
    model: str = "m",
) -> dict[str, Any]:
    keys = [f"s/{i}" for i in range(PROBLEMS)]
    run = await create_run(client, dataset_id, {k: 10 for k in keys}, model=model, sampling={"temperature": temperature})
    verdicts = {k: ["passed"] * c + ["failed"] * (10 - c) for k, c in zip(keys, passes, strict=True)}
    await _bulk_verdicts(db_session, run["id"], verdicts)
    return run


@pytest.fixture
async def sweep_runs(client: httpx.AsyncClient, db_session: AsyncSession) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    dataset = await create_dataset(client, [f"s/{i}" for i in range(PROBLEMS)])
    cold = [10 if i < 24 else 0 for i in range(PROBLEMS)]  # pass@1 = pass@10 = 0.6
    warm = [5 if i < 32 else 0 for i in range(PROBLEMS)]  # pass@1 = 0.4, pass@10 = 0.8
    hot = [2 if i < 36 else 0 for i in range(PROBLEMS)]  # pass@1 = 0.18, pass@10 = 0.9
    runs = [
        await _run_at(client, db_session, dataset["id"], 0.8, warm),
        await _run_at(client, db_session, dataset["id"], 1.2, hot),
        await _run_at(client, db_session, dataset["id"], 0.2, cold),
    ]
    return dataset, runs


async def test_best_temperature_per_k_and_envelope(client: httpx.AsyncClient, sweep_runs: Any) -> None:
    _, runs = sweep_runs
    response = await client.get(
        "/v1/sweeps", params={"runs": ",".join(r["id"] for r in runs), "k": "1,10", "resamples": 2000}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [r["temperature"] for r in body["runs"]] == [0.2, 0.8, 1.2]  # sorted, each its own curve
    curves = {r["temperature"]: {p["k"]: p["pass_at_k"]["estimate"] for p in r["curve"]} for r in body["runs"]}
    assert curves[0.2][1] == pytest.approx(0.6) and curves[0.8][1] == pytest.approx(0.4)
    assert curves[1.2][1] == pytest.approx(0.18)
    assert curves[0.2][10] == pytest.approx(0.6) and curves[1.2][10] == pytest.approx(0.9)
    best = {b["k"]: b for b in body["best"]}
    assert best[1]["best_temperature"] == 0.2 and best[10]["best_temperature"] == 1.2
    assert best[1]["envelope"] == pytest.approx(0.6) and best[10]["envelope"] == pytest.approx(0.9)
    for b in body["best"]:
        assert sum(b["probability_best"]) == pytest.approx(1.0)
        assert b["envelope_ci_low"] <= b["envelope"] <= b["envelope_ci_high"]
        assert b["margin_ci_low"] <= b["margin"] <= b["margin_ci_high"]
    assert best[1]["margin"] == pytest.approx(0.2)  # 0.6 - 0.4, the runner-up at k = 1 is T = 0.8
    assert best[10]["probability_best"][2] > 0.5
    assert not best[1]["tie"] and best[1]["tied_run_ids"] == [best[1]["best_run_id"]]


async def test_two_runs_alike_are_a_tie_whatever_their_order(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, [f"s/{i}" for i in range(PROBLEMS)])
    passes = [(3 * i) % 11 for i in range(PROBLEMS)]
    cold = await _run_at(client, db_session, dataset["id"], 0.2, passes)
    warm = await _run_at(client, db_session, dataset["id"], 0.8, passes)
    answers = []
    for order in ((cold, warm), (warm, cold)):
        response = await client.get(
            "/v1/sweeps", params={"runs": ",".join(r["id"] for r in order), "k": "1,10", "resamples": 2000}
        )
        assert response.status_code == 200, response.text
        answers.append(response.json()["best"])
    assert answers[0] == answers[1]  # the runs come back sorted by temperature either way
    for best in answers[0]:
        assert best["probability_best"] == [0.5, 0.5]
        assert best["tie"] and best["tied_run_ids"] == [cold["id"], warm["id"]] and best["margin"] == 0.0


def test_sweep_intervals_share_the_resamples_of_one_bootstrap() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((50, 2)), rng.random((50, 2))
    summary = sweep_summary([a, b], [1, 5], resamples=500, seed=3)
    assert summary.intervals[0][0].estimate == pytest.approx(a[:, 0].mean())
    # run b at k = 5 equals the same column bootstrapped next to run a (one index matrix for all)
    from service.statistics import bootstrap_means

    together = bootstrap_means(np.hstack([a, b]), resamples=500, seed=3)
    assert summary.intervals[1][1] == together[3]


async def test_sweeps_refuse_two_models_and_bad_ids(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, [f"s/{i}" for i in range(PROBLEMS)])
    one = await _run_at(client, db_session, dataset["id"], 0.2, [1] * PROBLEMS, model="a")
    two = await _run_at(client, db_session, dataset["id"], 0.8, [1] * PROBLEMS, model="b")
    response = await client.get("/v1/sweeps", params={"runs": f"{one['id']},{two['id']}"})
    assert response.status_code == 422 and "one model's runs" in response.text
    response = await client.get("/v1/sweeps", params={"runs": f"{one['id']},nope"})
    assert response.status_code == 422 and "'nope' is not a run id" in response.text
    response = await client.get("/v1/sweeps", params={"runs": one["id"]})
    assert response.status_code == 422 and "2 to 20" in response.text
