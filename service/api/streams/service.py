"""Which stream a /run_code or /v1/judge call joins, and a project's streams as GET /v1/streams shows them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.api.auth.principal import Principal
from service.api.streams.repository import StreamRepository
from service.api.streams.schemas import (
    HEADER,
    MAX_NAME,
    Bucket,
    Latency,
    StreamDetail,
    StreamList,
    StreamSummary,
    VerdictMix,
)
from service.core.exceptions import InvalidInput, NotFound

NAME = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._:@+-]{{0,{MAX_NAME - 1}}}$")
NAME_RULE = f"1 to {MAX_NAME} letters, digits and . _ : @ + -, starting with a letter or digit"


def stream_of(header: str | None, default: str) -> str:
    """The stream named by the request's X-Passk-Stream header, else the endpoint's own (`run_code`, `judge`)."""
    if header is None:
        return default
    if not NAME.match(header):
        raise InvalidInput(["header", HEADER], f"stream name {header[:80]!r} is not {NAME_RULE}", header[:80])
    return header


def _verdicts(row: Any) -> VerdictMix:
    return VerdictMix(pending=row.pending, **{verdict.value: getattr(row, verdict.value) for verdict in Verdict})


def _ms(value: float | None) -> float | None:
    return None if value is None else round(float(value), 1)


async def _now(session: AsyncSession) -> datetime:
    return (await session.execute(select(func.now()))).scalar_one()


async def list_streams(session: AsyncSession, principal: Principal) -> StreamList:
    now = await _now(session)
    rows = await StreamRepository(session).summaries(principal, now - timedelta(hours=1))
    return StreamList(items=[
        StreamSummary(
            name=row.name, calls=row.calls, first_call_at=row.first_call_at, last_call_at=row.last_call_at,
            verdicts=_verdicts(row), reward_hacks=row.reward_hacks, calls_last_hour=row.calls_last_hour,
            last_hour=Latency(p50_ms=_ms(row.hour_p50_ms), p95_ms=_ms(row.hour_p95_ms)),
            pruned_calls=row.pruned_calls,
        )
        for row in rows
    ])


async def detail(session: AsyncSession, principal: Principal, name: str, window_s: float, buckets: int) -> StreamDetail:
    """The stream's last `window_s` seconds, in `buckets` buckets of equal width (those with calls listed)."""
    repository = StreamRepository(session)
    if not await repository.exists(principal, name):
        raise NotFound("stream", name)
    until = await _now(session)
    since = until - timedelta(seconds=window_s)
    width = window_s / buckets
    totals = await repository.totals(principal, name, since, until)
    rows = await repository.buckets(principal, name, since, until, width)
    return StreamDetail(
        name=name, since=since, until=until, bucket_s=width, calls=totals.calls, verdicts=_verdicts(totals),
        reward_hacks=totals.reward_hacks, latency=Latency(p50_ms=_ms(totals.p50_ms), p95_ms=_ms(totals.p95_ms)),
        calls_per_s=totals.calls / window_s,
        buckets=[
            Bucket(start=since + timedelta(seconds=int(row.bucket) * width), calls=row.calls,
                   verdicts=_verdicts(row), reward_hacks=row.reward_hacks,
                   latency=Latency(p50_ms=_ms(row.p50_ms), p95_ms=_ms(row.p95_ms)))
            for row in rows
        ],
    )
