"""POST /v1/judge refuses a program PostgreSQL cannot store with a 422 that names it, and stores nothing."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.judge.schemas import EXAMPLE


async def test_a_program_the_database_cannot_store_is_a_422_naming_it(client: httpx.AsyncClient,
                                                                       db_session: AsyncSession) -> None:
    async def stored() -> tuple[int, int]:
        datasets = (await db_session.execute(text("SELECT count(*) FROM datasets"))).scalar_one()
        runs = (await db_session.execute(text("SELECT count(*) FROM runs"))).scalar_one()
        return datasets, runs

    before = await stored()
    for completion, reason in (("    return a + b\u0000\n", "NUL"), ("    return a + b  # \ud800\n", "unicode")):
        # As raw JSON: a lone surrogate is valid JSON text, though no UTF-8 encoder will send it as a character.
        body = json.dumps({**EXAMPLE, "completion": completion, "wait_s": 1}).encode()
        response = await client.post("/v1/judge", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 422, response.text
        (error,) = response.json()["detail"]
        assert error["loc"] == ["body", "completion"] and reason in error["msg"], error
    assert await stored() == before
