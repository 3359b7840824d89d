"""Metrics API: verdicts written straight into the DB (as a worker would), estimates checked by hand."""

from __future__ import annotations

import time
import uuid
from math import comb
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import create_dataset, create_run, set_verdicts


def _verdicts(n: int, c: int, fail: str = "failed") -> list[str]:
    return ["passed"] * c + [fail] * (n - c)


async def _metrics(client: httpx.AsyncClient, run_id: str, **params: Any) -> httpx.Response:
    return await client.get(f"/v1/runs/{run_id}/metrics", params=params)


async def test_pass_at_k_and_pass_hat_k_match_hand_computed(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["p"])
    run = await create_run(client, dataset["id"], {"p": 10})
    await set_verdicts(db_session, run["id"], "p", _verdicts(10, 3, "error"))
    response = await _metrics(client, run["id"], k="1,2,3,5")
    assert response.status_code == 200, response.text
    body = response.json()
    by_k = {m["k"]: m for m in body["metrics"]}
    expected_at = {1: 0.3, 2: 1 - 21 / 45, 3: 1 - 35 / 120, 5: 1 - 21 / 252}
    expected_hat = {1: 0.3, 2: 1 / 15, 3: 1 / 120, 5: 0.0}
    for k in (1, 2, 3, 5):
        assert by_k[k]["pass_at_k"]["estimate"] == pytest.approx(expected_at[k], rel=1e-12)
        assert by_k[k]["pass_hat_k"]["estimate"] == pytest.approx(expected_hat[k], rel=1e-12, abs=1e-15)
        # One problem: nothing to resample, the interval is the point.
        assert by_k[k]["pass_at_k"]["ci_low"] == by_k[k]["pass_at_k"]["ci_high"] == by_k[k]["pass_at_k"]["estimate"]
    interval = by_k[1]["pass_at_k"]
    assert set(interval) >= {"estimate", "ci_low", "ci_high", "confidence", "standard_error", "method"}
    assert interval["confidence"] == 0.95
    assert (body["partial"], body["problems"], body["samples"], body["n_min"], body["n_max"]) == (False, 1, 10, 10, 10)
    assert body["run_id"] == run["id"] and body["dataset_id"] == dataset["id"] and body["sampling"] == {"temperature": 0.8}
    assert body["model"] == "test-model" and body["excluded_sandbox_errors"] == 0


