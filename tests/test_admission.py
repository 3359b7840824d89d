"""Admission against a key's ceiling on real PostgreSQL: runs that fit under it by their sizes are admitted, a key
whose runs are larger than the ceiling but mostly finished is admitted by its queued samples, and a submission that
its queued samples do not leave room for is refused with a 429 that says how many are queued."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.settings import Settings
from tests.conftest import create_dataset, create_run, set_verdicts

CEILING = 10


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(env="test", database_url=database_url, max_queued_per_key=CEILING)


async def _post(client: httpx.AsyncClient, dataset_id: str, count: int) -> httpx.Response:
    samples = [{"problem_id": "a", "completion": f"    return x  # {i}\n"} for i in range(count)]
    body = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.8}, "samples": samples}
    return await client.post("/v1/runs", json=body)


async def test_admission_counts_the_queued_samples_of_a_key_whose_runs_are_larger_than_its_ceiling(
    client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    dataset = await create_dataset(client, ["a"])
    first = await create_run(client, dataset["id"], {"a": 8})  # 8 of 10: fits by the runs' sizes alone
    await set_verdicts(db_session, first["id"], "a", ["passed"] * 6)  # 2 still queued; the run is still active
    (status,) = (await db_session.execute(text("SELECT status FROM runs WHERE id = :id"), {"id": first["id"]})).one()
    assert status == "queued"

    second = await _post(client, dataset["id"], 5)  # the runs' sizes say 13; the queue holds 2 + 5
    assert second.status_code == 202, second.text

    refused = await _post(client, dataset["id"], 4)  # 7 queued + 4 > 10
    assert refused.status_code == 429, refused.text
    assert "this API key has 7 samples queued; 4 more would pass its ceiling of 10" in refused.json()["detail"]
    assert int(refused.headers["Retry-After"]) >= 1

    third = await _post(client, dataset["id"], 3)  # exactly to the ceiling
    assert third.status_code == 202, third.text
    queued = (await db_session.execute(
        text("SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id "
             "WHERE s.state = 'queued' AND r.id = ANY(CAST(:ids AS uuid[]))"),
        {"ids": [first["id"], second.json()["id"], third.json()["id"]]},
    )).scalar_one()
    assert queued == CEILING
