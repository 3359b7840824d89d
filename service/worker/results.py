"""Recording what ran: verdicts, retries, event ids and the end of a run.

Records of one run do not wait for each other: nothing a record writes is shared between workers but the samples
it holds. Three rules make that hold:

- Event ids come from one sequence (`sample_events`), taken by each sample as it becomes done, in a transaction
  that has its xid already (event_id). Ids of concurrent transactions commit out of order; readers only go past
  an id once no transaction that could still commit a lower one is open (service/api/delivery/events.py: the
  visibility horizon), so a reader that saw id N of a run has seen every id below N.
- Progress is counted from the samples (service/api/runs/repository.py), never kept in the run's row.
- The end of a run is decided after the commit of whatever finished its samples (end_runs): a new transaction
  sees every record committed before it, so the last of two concurrent records to commit sees both; the UPDATE
  of the run's row ends it once (a second one waits for the row, then finds it ended).

The lock order, everywhere: the runs' rows (sorted by id), then their samples' rows (sorted by id). Records take
runs' rows only when they put samples back in the queue (FOR SHARE, against a cancel that would otherwise miss a
sample requeued behind its back); a cancel (which holds the run, then waits for its samples), a reclaim and a
give-back take them exclusively. Samples are locked in id order by records and reclaims alike.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from sqlalchemy import (
    String, Text, any_, bindparam, case, cast, column, exists, false, func, literal_column, null, select,
    true, tuple_, union, union_all, update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, array
from sqlalchemy.orm import Session

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.core.channels import Channel, notify_column
from service.core.models import SAMPLE_EVENTS, Run, Sample
from service.core.flags import wire_text
from service.core.states import ACTIVE_RUN_STATES, CallbackState, RunState, SampleState
from service.worker.cache import cacheable, store_cache
from service.worker.outcomes import OUTCOME_COLUMNS, outcome_values

if TYPE_CHECKING:
    from service.worker.queue import ClaimedSample

runs, samples = Run.__table__, Sample.__table__
ONE = literal_column("1")


def fixed(value: str | tuple[str, ...]):
    """A state as a constant in the SQL text rather than a parameter, as the partial indexes' predicates
    (`state = 'queued'`) are written, so that every plan can use them."""
    if isinstance(value, tuple):
        return tuple_(*(fixed(v) for v in value))
    return literal_column(f"'{value}'", String)


# A sample of a cancelled run is not put back in the queue (where a worker would run it for nobody):
# it ends `cancelled` like the run's other unfinished samples.
run_cancelled = exists().where(runs.c.id == samples.c.run_id, runs.c.status == fixed(RunState.CANCELLED))


def requeued_state(*unless, cancelled=run_cancelled):
    """The requeue rule: `queued` again, or `cancelled` where the run was cancelled meanwhile (`cancelled`: how the
    statement sees that); `unless`: further (condition, state) cases, after the cancelled run's (a reclaim ends a
    sample whose attempts are spent)."""
    return case((cancelled, SampleState.CANCELLED), *unless, else_=SampleState.QUEUED)


def leased_by(owner: object):
    """The rows this worker still holds (a lost lease guards every write)."""
    return [samples.c.state == fixed(SampleState.LEASED), samples.c.lease_owner == owner]


def held_by(owner: object):
    """leased_by for rows found by their primary key (a batch's): the same guard, written so that the planner cannot
    use ix_samples_leased for it, which it would walk whole (every worker's leases, ~workers x batch rows, and for
    each row written, in a nested loop) while taking it for a few rows."""
    return [func.coalesce(samples.c.state == fixed(SampleState.LEASED), false()), samples.c.lease_owner == owner]


def lock_runs(session: Session, run_ids: Iterable[uuid.UUID], share: bool = False) -> None:
    """Lock these runs' rows, in id order (held to commit); `share`: against changes of the rows only (a cancel),
    not against other holders of a share."""
    wanted = sorted(set(run_ids))
    if wanted:
        session.execute(
            select(runs.c.id).where(runs.c.id.in_(wanted)).order_by(runs.c.id).with_for_update(read=share)
        )


def lock_runs_of(session: Session, sample_ids: Collection[int]) -> None:
    """Lock the runs these samples belong to: the same lock order as everywhere, runs, then samples."""
    rows = session.execute(select(samples.c.run_id).distinct().where(samples.c.id.in_(sorted(sample_ids)))).scalars()
    lock_runs(session, rows)


def runs_in(param: str):
    """`runs.id = ANY(:param)`: the runs a statement settles (a uuid[] parameter)."""
    return runs.c.id == any_(cast(bindparam(param), ARRAY(runs.c.id.type)))


def ended_run():
    """The end-of-run rule, one for every path that finishes samples: the run is `completed` if one of its
    samples ran (a verdict other than sandbox_error), else `failed`; it finishes now, and its callback (if it has
    one) becomes pending."""
    ran = exists().where(
        samples.c.run_id == runs.c.id, samples.c.state == fixed(SampleState.DONE),
        samples.c.verdict != fixed(Verdict.SANDBOX_ERROR),
    )
    return {
        "status": case((ran, RunState.COMPLETED), else_=RunState.FAILED),
        "finished_at": func.now(),
        "callback_state": case((runs.c.callback_url.is_not(None), CallbackState.PENDING)),
    }


def event_id():
    """A sample's event id, as it becomes done: the next of the `sample_events` sequence (a new one only where it
    has none: COALESCE stops at its first non-null argument), taken once the transaction has its xid
    (pg_current_xact_id() assigns it; CASE evaluates the condition, an InitPlan, before the sequence). A reader's
    horizon relies on it: whoever holds an id up to the sequence's value it read has an xid below the next xid
    it reads after, so once a snapshot's xmin reaches that next xid, every such id is committed (or never will
    be)."""
    has_xid = select(func.pg_current_xact_id()).scalar_subquery().is_not(None)
    return func.coalesce(samples.c.event, case((has_xid, SAMPLE_EVENTS.next_value())))


# The outcomes of a record, one array parameter per column (`<column>_values`, typed as the samples' columns; not
# named as a column, which an UPDATE would take for a value to set), unnested in one row per sample: `retry` is the
# detail of a sample going back to the queue (None: it is finished). Two travel as text and are converted in SQL:
# `failure` (JSON, to jsonb) and `flags` (comma-separated, to text[]: an array column has no place in a 2-D array
# parameter, whose rows must all have one length).
_OUTCOME_TYPES = {
    "id": samples.c.id.type, "retry": samples.c.detail.type,
    **{name: samples.c[name].type for name in OUTCOME_COLUMNS}, "failure": Text(), "flags": Text(),
    "cached": samples.c.cached.type, "rerun": samples.c.rerun.type,
}
_RECORDED = tuple(_OUTCOME_TYPES)


def _record_statement():
    """A record in one statement: lock this worker's samples among the outcomes, in id order (the lock order),
    reading their current versions (a reclaim that took one meanwhile is seen: the lease guards every write);
    finish them with their event ids, and put the retried ones back in the queue (requeued_state: a cancel is seen
    in the statement's snapshot, the runs' rows being held FOR SHARE by record_outcomes when there are retries).
    Returns the number of samples written."""
    outcomes = (
        func.unnest(*(cast(bindparam(f"{name}_values"), ARRAY(type_)) for name, type_ in _OUTCOME_TYPES.items()))
        .table_valued(*(column(name, type_) for name, type_ in _OUTCOME_TYPES.items()))
        .render_derived(name="o")
    )
    mine = (
        select(outcomes)
        .join_from(outcomes, samples, samples.c.id == outcomes.c.id)
        .where(*held_by(bindparam("owner")))
        .order_by(samples.c.id)
        .with_for_update(of=samples)
        .cte("mine")
    )
    finished = (
        update(samples)
        .where(samples.c.id == mine.c.id, mine.c.retry.is_(None))
        .values(
            state=SampleState.DONE, finished_at=func.now(), lease_owner=None, lease_expires_at=None,
            failure=cast(mine.c.failure, JSONB), flags=func.string_to_array(mine.c.flags, ","),
            **{name: mine.c[name] for name in (*OUTCOME_COLUMNS, "cached", "rerun")},
            event=event_id(),
        )
        .cte("finished")
    )
    retried = (
        update(samples)
        .where(samples.c.id == mine.c.id, mine.c.retry.is_not(None))
        .values(state=requeued_state(), detail=mine.c.retry, lease_owner=None, lease_expires_at=None)
        .cte("retried")
    )
    return select(func.count()).select_from(mine).add_cte(finished, retried)


def _end_statement(every_active: bool):
    """The end-of-run check, in its own transaction after the commit of whatever finished samples, on the runs in
    :run_ids (or, `every_active`, on every active run: the sweep): a run with no sample queued or leased ends
    (ended_run), once (a second check waits for the row, then finds it no longer active). Then the wake-ups:
    pg_notify('passk_events', id) for the runs in :woken and those that ended, pg_notify('passk_callbacks') when
    one that ended has a webhook, all sent at commit.

    A notification takes a lock that serialises every notifying transaction until its commit is done, so the
    commit of this one is not waited for on disk (synchronous_commit off for the transaction) unless a run ended:
    a lost wake-up costs a reader one poll; a lost end is found again by the sweep, but a run's end is durable."""
    def one(state: SampleState, *order):
        # A scalar subquery with a LIMIT, which the planner cannot turn into an anti-join: the (generic) plan of a
        # NOT EXISTS read every leased sample of every run (~workers x batch rows) and filtered them by run, on
        # every check. Ordered as the partial indexes are, and by `= ANY(ARRAY[...])` (see queue._claim), so that
        # it walks the run's own entries only.
        return (
            select(ONE)
            .where(samples.c.run_id == any_(array([runs.c.id])), samples.c.state == fixed(state))
            .order_by(*order)
            .limit(ONE)
            .scalar_subquery()
        )

    # The run's newest lease is looked for first, and a queued sample only when nothing of the run is leased. Both
    # indexes keep an entry for every sample that left them since the last vacuum, and a walk reads those before
    # it meets a live one. The newest leases are the likeliest to be still out (samples are recorded about in the
    # order they were claimed), so that walk meets one within a batch or two whatever the workers hold. Queued
    # samples are claimed from anywhere in the run (queue._claim's pivot), so once none is left, their walk reads
    # every entry the run's claims left behind (hundreds of pages): asked first, it would cost that on every record
    # through a run's last seconds, while its last leases are out, which last longer the more the workers hold.
    newest_lease = one(SampleState.LEASED, samples.c.run_id.desc(), samples.c.lease_expires_at.desc())
    nothing_left = case((newest_lease.is_not(None), false()),
                        else_=one(SampleState.QUEUED, samples.c.run_id).is_(None))
    chosen = runs.c.status.in_(fixed(ACTIVE_RUN_STATES)) if every_active else runs_in("run_ids")
    ended = (
        update(runs)
        .where(chosen, runs.c.status.in_(fixed(ACTIVE_RUN_STATES)), nothing_left)
        .values(**ended_run())
        .returning(runs.c.id, runs.c.callback_url)
        .cte("ended")
    )
    commit_mode = (
        select(func.set_config("synchronous_commit", case((exists(select(ended.c.id)), "on"), else_="off"), true()))
        .scalar_subquery()
    )
    woken = union(
        select(func.unnest(cast(bindparam("woken"), ARRAY(runs.c.id.type))).label("id")),
        select(ended.c.id),
    ).subquery("woken")
    return union_all(
        select(woken.c.id, notify_column(Channel.EVENTS, cast(woken.c.id, Text)).label("notified"),
               commit_mode.label("commit_mode")),
        select(null(), notify_column(Channel.CALLBACKS).label("notified"), null()).where(
            exists(select(ended.c.id).where(ended.c.callback_url.is_not(None)))
        ),
    )


