"""Recording what ran: verdicts, retries, event numbers and the end of a run.

The lock order, everywhere: the runs' rows (sorted by id), then their samples' rows. It serialises the "was
that the last sample?" check between workers finishing one run together, and a cancel (which holds the run,
then waits for its samples) never deadlocks against a worker.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from sqlalchemy import String, bindparam, case, exists, func, literal_column, or_, select, tuple_, update
from sqlalchemy.orm import Session

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.models import Run, Sample
from service.delivery.states import CallbackState
from service.states import ACTIVE_RUN_STATES, RunState, SampleState
from service.worker.cache import cacheable, store_cache
from service.worker.outcomes import OUTCOME_COLUMNS, outcome_values

if TYPE_CHECKING:
    from service.worker.queue import ClaimedSample

runs, samples = Run.__table__, Sample.__table__

EVENTS_CHANNEL = "passk_events"
CALLBACKS_CHANNEL = "passk_callbacks"

def fixed(value: str | tuple[str, ...]):
    """A state as a constant in the SQL text rather than a parameter, as the partial indexes' predicates
    (`state = 'queued'`) are written, so that every plan can use them."""
    if isinstance(value, tuple):
        return tuple_(*(fixed(v) for v in value))
    return literal_column(f"'{value}'", String)


# A sample of a cancelled run is not put back in the queue (where a worker would run it for nobody):
# it ends `cancelled` like the run's other unfinished samples.
run_cancelled = exists().where(runs.c.id == samples.c.run_id, runs.c.status == fixed(RunState.CANCELLED))


def requeued_state():
    """`queued` again, or `cancelled` where the run was cancelled meanwhile."""
    return case((run_cancelled, SampleState.CANCELLED), else_=SampleState.QUEUED)


def leased_by(owner: object):
    """The rows this worker still holds (a lost lease guards every write)."""
    return [samples.c.state == fixed(SampleState.LEASED), samples.c.lease_owner == owner]


def lock_runs(session: Session, run_ids: Iterable[uuid.UUID]) -> None:
    """Lock these runs' rows, in id order (held to commit)."""
    wanted = sorted(set(run_ids))
    if wanted:
        session.execute(select(runs.c.id).where(runs.c.id.in_(wanted)).order_by(runs.c.id).with_for_update())


def lock_runs_of(session: Session, sample_ids: Collection[int]) -> None:
    """Lock the runs these samples belong to: the same lock order as everywhere, runs, then samples."""
    rows = session.execute(select(samples.c.run_id).distinct().where(samples.c.id.in_(sorted(sample_ids)))).scalars()
    lock_runs(session, rows)


def notify(session: Session, channel: str, payload: str = "") -> None:
    """Sent at commit, so a notification means "committed and visible"."""
    session.execute(select(func.pg_notify(channel, payload)))


_FINISH = (
    update(samples)
    .where(samples.c.id == bindparam("b_id"), *leased_by(bindparam("owner")))
    .values(
        state=SampleState.DONE, finished_at=func.now(), lease_owner=None, lease_expires_at=None,
        cached=bindparam("cached"), rerun=bindparam("rerun"), failure=bindparam("failure", type_=samples.c.failure.type),
        **{name: bindparam(name, type_=samples.c[name].type) for name in OUTCOME_COLUMNS},
    )
)

_RETRY = (
    update(samples)
    .where(samples.c.id == bindparam("b_id"), *leased_by(bindparam("owner")))
    .values(state=requeued_state(), detail=bindparam("detail"), lease_owner=None, lease_expires_at=None)
)


