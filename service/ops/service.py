"""The figures behind GET /v1/status and GET /metrics: one round trip to the database.

The figures are shared for FRESH_FOR_S: however many dashboards and scrapers poll, the database
computes them about once a second (`generated_at` says when). Every sample count reads an index:
the queue's partial indexes (queued, leased), the partial index on finished_at for recent finishes
and one on sandbox errors, so the cost follows the queue and the last minute's work, not the
number of samples ever stored. Runs are counted by status in full (one row per run, not per sample).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.ops.schemas import QueueDepth, RunCounts, SandboxErrors, Status, Workers

_FIGURES = text(
    """
    SELECT
        (SELECT count(*) FROM samples WHERE state = 'queued') AS queued,
        (SELECT count(*) FROM samples WHERE state = 'leased') AS leased,
        (SELECT count(*) FROM samples WHERE state = 'leased' AND lease_expires_at < now()) AS expired_leases,
        (SELECT count(*) FROM samples
            WHERE finished_at IS NOT NULL AND finished_at > now() - interval '1 minute') AS finished_last_minute,
        (SELECT count(*) FROM samples
            WHERE verdict = 'sandbox_error' AND finished_at > now() - interval '1 hour') AS sandbox_errors_last_hour,
        (SELECT count(*) FROM samples WHERE verdict = 'sandbox_error') AS sandbox_errors_total,
        (SELECT coalesce(json_object_agg(status, n), '{}'::json)
            FROM (SELECT status, count(*) AS n FROM runs GROUP BY status) AS by_status) AS runs,
        (SELECT coalesce(json_agg(json_build_array(owner, threads, processed, sandbox_errors) ORDER BY owner), '[]'::json)
            FROM worker_heartbeats WHERE expires_at > now()) AS workers,
        now() AS generated_at
    """
)


@dataclass(frozen=True)
class LiveWorker:
    owner: str
    threads: int
    processed: int
    sandbox_errors: int


@dataclass(frozen=True)
class Figures:
    status: Status
    workers: list[LiveWorker]


FRESH_FOR_S = 1.0


class SharedFigures:
    """The latest figures and one lock, so concurrent polls within FRESH_FOR_S share one computation."""

    def __init__(self) -> None:
        self._figures: Figures | None = None
        self._at = 0.0
        self._lock = asyncio.Lock()

    async def get(self, session: AsyncSession) -> Figures:
        if self._figures is not None and time.monotonic() - self._at < FRESH_FOR_S:
            return self._figures
        async with self._lock:
            if self._figures is None or time.monotonic() - self._at >= FRESH_FOR_S:
                self._figures = await compute(session)
                self._at = time.monotonic()
            return self._figures


async def compute(session: AsyncSession) -> Figures:
    row = (await session.execute(_FIGURES)).one()
    workers = [LiveWorker(*entry) for entry in row.workers]
    status = Status(
        queue=QueueDepth(queued=row.queued, leased=row.leased, expired_leases=row.expired_leases),
        finished_last_minute=row.finished_last_minute,
        sandbox_errors=SandboxErrors(
            last_hour=row.sandbox_errors_last_hour,
            total=row.sandbox_errors_total,
            seen_by_live_workers=sum(worker.sandbox_errors for worker in workers),
        ),
        runs=RunCounts(**row.runs),
        workers=Workers(live=len(workers), threads=sum(worker.threads for worker in workers)),
        generated_at=row.generated_at,
    )
    return Figures(status=status, workers=workers)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus(figures: Figures) -> str:
    """The same figures in the Prometheus text exposition format (version 0.0.4)."""
    status = figures.status
    lines: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {value:g}" for labels, value in samples)

    metric("passk_queue_queued", "gauge", "Samples waiting for a worker.", [("", status.queue.queued)])
    metric("passk_queue_leased", "gauge", "Samples held by a worker.", [("", status.queue.leased)])
    metric(
        "passk_queue_expired_leases", "gauge", "Leased samples whose lease expired (worker lost).",
        [("", status.queue.expired_leases)],
    )
    metric(
        "passk_samples_finished_last_minute", "gauge", "Samples that got their final verdict in the last minute.",
        [("", status.finished_last_minute)],
    )
    metric(
        "passk_sandbox_errors_last_hour", "gauge", "Samples with a final sandbox_error verdict in the last hour.",
        [("", status.sandbox_errors.last_hour)],
    )
    metric(
        "passk_sandbox_errors", "gauge", "Samples with a final sandbox_error verdict, all stored runs.",
        [("", status.sandbox_errors.total)],
    )
    metric(
        "passk_runs", "gauge", "Runs by status.",
        [(f'{{status="{name}"}}', count) for name, count in status.runs.model_dump().items()],
    )
    metric("passk_workers_live", "gauge", "Worker processes with a live heartbeat.", [("", status.workers.live)])
    metric("passk_worker_threads_live", "gauge", "Parallel sandboxes of the live workers.", [("", status.workers.threads)])
    metric(
        "passk_worker_processed_total", "counter", "Samples a live worker recorded since it started.",
        [(f'{{worker="{_label(w.owner)}"}}', w.processed) for w in figures.workers],
    )
    metric(
        "passk_worker_sandbox_errors_total", "counter",
        "Sandbox errors a live worker met since it started (retried ones included).",
        [(f'{{worker="{_label(w.owner)}"}}', w.sandbox_errors) for w in figures.workers],
    )
    return "\n".join(lines) + "\n"
