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
    String, Text, and_, any_, bindparam, case, cast, column, exists, false, func, literal_column, or_, select, true,
    tuple_, update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Session

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.core.channels import Channel, notify, notify_column
from service.core.models import Run, Sample
from service.core.flags import wire_text
from service.core.states import ACTIVE_RUN_STATES, CallbackState, RunState, SampleState
from service.worker.cache import cacheable, store_cache
from service.worker.outcomes import OUTCOME_COLUMNS, outcome_values

if TYPE_CHECKING:
    from service.worker.queue import ClaimedSample

runs, samples = Run.__table__, Sample.__table__


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


def lock_runs(session: Session, run_ids: Iterable[uuid.UUID]) -> None:
    """Lock these runs' rows, in id order (held to commit)."""
    wanted = sorted(set(run_ids))
    if wanted:
        session.execute(select(runs.c.id).where(runs.c.id.in_(wanted)).order_by(runs.c.id).with_for_update())


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


# Statement 2 of a record or a reclaim, only when a run ended (its row is locked by statement 1): a new statement,
# so its snapshot holds every sample finished before, this transaction's included.
_END = (
    update(runs)
    .where(runs_in("run_ids"), runs.c.status.in_(fixed(ACTIVE_RUN_STATES)))
    .values(**ended_run())
    .returning(runs.c.callback_url)
)


def _settle(mine_of):
    """The shared part of a record and of a reclaim, for the runs in :run_ids: lock them (in id order, the first
    thing the statement does), then `mine_of(locked)`: a CTE of the samples concerned (id, run_id and `numbered`:
    it gets an event number now), which must lock its samples (FOR UPDATE, after `locked`: the lock order) so that
    it reads their current versions, not the statement's snapshot, taken before it waited for the runs.

    Numbering: each run's numbered samples get the run's next event numbers in id order (`base + k`) and the run's
    `events` grows by their count, in the UPDATE of its row, under its lock (held to commit), so numbers become
    visible in order: a reader that saw event N has seen every event below N. `events` thereby counts the run's
    done samples (each is numbered once, when it becomes done), so an active run ends when `events` reaches its
    `sample_count`: read from the locked row, current whatever the snapshot (no search of its samples).
    Returns (locked, mine, the samples' source: mine with `base` and `k`, the statement: one row per run numbered
    or ended: id, ends, and pg_notify('passk_events', id), sent at commit)."""
    locked = (
        select(runs.c.id, runs.c.status, runs.c.events, runs.c.sample_count)
        .where(runs_in("run_ids"))
        .order_by(runs.c.id)
        .with_for_update()
        .cte("locked")
    )
    mine = mine_of(locked)
    per_run = (
        select(
            locked.c.id.label("run_id"),
            func.count().filter(mine.c.numbered).label("n"),
            and_(
                locked.c.status.in_(fixed(ACTIVE_RUN_STATES)),
                locked.c.events + func.count().filter(mine.c.numbered) >= locked.c.sample_count,
            ).label("ends"),
        )
        .select_from(locked.outerjoin(mine, mine.c.run_id == locked.c.id))
        .group_by(locked.c.id, locked.c.status, locked.c.events, locked.c.sample_count)
        .subquery("per_run")
    )
    bumped = (
        update(runs)
        .where(runs.c.id == per_run.c.run_id, or_(per_run.c.n > 0, per_run.c.ends))
        .values(events=runs.c.events + per_run.c.n)
        .returning(runs.c.id, (runs.c.events - per_run.c.n).label("base"), per_run.c.ends)
        .cte("bumped")
    )
    k = func.row_number().over(partition_by=(mine.c.run_id, mine.c.numbered), order_by=mine.c.id)
    ranked = select(mine, k.label("k")).cte("ranked")
    source = (
        select(ranked, bumped.c.base)
        .select_from(ranked.outerjoin(bumped, bumped.c.id == ranked.c.run_id))
        .subquery("m")
    )
    return locked, mine, source, select(bumped.c.id, bumped.c.ends, notify_column(Channel.EVENTS, cast(bumped.c.id, Text)))


def _after(locked):
    """A condition true once every row of `locked` is locked (an InitPlan, evaluated before the scan it filters)."""
    return select(func.count()).select_from(locked).scalar_subquery() >= 0


def event_number(source):
    """A sample's event: the next of its run's when `numbered` (see _settle), else the one it has."""
    return case((source.c.numbered, source.c.base + source.c.k), else_=samples.c.event)


