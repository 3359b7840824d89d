"""A POST retried with the same Idempotency-Key creates nothing twice."""

from __future__ import annotations

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import create_dataset


async def test_retried_run_is_created_once(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    dataset = await create_dataset(client, ["a", "b"])
    body = {"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0.2},
            "samples": [{"problem_id": "a", "completion": "    return x\n"}] * 3}
    headers = {"Idempotency-Key": "run-7f3c"}
    first = await client.post("/v1/runs", json=body, headers=headers)
    again = await client.post("/v1/runs", json=body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"]
    # This dataset's: other tests' committed runs share the database.
    params = {"dataset": dataset["id"]}
    runs = (await db_session.execute(text("SELECT count(*) FROM runs WHERE dataset_id = :dataset"), params)).scalar_one()
    samples = (await db_session.execute(text(
        "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.dataset_id = :dataset"), params)).scalar_one()
    assert (runs, samples) == (1, 3)

    different = await client.post("/v1/runs", json={**body, "model": "other"}, headers=headers)
    assert different.status_code == 422 and "Idempotency-Key" in different.text
    fresh = await client.post("/v1/runs", json=body, headers={"Idempotency-Key": "run-8a00"})
    assert fresh.status_code == 202 and fresh.json()["id"] != first.json()["id"]


async def test_retried_dataset_replays_its_first_response(client: httpx.AsyncClient) -> None:
    body = {"name": "idem", "problems": [{"id": "p", "prompt": "def f():\n", "test": "def check(c):\n    pass\n", "entry_point": "f"}]}
    headers = {"Idempotency-Key": "ds-1"}
    first = await client.post("/v1/datasets", json=body, headers=headers)
    again = await client.post("/v1/datasets", json=body, headers=headers)
    assert first.status_code == again.status_code == 201 and again.json() == first.json()


async def test_a_rejected_request_does_not_burn_the_key(client: httpx.AsyncClient) -> None:
    dataset = await create_dataset(client, ["a"])
    headers = {"Idempotency-Key": "retry-after-fix"}
    bad = await client.post("/v1/runs", json={"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0},
                                              "samples": [{"problem_id": "zzz", "completion": "x"}]}, headers=headers)
    assert bad.status_code == 422
    good = await client.post("/v1/runs", json={"dataset_id": dataset["id"], "model": "m", "sampling": {"temperature": 0},
                                               "samples": [{"problem_id": "a", "completion": "x"}]}, headers=headers)
    assert good.status_code == 202
