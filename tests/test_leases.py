"""Lease renewal on real PostgreSQL: a worker's renewal extends only its own leases that have run down, and leaves a
fresh lease's row as it is (no new row version)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.worker import queue
from tests.test_claim_order import _dataset, _run

LEASE_S = 60.0


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_sync_engine(database_url)
    yield make_sync_sessionmaker(engine)
    engine.dispose()


def _leases(sessions: sessionmaker[Session], run: uuid.UUID) -> dict[int, tuple]:
    """Each sample's (owner, seconds left on its lease, row version)."""
    with transaction(sessions) as db:
        rows = db.execute(
            text("SELECT id, lease_owner, extract(epoch FROM lease_expires_at - now()) AS left_s, xmin::text AS version "
                 "FROM samples WHERE run_id = :run ORDER BY id"),
            {"run": run},
        ).all()
    return {row.id: (row.lease_owner, float(row.left_s), row.version) for row in rows}


def test_a_renewal_extends_only_the_workers_own_leases_that_have_run_down(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as db:
        dataset, (problem,) = _dataset(db, 1)
        run = _run(db, dataset, problem, None, "batch", 3)
        fresh, run_down, others = db.execute(
            text("SELECT id FROM samples WHERE run_id = :run ORDER BY id"), {"run": run}
        ).scalars().all()
        # Leased directly, not claimed: no other test's queued samples can take their place.
        for sample, owner, left_s in ((fresh, "w", LEASE_S), (run_down, "w", LEASE_S / 2), (others, "x", 5.0)):
            db.execute(
                text("UPDATE samples SET state = 'leased', lease_owner = :owner, attempts = 1, "
                     "lease_expires_at = now() + make_interval(secs => :left) WHERE id = :id"),
                {"owner": owner, "left": left_s, "id": sample},
            )
    before = _leases(sessions, run)

    with transaction(sessions) as db:
        assert queue.renew_leases(db, "w", LEASE_S, [fresh, run_down, others]) == 1
    after = _leases(sessions, run)
    assert after[fresh] == (before[fresh][0], pytest.approx(before[fresh][1], abs=2), before[fresh][2])  # untouched
    assert after[run_down][0] == "w" and after[run_down][1] == pytest.approx(LEASE_S, abs=2)  # a full lease again
    assert after[others][2] == before[others][2]  # another worker's lease is never ours to renew

    with transaction(sessions) as db:  # every lease of the worker, found by its name: none has run down now
        assert queue.renew_leases(db, "w", LEASE_S) == 0
        db.execute(text("UPDATE samples SET lease_expires_at = now() + interval '1 second' WHERE id = :id"),
                   {"id": fresh})
    with transaction(sessions) as db:
        assert queue.renew_leases(db, "w", LEASE_S) == 1
    assert _leases(sessions, run)[fresh][1] == pytest.approx(LEASE_S, abs=2)
    with transaction(sessions) as db:  # committed leases that no worker will record: not left for other tests
        db.execute(text("DELETE FROM runs WHERE id = :run"), {"run": run})
