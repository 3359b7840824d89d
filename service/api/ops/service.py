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
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client import generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.api.ops.schemas import QueueDepth, RunCounts, SandboxErrors, Status, Workers
from service.core.states import SampleState

_FIGURES = text(
    f"""
    SELECT
        (SELECT count(*) FROM samples WHERE state = '{SampleState.QUEUED}') AS queued,
        (SELECT count(*) FROM samples WHERE state = '{SampleState.LEASED}') AS leased,
        (SELECT count(*) FROM samples WHERE state = '{SampleState.LEASED}' AND lease_expires_at < now()) AS expired_leases,
        (SELECT count(*) FROM samples
            WHERE finished_at IS NOT NULL AND finished_at > now() - interval '1 minute') AS finished_last_minute,
        (SELECT count(*) FROM samples
            WHERE verdict = '{Verdict.SANDBOX_ERROR}' AND finished_at > now() - interval '1 hour') AS sandbox_errors_last_hour,
        (SELECT count(*) FROM samples WHERE verdict = '{Verdict.SANDBOX_ERROR}') AS sandbox_errors_total,
        (SELECT coalesce(json_object_agg(status, n), '{{}}'::json)
            FROM (SELECT status, count(*) AS n FROM runs GROUP BY status) AS by_status) AS runs,
        (SELECT coalesce(json_agg(json_build_array(owner, threads, processed, sandbox_errors, engine_up) ORDER BY owner), '[]'::json)
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
    engine_up: bool


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
        workers=Workers(
            live=len(workers), threads=sum(worker.threads for worker in workers),
            engines_down=sum(not worker.engine_up for worker in workers),
        ),
        generated_at=row.generated_at,
    )
    return Figures(status=status, workers=workers)


class _Exposition:
    """The figures as Prometheus metric families (a prometheus_client collector over one snapshot)."""

    def __init__(self, figures: Figures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[Metric]:
        status, workers = self.figures.status, self.figures.workers
        yield GaugeMetricFamily("passk_queue_queued", "Samples waiting for a worker.", value=status.queue.queued)
        yield GaugeMetricFamily("passk_queue_leased", "Samples held by a worker.", value=status.queue.leased)
        yield GaugeMetricFamily(
            "passk_queue_expired_leases", "Leased samples whose lease expired (worker lost).", value=status.queue.expired_leases
        )
        yield GaugeMetricFamily(
            "passk_samples_finished_last_minute", "Samples that got their final verdict in the last minute.",
            value=status.finished_last_minute,
        )
        yield GaugeMetricFamily(
            "passk_sandbox_errors_last_hour", "Samples with a final sandbox_error verdict in the last hour.",
            value=status.sandbox_errors.last_hour,
        )
        yield GaugeMetricFamily(
            "passk_sandbox_errors", "Samples with a final sandbox_error verdict, all stored runs.",
            value=status.sandbox_errors.total,
        )
        runs = GaugeMetricFamily("passk_runs", "Runs by status.", labels=["status"])
        for name, count in status.runs.model_dump().items():
            runs.add_metric([name], count)
        yield runs
        yield GaugeMetricFamily("passk_workers_live", "Worker processes with a live heartbeat.", value=status.workers.live)
        yield GaugeMetricFamily("passk_worker_threads_live", "Parallel sandboxes of the live workers.", value=status.workers.threads)
        yield GaugeMetricFamily(
            "passk_engines_down", "Live workers whose Docker engine does not answer.", value=status.workers.engines_down
        )
        engine_up = GaugeMetricFamily(
            "passk_engine_up", "1 while a live worker's Docker engine answers, 0 while it does not (it claims nothing).",
            labels=["worker"],
        )
        processed = CounterMetricFamily(
            "passk_worker_processed", "Samples a live worker recorded since it started.", labels=["worker"]
        )
        errors = CounterMetricFamily(
            "passk_worker_sandbox_errors", "Sandbox errors a live worker met since it started (retried ones included).",
            labels=["worker"],
        )
        for worker in workers:
            processed.add_metric([worker.owner], worker.processed)
            errors.add_metric([worker.owner], worker.sandbox_errors)
            engine_up.add_metric([worker.owner], int(worker.engine_up))
        yield processed
        yield errors
        yield engine_up


def exposition(figures: Figures) -> bytes:
    """The same figures in the Prometheus text exposition format (version 0.0.4), by prometheus_client."""
    return generate_latest(_Exposition(figures))  # type: ignore[arg-type]
