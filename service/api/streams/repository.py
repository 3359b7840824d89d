"""The aggregates GET /v1/streams reads: calls, verdicts, reward-hack flags and latency percentiles of a project's
stream runs (ix_runs_stream), in total and per time bucket."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Float, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.api.auth.principal import Principal
from service.api.projects.ownership import owned
from service.core.models import Run, Sample

_LATENCY_MS = func.extract("epoch", Sample.finished_at - Run.created_at) * 1000


def _figures() -> list[ColumnElement[Any]]:
    """Calls, each verdict's count, the flagged and the latency percentiles of the grouped rows."""
    return [
        func.count().label("calls"),
        func.count().filter(Sample.verdict.is_(None)).label("pending"),
        *(func.count().filter(Sample.verdict == verdict.value).label(verdict.value) for verdict in Verdict),
        func.count().filter(Sample.flags.is_not(None)).label("reward_hacks"),
        func.percentile_cont(0.5).within_group(_LATENCY_MS).label("p50_ms"),
        func.percentile_cont(0.95).within_group(_LATENCY_MS).label("p95_ms"),
    ]


class StreamRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def summaries(self, principal: Principal, hour_ago: datetime) -> list[Any]:
        """One row per stream of the caller's project: totals, and the last hour's calls and latency."""
        recent = Run.created_at >= hour_ago
        latency = _LATENCY_MS
        statement = (
            select(
                Run.stream.label("name"),
                func.min(Run.created_at).label("first_call_at"),
                func.max(Run.created_at).label("last_call_at"),
                func.count().filter(Run.pruned_at.is_not(None)).label("pruned_calls"),
                func.count().filter(recent).label("calls_last_hour"),
                func.percentile_cont(0.5).within_group(latency).filter(recent).label("hour_p50_ms"),
                func.percentile_cont(0.95).within_group(latency).filter(recent).label("hour_p95_ms"),
                *_figures(),
            )
            .select_from(Run)
            .join(Sample, Sample.run_id == Run.id)
            .where(owned(principal, Run.project_id), Run.stream.is_not(None))
            .group_by(Run.stream)
            .order_by(func.max(Run.created_at).desc())
        )
        return list((await self.session.execute(statement)).all())

    async def totals(self, principal: Principal, name: str, since: datetime, until: datetime) -> Any:
        statement = (
            select(*_figures())
            .select_from(Run)
            .join(Sample, Sample.run_id == Run.id)
            .where(owned(principal, Run.project_id), Run.stream == name, Run.created_at >= since,
                   Run.created_at < until)
        )
        return (await self.session.execute(statement)).one()

    async def buckets(self, principal: Principal, name: str, since: datetime, until: datetime,
                      bucket_s: float) -> list[Any]:
        index = func.floor(cast(func.extract("epoch", Run.created_at - since), Float) / bucket_s).label("bucket")
        statement = (
            select(index, *_figures())
            .select_from(Run)
            .join(Sample, Sample.run_id == Run.id)
            .where(owned(principal, Run.project_id), Run.stream == name, Run.created_at >= since,
                   Run.created_at < until)
            .group_by(index)
            .order_by(index)
        )
        return list((await self.session.execute(statement)).all())

    async def exists(self, principal: Principal, name: str) -> bool:
        statement = select(Run.id).where(owned(principal, Run.project_id), Run.stream == name).limit(1)
        return (await self.session.execute(statement)).first() is not None
