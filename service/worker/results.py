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

from sqlalchemy import String, case, exists, func, literal_column, or_, select, text, tuple_, update
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


def _record_statement():
    """Everything a record does once its runs are locked, in one statement (one round trip while the run rows
    are held): finish the samples (lease-guarded) and number them in id order after the run's last event,
    put the retried ones back in the queue, bump each run's event count and end the runs with nothing left,
    then notify (sent at commit). It runs after lock_runs, so its snapshot already holds every record of
    these runs committed before (the checks below see them); its own samples are still `leased` in that
    snapshot, hence `id <> ALL(finished)` in the end-of-run check."""
    active = ", ".join(f"'{state}'" for state in ACTIVE_RUN_STATES)
    columns = ", ".join(f"{name} = m.{name}" for name in (*OUTCOME_COLUMNS, "cached", "rerun"))
    return text(f"""
WITH o AS (
    SELECT * FROM unnest(
        CAST(:ids AS bigint[]), CAST(:retry AS text[]), CAST(:verdict AS text[]), CAST(:detail AS text[]),
        CAST(:failure AS text[]), CAST(:exit_code AS integer[]), CAST(:signal AS integer[]),
        CAST(:duration_ms AS double precision[]), CAST(:cpu_ms AS double precision[]), CAST(:stdout AS text[]),
        CAST(:stderr AS text[]), CAST(:stdout_truncated AS boolean[]), CAST(:stderr_truncated AS boolean[]),
        CAST(:cached AS boolean[]), CAST(:rerun AS boolean[])
    ) AS o(id, retry, verdict, detail, failure, exit_code, signal, duration_ms, cpu_ms, stdout, stderr,
           stdout_truncated, stderr_truncated, cached, rerun)
),
mine AS (
    SELECT o.*, s.run_id, s.event IS NULL AND o.retry IS NULL AS numbered
    FROM o JOIN samples s ON s.id = o.id
    WHERE s.state = '{SampleState.LEASED}' AND s.lease_owner = :owner
),
ranked AS (
    SELECT mine.*, row_number() OVER (PARTITION BY run_id, numbered ORDER BY id) AS k FROM mine
),
per_run AS (
    SELECT r.id AS run_id, r.status IN ({active}) AS active,
        count(*) FILTER (WHERE m.numbered) AS n,
        coalesce(array_agg(m.id) FILTER (WHERE m.retry IS NULL), '{{}}') AS finished,
        bool_or(m.retry IS NULL AND m.verdict <> '{Verdict.SANDBOX_ERROR}') AS ran_now
    FROM runs r LEFT JOIN mine m ON m.run_id = r.id
    WHERE r.id = ANY(CAST(:run_ids AS uuid[]))
    GROUP BY r.id
),
ending AS (
    SELECT p.*, p.active
        AND NOT EXISTS (SELECT FROM samples s WHERE s.run_id = p.run_id AND s.state = '{SampleState.QUEUED}')
        AND NOT EXISTS (
            SELECT FROM samples s
            WHERE s.run_id = p.run_id AND s.state = '{SampleState.LEASED}' AND s.id <> ALL(p.finished)
        ) AS ends
    FROM per_run p
),
bumped AS (
    UPDATE runs r SET
        events = r.events + e.n,
        -- (CASE is lazy: a run's done samples are only searched for a passing one when the run ends)
        status = CASE WHEN NOT e.ends THEN r.status
                 WHEN e.ran_now OR EXISTS (
                     SELECT FROM samples s
                     WHERE s.run_id = r.id AND s.state = '{SampleState.DONE}' AND s.verdict <> '{Verdict.SANDBOX_ERROR}'
                 ) THEN '{RunState.COMPLETED}' ELSE '{RunState.FAILED}' END,
        finished_at = CASE WHEN e.ends THEN now() ELSE r.finished_at END,
        callback_state = CASE WHEN e.ends AND r.callback_url IS NOT NULL THEN '{CallbackState.PENDING}'
                         WHEN e.ends THEN NULL ELSE r.callback_state END
    FROM ending e
    WHERE r.id = e.run_id AND (e.n > 0 OR e.ends)
    RETURNING r.id, r.events - e.n AS base, e.n, e.ends, r.callback_url
),
finished AS (
    UPDATE samples s SET
        state = '{SampleState.DONE}', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
        failure = CAST(m.failure AS jsonb), {columns},
        event = CASE WHEN m.numbered THEN b.base + m.k ELSE s.event END
    FROM ranked m LEFT JOIN bumped b ON b.id = m.run_id
    WHERE s.id = m.id AND m.retry IS NULL AND s.state = '{SampleState.LEASED}' AND s.lease_owner = :owner
),
retried AS (
    UPDATE samples s SET
        state = CASE WHEN EXISTS (SELECT FROM runs r WHERE r.id = s.run_id AND r.status = '{RunState.CANCELLED}')
                THEN '{SampleState.CANCELLED}' ELSE '{SampleState.QUEUED}' END,
        detail = m.retry, lease_owner = NULL, lease_expires_at = NULL
    FROM mine m
    WHERE s.id = m.id AND m.retry IS NOT NULL AND s.state = '{SampleState.LEASED}' AND s.lease_owner = :owner
)
SELECT pg_notify(channel, payload) FROM (
    SELECT '{EVENTS_CHANNEL}', CAST(id AS text) FROM bumped
    UNION SELECT '{CALLBACKS_CHANNEL}', '' FROM bumped WHERE ends AND callback_url IS NOT NULL
) AS sent(channel, payload)
""")


_RECORD = _record_statement()
_RECORDED = ("ids", "retry", *OUTCOME_COLUMNS, "failure", "cached", "rerun")


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
    columns: dict[str, list] = {name: [] for name in _RECORDED}
    fresh: dict[str, Outcome] = {}
    for sample, outcome in zip(claimed, outcomes, strict=True):
        values = outcome_values(outcome)
        retrying = outcome.verdict is Verdict.SANDBOX_ERROR and sample.attempts < max_attempts
        values["failure"] = None if values["failure"] is None else json.dumps(values["failure"])
        values.update(ids=sample.id, cached=sample.id in cached_ids, rerun=sample.id in rerun_ids,
                      retry=f"retrying after: {outcome.detail}" if retrying else None)
        for name in _RECORDED:
            columns[name].append(values[name])
        if not retrying and sample.cache_key and sample.id not in cached_ids and cacheable(outcome):
            fresh[sample.cache_key] = outcome
    run_ids = sorted({sample.run_id for sample in claimed})
    if not run_ids:
        return
    lock_runs(session, run_ids)
    session.execute(_RECORD, {**columns, "owner": owner, "run_ids": run_ids})
    store_cache(session, fresh)


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
