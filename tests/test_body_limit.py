"""Oversized bodies get a clear 413 before anything is parsed or stored."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from fastapi import FastAPI

from service.api.app import create_app
from service.core.settings import Settings


async def test_declared_and_streamed_oversized_bodies_are_refused(settings: Settings) -> None:
    app: FastAPI = create_app(settings.model_copy(update={"max_body_bytes": 2048}))
    # The cap applies before authentication: an anonymous flood is refused just as early.
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        declared = await client.post("/v1/datasets", content=b"x" * 5000, headers={"content-type": "application/json"})
        assert declared.status_code == 413 and "2048 bytes" in declared.json()["detail"]

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(5):
                yield b"y" * 1000

        streamed = await client.post("/v1/datasets", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413
        small = await client.post("/v1/datasets", json={"name": "x"})
        assert small.status_code != 413  # under the cap: on to auth and validation as usual
