"""Recording what ran: verdicts, retries, event numbers and the end of a run.

The lock order, everywhere: the runs' rows (sorted by id), then their samples' rows. It serialises the "was
that the last sample?" check between workers finishing one run together, and a cancel (which holds the run,
then waits for its samples) never deadlocks against a worker.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from sqlalchemy import (
    BigInteger, String, Text, all_, and_, any_, bindparam, case, cast, column, exists, false, func, literal,
    literal_column, or_, select, true, tuple_, union, update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, array
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


def requeued_state(*unless):
    """The requeue rule: `queued` again, or `cancelled` where the run was cancelled meanwhile; `unless`: further
    (condition, state) cases, after the cancelled run's (a reclaim ends a sample whose attempts are spent)."""
    return case((run_cancelled, SampleState.CANCELLED), *unless, else_=SampleState.QUEUED)


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


def runs_in(param: str):
    """`runs.id = ANY(:param)`: the runs a statement settles (a uuid[] parameter)."""
    return runs.c.id == any_(cast(bindparam(param), ARRAY(runs.c.id.type)))


def queued_left(run_id):
    """The run still has a queued sample: its first one, walking ix_samples_queued_run (`= ANY(ARRAY[run])` and the
    index's order keep the planner off a sequential scan, which it takes for an EXISTS whose run it cannot see)."""
    first = (
        select(samples.c.id)
        .where(samples.c.state == fixed(SampleState.QUEUED), samples.c.run_id == any_(array([run_id])))
        .order_by(samples.c.run_id, samples.c.id)
        .limit(1)
        .scalar_subquery()
    )
    return first.is_not(None)


def ended_run(ends, ran_now):
    """The end-of-run rule, one for every path that finishes samples: where `ends`, the run is `completed` if
    one of its samples ran (a verdict other than sandbox_error: `ran_now` in this statement, or one stored
    before), else `failed`; it finishes now, and its callback (if it has one) becomes pending. Elsewhere the
    columns keep their values. (CASE is lazy: the run's done samples are searched only when it ends.)"""
    ran_before = exists().where(
        samples.c.run_id == runs.c.id, samples.c.state == fixed(SampleState.DONE),
        samples.c.verdict != fixed(Verdict.SANDBOX_ERROR),
    )
    values = {
        "status": case((or_(ran_now, ran_before), RunState.COMPLETED), else_=RunState.FAILED),
        "finished_at": func.now(),
        "callback_state": case((runs.c.callback_url.is_not(None), CallbackState.PENDING)),
    }
    return {name: case((ends, value), else_=runs.c[name]) for name, value in values.items()}


def _settle(mine):
    """The shared part of a record and of a reclaim, on `mine` (a CTE of samples: id, run_id, `numbered`: it gets
    an event number now, `finishing`: this statement finishes it (it is still leased in its snapshot), `ran`:
    finished now with a verdict other than sandbox_error), for the runs in :run_ids (locked by the caller).

    Numbering: each run's numbered samples get the run's next event numbers in id order (`base + k`), and the
    run's `events` grows by their count, in the UPDATE of its row, under its lock (held to commit), so numbers
    become visible in order: a reader that saw event N has seen every event below N. End of run: an active run
    with no queued sample and no leased one but those finishing now ends (ended_run). Returns the samples'
    source (mine with `base` and `k`: event = base + k where numbered) and the statement's result, pg_notify at
    commit: passk_events for each run numbered or ended, passk_callbacks if an ended run has a callback."""
    per_run = (
        select(
            runs.c.id.label("run_id"),
            runs.c.status.in_(fixed(ACTIVE_RUN_STATES)).label("active"),
            func.count().filter(mine.c.numbered).label("n"),
            func.coalesce(func.array_agg(mine.c.id).filter(mine.c.finishing), array([], type_=BigInteger)).label("finishing"),
            func.coalesce(func.bool_or(mine.c.ran), false()).label("ran_now"),
        )
        .select_from(runs.outerjoin(mine, mine.c.run_id == runs.c.id))
        .where(runs_in("run_ids"))
        .group_by(runs.c.id)
        .subquery("per_run")
    )
    leased_left = exists().where(
        samples.c.run_id == per_run.c.run_id, samples.c.state == fixed(SampleState.LEASED),
        samples.c.id != all_(per_run.c.finishing),
    )
    # Materialized: `ends` is evaluated once per run, not once for each column that reads it.
    ending = (
        select(per_run, and_(per_run.c.active, ~queued_left(per_run.c.run_id), ~leased_left).label("ends"))
        .cte("ending")
        .prefix_with("MATERIALIZED")
    )
    bumped = (
        update(runs)
        .where(runs.c.id == ending.c.run_id, or_(ending.c.n > 0, ending.c.ends))
        .values(events=runs.c.events + ending.c.n, **ended_run(ending.c.ends, ending.c.ran_now))
        .returning(runs.c.id, (runs.c.events - ending.c.n).label("base"), ending.c.ends, runs.c.callback_url)
        .cte("bumped")
    )
    k = func.row_number().over(partition_by=(mine.c.run_id, mine.c.numbered), order_by=mine.c.id)
    ranked = select(mine, k.label("k")).cte("ranked")
    source = (
        select(ranked, bumped.c.base)
        .select_from(ranked.outerjoin(bumped, bumped.c.id == ranked.c.run_id))
        .subquery("m")
    )
    sent = union(
        select(literal(EVENTS_CHANNEL).label("channel"), cast(bumped.c.id, Text).label("payload")),
        select(literal(CALLBACKS_CHANNEL), literal("")).where(bumped.c.ends, bumped.c.callback_url.is_not(None)),
    ).subquery("sent")
    return source, select(func.pg_notify(sent.c.channel, sent.c.payload))