def record_outcomes(
    session: Session,
    owner: str,
    claimed: list[ClaimedSample],
    outcomes: list[Outcome],
    max_attempts: int,
    cached_ids: Collection[int] = (),
    rerun_ids: Collection[int] = (),
) -> None:
    """Store verdicts (and new cache entries); a sandbox_error with attempts left goes back to the queue."""
    lock_runs(session, {sample.run_id for sample in claimed})
    finish, retry = [], []
    finished: list[ClaimedSample] = []
    fresh: dict[str, Outcome] = {}
    for sample, outcome in zip(claimed, outcomes, strict=True):
        if outcome.verdict is Verdict.SANDBOX_ERROR and sample.attempts < max_attempts:
            retry.append({"b_id": sample.id, "owner": owner, "detail": f"retrying after: {outcome.detail}"})
            continue
        finished.append(sample)
        finish.append(
            {
                "b_id": sample.id,
                "owner": owner,
                "cached": sample.id in cached_ids,
                "rerun": sample.id in rerun_ids,
                **outcome_values(outcome),
            }
        )
        if sample.cache_key and sample.id not in cached_ids and cacheable(outcome):
            fresh[sample.cache_key] = outcome
    if finish:
        session.execute(_FINISH, finish)
    if retry:
        session.execute(_RETRY, retry)
    store_cache(session, fresh)
    for run_id in {sample.run_id for sample in claimed}:
        number_events(session, run_id, [sample.id for sample in finished if sample.run_id == run_id])
        finish_run_if_done(session, run_id)


def number_events(session: Session, run_id: uuid.UUID, sample_ids: Collection[int]) -> None:
    """Number the run's newly finished samples and wake whoever follows its events (at commit).

    Each finished sample gets the next number of its run's events, under the run's row lock (held to commit),
    so numbers become visible in order: a reader that saw event N has seen every event below N.
    """
    if not sample_ids:
        return
    todo = (
        select(samples.c.id, func.row_number().over(order_by=samples.c.id).label("k"))
        .where(
            samples.c.run_id == run_id, samples.c.id.in_(sorted(sample_ids)),
            samples.c.state == fixed(SampleState.DONE), samples.c.event.is_(None),
        )
        .cte("todo")
    )
    count = select(func.count()).select_from(todo).scalar_subquery()
    bump = (
        update(runs).where(runs.c.id == run_id).values(events=runs.c.events + count)
        .returning((runs.c.events - count).label("base")).cte("bump")
    )
    numbered = (
        update(samples).where(samples.c.id == todo.c.id).values(event=select(bump.c.base).scalar_subquery() + todo.c.k)
        .returning(samples.c.id).cte("numbered")
    )
    # One round trip: the numbering (data-modifying CTEs always run) and the notification sent at commit.
    session.execute(select(func.pg_notify(EVENTS_CHANNEL, str(run_id))).add_cte(todo, bump, numbered))


def finish_run_if_done(session: Session, run_id: uuid.UUID) -> None:
    """Mark the run completed (or failed, if nothing but sandbox errors came back) once no sample is left."""
    ran = exists().where(
        samples.c.run_id == run_id, samples.c.state == fixed(SampleState.DONE), samples.c.verdict != fixed(Verdict.SANDBOX_ERROR)
    )
    # Two probes, each on its partial index (queued samples by run; leased samples), not a scan of the run.
    left = or_(
        exists().where(samples.c.run_id == run_id, samples.c.state == fixed(SampleState.QUEUED)),
        exists().where(samples.c.run_id == run_id, samples.c.state == fixed(SampleState.LEASED)),
    )
    ended = session.execute(
        update(runs)
        .where(runs.c.id == run_id, runs.c.status.in_(fixed(ACTIVE_RUN_STATES)), ~left)
        .values(
            finished_at=func.now(),
            status=case((ran, RunState.COMPLETED), else_=RunState.FAILED),
            callback_state=case((runs.c.callback_url.is_not(None), CallbackState.PENDING)),
        )
        .returning(runs.c.callback_url)
    ).first()
    if ended is not None:
        notify(session, EVENTS_CHANNEL, str(run_id))
        if ended.callback_url is not None:
            notify(session, CALLBACKS_CHANNEL)
