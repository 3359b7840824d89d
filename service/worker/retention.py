"""Retention of stream runs (/run_code and /v1/judge calls, service/api/streams): after
PASSK_STREAM_RETENTION_DAYS their programs, outputs and failure records are deleted, while the sample rows, with
their verdicts, flags and timings, stay, so a stream's counts and charts never change. The result cache, which
holds outputs too (of any run's programs), forgets its entries after as long: a program seen again is run again.

Any worker may prune; a transaction-level advisory lock keeps it to one at a time. The lock order is the one
everywhere (service/worker/results.py): the runs' rows, then their samples'.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.orm import Session

from service.core.models import Run, Sample, VerdictCache

# pg_try_advisory_xact_lock's key for pruning: any number no other advisory lock of passk's uses.
PRUNE_LOCK = 0x70617373_6B5F7072  # "passk_pr"
# Runs pruned per transaction: short transactions, each a few thousand rows at most.
BATCH = 500
# Result-cache entries deleted per transaction (one row each).
CACHE_BATCH = 10_000


def prune_streams(session: Session, older_than_days: float, batch: int = BATCH) -> int:
    """Prune up to `batch` stream runs that finished over `older_than_days` days ago; how many were pruned (0 when
    another worker is pruning)."""
    if not session.execute(select(func.pg_try_advisory_xact_lock(PRUNE_LOCK))).scalar_one():
        return 0
    cutoff = func.now() - timedelta(days=older_than_days)
    run_ids = list(session.execute(
        select(Run.id)
        .where(Run.stream.is_not(None), Run.pruned_at.is_(None), Run.finished_at < cutoff)
        .order_by(Run.id)
        .limit(batch)
        .with_for_update(skip_locked=True)
    ).scalars())
    if not run_ids:
        return 0
    session.execute(text("SELECT 1 FROM samples WHERE run_id = ANY(:ids) ORDER BY id FOR UPDATE"), {"ids": run_ids})
    session.execute(
        update(Sample).where(Sample.run_id.in_(run_ids))
        .values(completion="", stdout=None, stderr=None, failure=None)
    )
    session.execute(update(Run).where(Run.id.in_(run_ids)).values(pruned_at=func.now()))
    return len(run_ids)


def prune_cache(session: Session, older_than_days: float, batch: int = CACHE_BATCH) -> int:
    """Delete up to `batch` result-cache entries made over `older_than_days` days ago; how many (0 when another
    worker is pruning)."""
    if not session.execute(select(func.pg_try_advisory_xact_lock(PRUNE_LOCK))).scalar_one():
        return 0
    old = (
        select(VerdictCache.key)
        .where(VerdictCache.created_at < func.now() - timedelta(days=older_than_days))
        .limit(batch)
        .with_for_update(skip_locked=True)
    )
    return session.execute(delete(VerdictCache).where(VerdictCache.key.in_(old.scalar_subquery()))).rowcount