def event_number(source):
    """A sample's event: the next of its run's when `numbered` (see _settle), else the one it has."""
    return case((source.c.numbered, source.c.base + source.c.k), else_=samples.c.event)


# The outcomes of a record, one array parameter per column (`<column>_values`, typed as the samples' columns; not
# named as a column, which an UPDATE would take for a value to set), unnested in one row per sample: `retry` is the
# detail of a sample going back to the queue (None: it is finished).
_OUTCOME_TYPES = {
    "id": samples.c.id.type, "retry": samples.c.detail.type,
    **{name: samples.c[name].type for name in OUTCOME_COLUMNS}, "failure": Text(),
    "cached": samples.c.cached.type, "rerun": samples.c.rerun.type,
}
_RECORDED = tuple(_OUTCOME_TYPES)


def _record_statement():
    """Everything a record does once its runs are locked, in one statement (one round trip while the run rows
    are held): finish the samples (lease-guarded) and number them (_settle), put the retried ones back in the
    queue (requeued_state), bump each run's event count and end the runs with nothing left, then notify (sent
    at commit). It runs after lock_runs, so its snapshot already holds every record of these runs committed
    before (the end-of-run check sees them); its own samples are still `leased` in that snapshot, hence
    `finishing`. Every samples row it writes is guarded by the lease."""
    outcomes = (
        func.unnest(*(cast(bindparam(f"{name}_values"), ARRAY(type_)) for name, type_ in _OUTCOME_TYPES.items()))
        .table_valued(*(column(name, type_) for name, type_ in _OUTCOME_TYPES.items()))
        .render_derived(name="o")
    )
    owner = bindparam("owner")
    mine = (
        select(
            outcomes, samples.c.run_id,
            and_(samples.c.event.is_(None), outcomes.c.retry.is_(None)).label("numbered"),
            outcomes.c.retry.is_(None).label("finishing"),
            and_(outcomes.c.retry.is_(None), outcomes.c.verdict != fixed(Verdict.SANDBOX_ERROR)).label("ran"),
        )
        .join_from(outcomes, samples, samples.c.id == outcomes.c.id)
        .where(*leased_by(owner))
        .cte("mine")
    )
    source, sent = _settle(mine)
    finished = (
        update(samples)
        .where(samples.c.id == source.c.id, source.c.retry.is_(None), *leased_by(owner))
        .values(
            state=SampleState.DONE, finished_at=func.now(), lease_owner=None, lease_expires_at=None,
            failure=cast(source.c.failure, JSONB), **{name: source.c[name] for name in (*OUTCOME_COLUMNS, "cached", "rerun")},
            event=event_number(source),
        )
        .cte("finished")
    )
    retried = (
        update(samples)
        .where(samples.c.id == mine.c.id, mine.c.retry.is_not(None), *leased_by(owner))
        .values(state=requeued_state(), detail=mine.c.retry, lease_owner=None, lease_expires_at=None)
        .cte("retried")
    )
    return sent.add_cte(finished, retried)


def _reclaimed_statement():
    """After a reclaim (runs locked): number the samples in :ids that it finished (their attempts spent), end
    the runs in :run_ids with nothing left, and notify: the same _settle as a record."""
    mine = (
        select(
            samples.c.id, samples.c.run_id, true().label("numbered"), false().label("finishing"), false().label("ran"),
        )
        .where(
            samples.c.id == any_(cast(bindparam("ids"), ARRAY(samples.c.id.type))),
            samples.c.state == fixed(SampleState.DONE), samples.c.event.is_(None),
        )
        .cte("mine")
    )
    source, sent = _settle(mine)
    numbered = update(samples).where(samples.c.id == source.c.id).values(event=event_number(source)).cte("numbered")
    return sent.add_cte(numbered)


_RECORD, _RECLAIMED = _record_statement(), _reclaimed_statement()


def record_outcomes(
    session: Session,
    owner: str,
    claimed: list[ClaimedSample],
    outcomes: list[Outcome],
    max_attempts: int,
    cached_ids: Collection[int] = (),
    rerun_ids: Collection[int] = (),
) -> None:
    """Store verdicts (and new cache entries); a sandbox_error with attempts left goes back to the queue.

    Two statements while the runs' rows are held: lock_runs, then _RECORD (plus the cache's insert when there
    are new entries); records of one run are serial, so everything else is prepared before the lock."""
    columns: dict[str, list] = {f"{name}_values": [] for name in _RECORDED}
    fresh: dict[str, Outcome] = {}
    for sample, outcome in zip(claimed, outcomes, strict=True):
        values = outcome_values(outcome)
        retrying = outcome.verdict is Verdict.SANDBOX_ERROR and sample.attempts < max_attempts
        values["failure"] = None if values["failure"] is None else json.dumps(values["failure"])
        values.update(id=sample.id, cached=sample.id in cached_ids, rerun=sample.id in rerun_ids,
                      retry=f"retrying after: {outcome.detail}" if retrying else None)
        for name in _RECORDED:
            columns[f"{name}_values"].append(values[name])
        if not retrying and sample.cache_key and sample.id not in cached_ids and cacheable(outcome):
            fresh[sample.cache_key] = outcome
    run_ids = sorted({sample.run_id for sample in claimed})
    if not run_ids:
        return
    lock_runs(session, run_ids)
    session.execute(_RECORD, {**columns, "owner": owner, "run_ids": run_ids})
    store_cache(session, fresh)


def settle_reclaimed(session: Session, run_ids: Collection[uuid.UUID], finished_ids: Collection[int]) -> None:
    """After reclaim_expired (the runs already locked): number the samples it finished, end the runs with nothing
    left and notify, in one statement (_RECLAIMED)."""
    session.execute(_RECLAIMED, {"run_ids": sorted(run_ids), "ids": sorted(finished_ids)})
