"""Backpressure: per-key and global ceilings on queued samples, checked under one advisory lock.

A submission inserts its run and samples first, then takes the lock and counts the queued samples, its own
included; the lock is transaction-level, so it is held from that count until the request commits. Two
concurrent submissions can therefore never both see room for their samples (the queue is never over-admitted),
and the lock is held for one count and the commit, not for the insert: submissions do their writes side by side
and queue only for the count. A run refused this way has written its rows for nothing (they roll back), so a
large run is first counted without the lock (`precheck`) and refused before it writes anything.

The count is bounded first: every queued sample belongs to an active run (a cancel cancels them; a run ends only
when none is left, and samples are only ever added with their run), so the active runs' sizes bound the queued
samples from above. Summing them reads the active runs, not the samples; the samples are counted only when that
bound does not fit under a ceiling, so a large evaluation waiting in the queue does not make every other
submission count it under the lock.
"""

from __future__ import annotations

import math
import uuid

from sqlalchemy import Row, text
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.dependencies import openapi_error
from service.core.exceptions import APIError
from service.core.settings import Settings
from service.core.states import ACTIVE_RUN_STATES, SampleState, sql_in

# Any fixed 64-bit number; only admission uses it.
ADMISSION_LOCK = 0x7061_736B_0013
MAX_RETRY_AFTER_S = 300


QUEUE_FULL = {
    **openapi_error(
        "The queue is full (per-key or global ceiling on queued samples); retry after Retry-After seconds",
        {"detail": "queue full: this API key has 499990 samples queued; 20 more would pass its ceiling of 500000; retry later"},
    ),
    "headers": {"Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}},
}


class QueueFull(APIError):
    status_code = 429

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.headers = {"Retry-After": str(retry_after_s)}


# Runs of more samples than this are counted once without the lock before they write their rows (see above).
PRECHECK_ABOVE = 1_000


# The queued samples, the server's and the key's.
_COUNTS = text(
    f"""
    SELECT (SELECT count(*) FROM samples WHERE state = '{SampleState.QUEUED}') AS total,
           (SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id
            WHERE s.state = '{SampleState.QUEUED}' AND {sql_in("r.status", ACTIVE_RUN_STATES)}
              AND r.api_key_id IS NOT DISTINCT FROM :key) AS mine
    """
)
# Their upper bound (see above): the sizes of the active runs, the server's and the key's (ix_runs_active).
_BOUNDS = text(
    f"""
    SELECT coalesce(sum(sample_count), 0) AS total,
           coalesce(sum(sample_count) FILTER (WHERE api_key_id IS NOT DISTINCT FROM :key), 0) AS mine
    FROM runs WHERE {sql_in("status", ACTIVE_RUN_STATES)}
    """
)


async def precheck(session: AsyncSession, settings: Settings, api_key_id: uuid.UUID | None, samples: int) -> None:
    """Before a large run writes its rows: raise QueueFull if `samples` more would not fit now (no lock; `admit`
    decides)."""
    if samples > PRECHECK_ABOVE:
        await _check(session, settings, api_key_id, samples, inserted=False)


async def admit(session: AsyncSession, settings: Settings, api_key_id: uuid.UUID | None, samples: int) -> None:
    """Once this transaction has inserted its `samples` queued samples: raise QueueFull (429 with Retry-After)
    unless they fit under both ceilings. Holds the admission lock until the transaction ends."""
    await session.execute(text("SELECT pg_advisory_xact_lock(:lock)"), {"lock": ADMISSION_LOCK})
    await _check(session, settings, api_key_id, samples, inserted=True)


async def _check(session: AsyncSession, settings: Settings, api_key_id: uuid.UUID | None, samples: int,
                 inserted: bool) -> None:
    def besides(row: Row) -> tuple[int, int, int]:
        """What was queued besides this submission's samples (the key's, the server's), and by how many samples it
        passes the ceilings (<= 0: it fits)."""
        mine, total = (row.mine - samples, row.total - samples) if inserted else (row.mine, row.total)
        over = max(mine + samples - settings.max_queued_per_key, total + samples - settings.max_queued_total)
        return mine, total, over

    if besides((await session.execute(_BOUNDS, {"key": api_key_id})).one())[2] <= 0:
        return
    mine, total, over = besides((await session.execute(_COUNTS, {"key": api_key_id})).one())
    if over <= 0:
        return
    if mine + samples > settings.max_queued_per_key:
        what = (f"this API key has {mine} samples queued; {samples} more would pass its ceiling of "
                f"{settings.max_queued_per_key}")
    else:
        what = f"{total} samples are queued; {samples} more would pass the server's ceiling of {settings.max_queued_total}"
    raise QueueFull(f"queue full: {what}; retry later", await _retry_after(session, over))


async def _retry_after(session: AsyncSession, over: int) -> int:
    """Seconds until about `over` samples have drained at the last minute's rate."""
    finished = (
        await session.execute(
            text("SELECT count(*) FROM samples WHERE finished_at > now() - interval '1 minute'")
        )
    ).scalar_one()
    rate = max(finished / 60.0, 1.0)
    return int(min(max(math.ceil(over / rate), 1), MAX_RETRY_AFTER_S))
