"""The end of a run and its event ids, with records of one run in concurrent transactions (real PostgreSQL):
the run ends once, after the last record to commit, whichever it is; a record that never checked is caught by
the sweep; a live-events stream's horizon never passes an id a transaction could still commit."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.api.delivery import events
from service.api.delivery.events import Horizon
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.worker import queue, results
from tests.test_claim_order import _dataset, _run


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_sync_engine(database_url)
    yield make_sync_sessionmaker(engine)
    engine.dispose()


def _two_claims(sessions: sessionmaker[Session]) -> tuple[uuid.UUID, list, list]:
    """A run of two samples with a webhook, each sample claimed (committed) by its own worker."""
    with transaction(sessions) as db:
        dataset, (problem,) = _dataset(db, 1)
        run = _run(db, dataset, problem, None, "interactive", 2)
        # No cache: these verdicts must not answer other tests' programs (committed, on the shared database).
        db.execute(text("UPDATE runs SET callback_url = 'http://hook.invalid/', use_cache = false WHERE id = :id"),
                   {"id": run})
    claims = []
    for owner in ("a", "b"):
        with transaction(sessions) as db:
            claims.append(queue.claim_batch(db, owner, 1, 60, 3.0, 512, "image"))
    return run, claims[0], claims[1]


def _passed(claimed: list) -> list[Outcome]:
    return [Outcome(str(sample.id), Verdict.PASSED) for sample in claimed]


def _run_row(sessions: sessionmaker[Session], run: uuid.UUID):
    with transaction(sessions) as db:
        return db.execute(text("SELECT status, finished_at, callback_state FROM runs WHERE id = :id"), {"id": run}).one()


def test_the_last_record_to_commit_ends_the_run_once(sessions: sessionmaker[Session]) -> None:
    run, a, b = _two_claims(sessions)
    first, second = sessions(), sessions()
    try:
        # Both record before either commits: neither sees the other's sample done.
        recorded = results.record_outcomes(first, "a", a, _passed(a), max_attempts=3)
        results.record_outcomes(second, "b", b, _passed(b), max_attempts=3)
        first.commit()
        with transaction(sessions) as db:
            results.end_runs(db, recorded)
        assert _run_row(sessions, run).status == "running"  # b's sample is still leased, as far as anyone sees
        second.commit()
    finally:
        first.close()
        second.close()
    with transaction(sessions) as db:  # b's check
        results.end_runs(db, recorded)
    ended = _run_row(sessions, run)
    assert (ended.status, ended.callback_state) == ("completed", "pending")
    with transaction(sessions) as db:  # a late one (a worker's retry): the run ended once
        results.end_runs(db, recorded)
    assert _run_row(sessions, run) == ended
    with transaction(sessions) as db:
        events = db.execute(text("SELECT event FROM samples WHERE run_id = :id ORDER BY id"), {"id": run}).scalars().all()
    assert all(events) and len(set(events)) == 2


def test_the_sweep_ends_a_run_whose_last_record_was_never_checked(sessions: sessionmaker[Session]) -> None:
    run, a, b = _two_claims(sessions)
    for owner, claimed in (("a", a), ("b", b)):
        with transaction(sessions) as db:
            results.record_outcomes(db, owner, claimed, _passed(claimed), max_attempts=3)
    assert _run_row(sessions, run).status == "running"  # its worker was lost before the check
    with transaction(sessions) as db:
        results.end_runs(db)
    assert _run_row(sessions, run).status == "completed"


def test_the_horizon_waits_for_the_transactions_open_when_it_was_read() -> None:
    horizon = Horizon()
    # Ids up to 10 handed out, then the next xid read: 105; transactions from xid 100 on are open.
    assert horizon.advance(10, xmin=100, next_xid=105) == 0
    # Still one of them open (xmin 103): the same; 20 handed out meanwhile waits behind.
    assert horizon.advance(20, xmin=103, next_xid=110) == 0
    # All that were open have ended: up to 10, not 20 (its writers may be open still).
    assert horizon.advance(20, xmin=105, next_xid=112) == 10
    assert horizon.advance(25, xmin=112, next_xid=115) == 20
    # Nothing open at all: everything handed out is final.
    assert horizon.advance(30, xmin=120, next_xid=120) == 30


def _horizon_read(sessions: sessionmaker[Session], horizon: Horizon) -> int:
    """One stream's read of the horizon, in its statements' order (service/api/delivery/events.py: _read)."""
    with transaction(sessions) as db:
        handed_out = db.execute(events._HANDED_OUT).scalar_one()
        snapshot = db.execute(text(f"SELECT {events.SNAPSHOT_COLUMNS}")).one()
    return horizon.advance(handed_out, snapshot.xmin, snapshot.next_xid)


def test_the_horizon_does_not_pass_an_id_whose_transaction_took_its_xid_after_the_latest_commit(
    sessions: sessionmaker[Session],
) -> None:
    """The newest open transaction has an xid no snapshot lists as open (its xmax is one past the latest commit,
    and its xmin can equal it): its event id must still wait for its commit."""
    run, a, _ = _two_claims(sessions)
    recording = sessions()
    try:
        results.record_outcomes(recording, "a", a, _passed(a), max_attempts=3)  # its xid is the newest
        event = recording.execute(text("SELECT event FROM samples WHERE id = :id"), {"id": a[0].id}).scalar_one()
        horizon = Horizon()
        assert _horizon_read(sessions, horizon) < event, "the horizon passed an id that is not committed"
        recording.commit()
    finally:
        recording.close()
    assert _horizon_read(sessions, horizon) >= event
