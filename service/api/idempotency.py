"""`Idempotency-Key` for POSTs: a client that retries after a timeout creates nothing twice.

The key is claimed by inserting its row in the request's own transaction, so a
failed request releases it, and a concurrent retry waits on the unique index
until the first request commits, then replays its response. Keys are the
caller's project's: another project's same string is another key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Header, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.exceptions import InvalidInput
from service.core.models import IdempotencyRecord
from service.api.auth.principal import Principal

IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        pattern=r"^[\x21-\x7e]+$",
        description="Any unique string (e.g. a UUID): a retry with the same key and body returns the first response.",
    ),
]


@dataclass(frozen=True)
class Replay:
    status_code: int
    body: Any


def _endpoint(request: Request) -> str:
    return f"{request.method} {request.url.path}"


async def claim(session: AsyncSession, request: Request, principal: Principal, key: str) -> Replay | None:
    """Claim `key` for this request; or, if it was used before, the response to give again."""
    digest = hashlib.sha256(await request.body()).hexdigest()
    inserted = await session.scalar(
        insert(IdempotencyRecord)
        .values(project_id=principal.project_id, api_key_id=principal.key_id, key=key, endpoint=_endpoint(request),
                request_sha256=digest)
        .on_conflict_do_nothing(index_elements=["project_id", "key"])
        .returning(IdempotencyRecord.id)
    )
    if inserted is not None:
        return None
    record = await session.scalar(
        select(IdempotencyRecord).where(IdempotencyRecord.project_id == principal.project_id,
                                        IdempotencyRecord.key == key)
    )
    assert record is not None  # the conflicting row is committed, or we could not be here
    if record.endpoint != _endpoint(request) or record.request_sha256 != digest:
        raise InvalidInput(
            ["header", "Idempotency-Key"],
            f"Idempotency-Key {key!r} was already used for a different request ({record.endpoint})",
            key,
        )
    return Replay(record.status_code or 200, record.response)


async def remember(session: AsyncSession, principal: Principal, key: str, status_code: int, body: Any) -> None:
    await session.execute(
        update(IdempotencyRecord)
        .where(IdempotencyRecord.project_id == principal.project_id, IdempotencyRecord.key == key)
        .values(status_code=status_code, response=body)
    )


async def respond_once(
    session: AsyncSession, request: Request, principal: Principal, key: str | None,
    produce: Callable[[], Awaitable[tuple[int, Any]]],
) -> JSONResponse:
    """Run `produce` (which returns a status code and a body) unless `key` was seen; then replay instead."""
    if key is not None and (replay := await claim(session, request, principal, key)) is not None:
        return JSONResponse(replay.body, status_code=replay.status_code)
    status_code, result = await produce()
    body = jsonable_encoder(result)
    if key is not None:
        await remember(session, principal, key, status_code, body)
    return JSONResponse(body, status_code=status_code)