def end_runs(session: Session, settled) -> None:
    """Statement 2 (only when one ended): the end-of-run rule on the runs that `settled` (_settle's rows) ended."""
    ended = [row.id for row in settled if row.ends]
    if ended and any(url is not None for url in session.execute(_END, {"run_ids": ended}).scalars()):
        session.execute(notify(Channel.CALLBACKS))


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
    """A record in one statement, which takes the runs' locks itself (_settle), so they are held only for the
    rest of it and the commit: finish the samples (lease-guarded) and number them, put the retried ones back in
    the queue (requeued_state), bump each run's event count, then notify (sent at commit). Every samples row it
    writes is guarded by the lease (a reclaim that took one while it waited for the run is seen: `mine` locks
    the rows and reads their current versions)."""
    outcomes = (
        func.unnest(*(cast(bindparam(f"{name}_values"), ARRAY(type_)) for name, type_ in _OUTCOME_TYPES.items()))
        .table_valued(*(column(name, type_) for name, type_ in _OUTCOME_TYPES.items()))
        .render_derived(name="o")
    )
    owner = bindparam("owner")

    def mine_of(locked):
        return (
            select(outcomes, samples.c.run_id, and_(samples.c.event.is_(None), outcomes.c.retry.is_(None)).label("numbered"))
            .join_from(outcomes, samples, samples.c.id == outcomes.c.id)
            .where(*held_by(owner), _after(locked))
            .with_for_update(of=samples)
            .cte("mine")
        )

    locked, mine, source, settled = _settle(mine_of)
    finished = (
        update(samples)
        .where(samples.c.id == source.c.id, source.c.retry.is_(None), *held_by(owner))
        .values(
            state=SampleState.DONE, finished_at=func.now(), lease_owner=None, lease_expires_at=None,
            failure=cast(source.c.failure, JSONB), flags=func.string_to_array(source.c.flags, ","),
            **{name: source.c[name] for name in (*OUTCOME_COLUMNS, "cached", "rerun")},
            event=event_number(source),
        )
        .cte("finished")
    )
    # The run's status as locked (current), not as in the snapshot: a cancel committed while this waited is seen.
    retried = (
        update(samples)
        .where(samples.c.id == mine.c.id, mine.c.retry.is_not(None), locked.c.id == mine.c.run_id, *held_by(owner))
        .values(
            state=requeued_state(cancelled=locked.c.status == fixed(RunState.CANCELLED)), detail=mine.c.retry,
            lease_owner=None, lease_expires_at=None,
        )
        .cte("retried")
    )
    return settled.add_cte(finished, retried)


def _reclaimed_statement():
    """After a reclaim (its runs locked already): number the samples in :ids that it finished (their attempts
    spent) and bump the runs' events, the same _settle as a record."""

    def mine_of(locked):
        return (
            select(samples.c.id, samples.c.run_id, true().label("numbered"))
            .where(
                samples.c.id == any_(cast(bindparam("ids"), ARRAY(samples.c.id.type))),
                samples.c.state == fixed(SampleState.DONE), samples.c.event.is_(None), _after(locked),
            )
            .with_for_update(of=samples)
            .cte("mine")
        )

    _, _, source, settled = _settle(mine_of)
    numbered = update(samples).where(samples.c.id == source.c.id).values(event=event_number(source)).cte("numbered")
    return settled.add_cte(numbered)


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

    Records of one run are serial (numbered under its row lock), so the lock is held for as little as possible:
    everything is prepared, and new cache entries stored, before _RECORD, which takes the runs' locks itself;
    then only the commit (and, once per run, _END when it ended)."""
    columns: dict[str, list] = {f"{name}_values": [] for name in _RECORDED}
    fresh: dict[str, Outcome] = {}
    for sample, outcome in zip(claimed, outcomes, strict=True):
        values = outcome_values(outcome)
        retrying = outcome.verdict is Verdict.SANDBOX_ERROR and sample.attempts < max_attempts
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
        return
    store_cache(session, fresh)
    end_runs(session, session.execute(_RECORD, {**columns, "owner": owner, "run_ids": run_ids}).all())


def settle_reclaimed(session: Session, run_ids: Collection[uuid.UUID], finished_ids: Collection[int]) -> None:
    """After reclaim_expired (the runs already locked): number the samples it finished and end the runs with
    nothing left (_RECLAIMED, then _END if one ended)."""
    end_runs(session, session.execute(_RECLAIMED, {"run_ids": sorted(run_ids), "ids": sorted(finished_ids)}).all())