_RECORD, _END, _SWEEP = _record_statement(), _end_statement(every_active=False), _end_statement(every_active=True)


def record_outcomes(
    session: Session,
    owner: str,
    claimed: list[ClaimedSample],
    outcomes: list[Outcome],
    max_attempts: int,
    cached_ids: Collection[int] = (),
    rerun_ids: Collection[int] = (),
) -> list[uuid.UUID]:
    """Store verdicts (and new cache entries); a sandbox_error with attempts left goes back to the queue.

    Returns the runs recorded into: once this transaction has committed, end_runs(session, them) in a new one
    decides whether they ended and wakes their followers."""
    columns: dict[str, list] = {f"{name}_values": [] for name in _RECORDED}
    fresh: dict[str, Outcome] = {}
    retrying_any = False
    for sample, outcome in zip(claimed, outcomes, strict=True):
        values = outcome_values(outcome)
        retrying = outcome.verdict is Verdict.SANDBOX_ERROR and sample.attempts < max_attempts
        retrying_any |= retrying
        values["failure"] = None if values["failure"] is None else json.dumps(values["failure"])
        values["flags"] = wire_text(values["flags"])  # type: ignore[arg-type]
        values.update(id=sample.id, cached=sample.id in cached_ids, rerun=sample.id in rerun_ids,
                      retry=f"retrying after: {outcome.detail}" if retrying else None)
        for name in _RECORDED:
            columns[f"{name}_values"].append(values[name])
        if not retrying and sample.cache_key and sample.id not in cached_ids and cacheable(outcome):
            fresh[sample.cache_key] = outcome
    run_ids = sorted({sample.run_id for sample in claimed})
    if not run_ids:
        return []
    if retrying_any:
        lock_runs(session, run_ids, share=True)
    store_cache(session, fresh)
    session.execute(_RECORD, {**columns, "owner": owner})
    return run_ids


def end_runs(session: Session, run_ids: Collection[uuid.UUID] | None = None) -> None:
    """The end-of-run check and the followers' wake-up (_end_statement) for these runs, in a transaction of its
    own after the one that recorded into them; None: the sweep, which ends every active run with nothing left
    (after a reclaim, or a worker lost between a record and its check)."""
    if run_ids is None:
        session.execute(_SWEEP, {"woken": []}).all()
    elif run_ids:
        session.execute(_END, {"run_ids": sorted(run_ids), "woken": sorted(run_ids)}).all()