async def test_mean_over_problems_with_an_interval(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    cs = [0, 3, 10, 7, 5]
    dataset = await create_dataset(client, [f"p{i}" for i in range(5)])
    run = await create_run(client, dataset["id"], {f"p{i}": 10 for i in range(5)})
    for i, c in enumerate(cs):
        await set_verdicts(db_session, run["id"], f"p{i}", _verdicts(10, c))
    body = (await _metrics(client, run["id"], k="1,3", confidence=0.9, resamples=2000)).json()
    at3 = body["metrics"][1]["pass_at_k"]
    assert at3["estimate"] == pytest.approx(sum(1 - comb(10 - c, 3) / comb(10, 3) for c in cs) / 5)
    assert at3["ci_low"] < at3["estimate"] < at3["ci_high"] and at3["confidence"] == 0.9
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(0.5)


async def test_k_larger_than_n_is_refused(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["big", "small/1", "small/2"])
    run = await create_run(client, dataset["id"], {"big": 20, "small/1": 4, "small/2": 4})
    await set_verdicts(db_session, run["id"], "big", _verdicts(20, 5))
    await set_verdicts(db_session, run["id"], "small/1", _verdicts(4, 1))
    await set_verdicts(db_session, run["id"], "small/2", _verdicts(4, 4))
    response = await _metrics(client, run["id"], k="1,5")
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", "k"]
    assert "k=5" in error["msg"] and "n=4" in error["msg"] and "small/1" in error["msg"] and "small/2" in error["msg"]
    assert error["input"] == {"k": 5, "n_min": 4, "problem_ids": ["small/1", "small/2"]}
    assert (await _metrics(client, run["id"], k="4")).status_code == 200


async def test_sandbox_errors_are_excluded_from_n(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["p", "q"])
    run = await create_run(client, dataset["id"], {"p": 10, "q": 2})
    await set_verdicts(db_session, run["id"], "p", ["passed"] * 3 + ["sandbox_error"] * 2 + ["failed"] * 5)
    await set_verdicts(db_session, run["id"], "q", ["sandbox_error", "sandbox_error"])
    body = (await _metrics(client, run["id"])).json()
    [error] = body["detail"]  # q has n=0: no k can be estimated for it, and we say so
    assert "n=0" in error["msg"] and "q" in error["input"]["problem_ids"] and "sandbox_error" in error["msg"]
    await set_verdicts(db_session, run["id"], "q", ["passed", "sandbox_error"])
    body = (await _metrics(client, run["id"])).json()
    assert body["samples"] == 8 + 1 and body["excluded_sandbox_errors"] == 3
    assert (body["n_min"], body["n_max"]) == (1, 8)
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx((3 / 8 + 1.0) / 2)
    problems = (await client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1,2"})).json()["problems"]
    assert [(p["problem_id"], p["n"], p["c"], p["by_verdict"]["sandbox_error"]) for p in problems] == [
        ("p", 8, 3, 2),
        ("q", 1, 1, 1),
    ]
    assert problems[1]["pass_at_k"] == {"1": 1.0, "2": None}


async def test_partial_while_unfinished(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    run = await create_run(client, dataset["id"], {"a": 4, "b": 4})
    body = (await _metrics(client, run["id"], k="1,2")).json()
    assert (body["partial"], body["problems"], body["problems_total"], body["metrics"]) == (True, 0, 2, [])
    assert "no problem has finished" in body["note"] and body["n_min"] is None
    await set_verdicts(db_session, run["id"], "a", _verdicts(4, 2))
    await set_verdicts(db_session, run["id"], "b", ["passed", None, None, None])
    body = (await _metrics(client, run["id"], k="1,2")).json()
    assert (body["partial"], body["problems"], body["problems_finished"], body["problems_total"]) == (True, 1, 1, 2)
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(0.5) and "partial" in body["note"]
    problems = (await client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1,2"})).json()
    assert problems["ks"] == [1, 2]
    assert [(p["problem_id"], p["done"], p["n"], p["pending"]) for p in problems["problems"]] == [
        ("a", True, 4, 0),
        ("b", False, 1, 3),
    ]
    assert problems["problems"][0]["pass_hat_k"] == {"1": 0.5, "2": pytest.approx(1 / 6)}
    assert problems["problems"][1]["pass_at_k"] == {"1": 1.0, "2": None}
    await set_verdicts(db_session, run["id"], "b", _verdicts(4, 1))
    body = (await _metrics(client, run["id"], k="1,2")).json()
    assert (body["partial"], body["problems"], body["note"]) == (False, 2, None)


async def test_cancelled_run_uses_problems_with_nothing_pending(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b", "c", "d"])
    run = await create_run(client, dataset["id"], {"a": 3, "b": 3, "c": 3, "d": 3})
    await set_verdicts(db_session, run["id"], "a", _verdicts(3, 3))
    await set_verdicts(db_session, run["id"], "b", ["failed"])
    await set_verdicts(db_session, run["id"], "d", ["sandbox_error"])  # no model verdict before the cancel
    assert (await client.post(f"/v1/runs/{run['id']}/cancel")).status_code == 200
    body = (await _metrics(client, run["id"])).json()
    assert (body["status"], body["partial"], body["problems"], body["problems_total"]) == ("cancelled", True, 2, 4)
    assert (body["n_min"], body["n_max"]) == (1, 3) and "cancelled" in body["note"]
    assert body["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(0.5)


async def test_seed_reproducibility(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"p{i}" for i in range(30)]
    dataset = await create_dataset(client, keys)
    run = await create_run(client, dataset["id"], {k: 10 for k in keys})
    for i, key in enumerate(keys):
        await set_verdicts(db_session, run["id"], key, _verdicts(10, (i * 7) % 11))
    params = {"k": "1,5", "resamples": 3000}
    first = (await _metrics(client, run["id"], seed=7, **params)).json()["metrics"]
    again = (await _metrics(client, run["id"], seed=7, **params)).json()["metrics"]
    other = (await _metrics(client, run["id"], seed=8, **params)).json()["metrics"]
    assert first == again
    assert first != other
    assert [m["pass_at_k"]["estimate"] for m in first] == [m["pass_at_k"]["estimate"] for m in other]


async def test_bad_parameters_are_named(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    run = await create_run(client, dataset["id"], {"a": 1})
    for params, field in [
        ({"k": "1,x"}, "k"), ({"k": "0"}, "k"), ({"k": ""}, "k"), ({"k": "1,,2"}, "k"), ({"k": "²"}, "k"),
        ({"confidence": 1}, "confidence"), ({"confidence": 0}, "confidence"),
        ({"resamples": 0}, "resamples"), ({"resamples": 100_001}, "resamples"), ({"seed": -1}, "seed"),
    ]:
        response = await _metrics(client, run["id"], **params)
        assert response.status_code == 422, params
        assert [e["loc"] for e in response.json()["detail"]] == [["query", field]], params
    missing = uuid.uuid4()
    for path in ("metrics", "problems"):
        response = await client.get(f"/v1/runs/{missing}/{path}")
        assert response.status_code == 404 and response.json() == {"detail": f"run {missing} not found"}


async def test_metrics_at_scale_are_fast(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    keys = [f"task/{i}" for i in range(1000)]
    dataset = await create_dataset(client, keys)
    samples = [{"problem_id": k, "completion": "    pass\n"} for _ in range(200) for k in keys]
    body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 1.0}, "samples": samples}
    response = await client.post("/v1/runs", json=body)
    assert response.status_code == 202
    run_id = response.json()["id"]
    await db_session.execute(
        text(
            "UPDATE samples SET state = 'done', "
            "verdict = CASE WHEN (id * 2654435761) % 97 < problem_id % 97 THEN 'passed' ELSE 'failed' END "
            "WHERE run_id = :id"
        ),
        {"id": run_id},
    )
    await db_session.commit()
    await db_session.execute(text("ANALYZE samples"))
    await _metrics(client, run_id)  # warm-up: first use of the thread pool, plan cache
    started = time.perf_counter()
    response = await _metrics(client, run_id, k="1,10,100", resamples=10_000)
    elapsed = time.perf_counter() - started
    print(f"\nmetrics for 1,000 problems x 200 samples: {elapsed:.3f} s")
    assert response.status_code == 200, response.text
    assert response.json()["samples"] == 200_000 and elapsed < 1.0
    started = time.perf_counter()
    response = await client.get(f"/v1/runs/{run_id}")
    print(f"GET run progress for 200,000 samples: {time.perf_counter() - started:.3f} s")
    assert response.json()["progress"]["done"] == 200_000
