"""The samples table as a work queue: claims and leases (claim, renew, give back, reclaim).

Every function takes a Session and never commits; the caller's `transaction()` makes each claim or each
batch of results one atomic step. A lease guards every write: a worker that lost its lease (it was presumed
dead and the samples went to another worker) cannot overwrite what the new owner records. Recording
results: service/worker/results.py; the verdict cache: service/worker/cache.py. Lock order (runs sorted by id,
then samples sorted by id; written out in results.py) and SKIP LOCKED where a wait could deadlock, as documented
at each statement.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace

from sqlalchemy import (
    UUID, BigInteger, Interval, Row, Text, and_, any_, bindparam, case, cast, func, select, text, true,
    union_all, update,
)
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.orm import Session

from sandbox import languages
from sandbox.verdicts import Verdict
from service.core.channels import Channel, notify
from service.core.limits import limits_in_force
from service.core.models import Dataset, Problem, Run, Sample, claim_key
from service.formats.native import with_toolchain
from service.formats.program import program_for
from service.core.states import ACTIVE_RUN_STATES, RunPriority, RunState, SampleState, sql_in
from service.worker.cache import cache_key
from service.worker.results import (
    ONE,
    event_id,
    fixed,
    held_by,
    leased_by,
    lock_runs,
    lock_runs_of,
    requeued_state,
    run_cancelled,
)

runs, samples, problems, datasets = Run.__table__, Sample.__table__, Problem.__table__, Dataset.__table__
# A renewal extends only leases that have run down by this fraction of their length (renew_leases). The maintenance
# thread (runner.py) renews at least as often, so a lease held by a live worker never has less than half of its
# length left.
RENEW_AFTER = 0.25



@dataclass(frozen=True)
class ClaimedSample:
    id: int
    run_id: uuid.UUID
    problem_key: str
    program: str
    time_limit_s: float
    memory_bytes: int
    attempts: int
    # None when the run opted out of the result cache.
    cache_key: str | None = None
    # Whether the program runs under one of passk's judges (see sandbox.executor.Job).
    judged: bool = False
    # The dataset's language; `native`: `program` is the JSON of a native job (sandbox/languages): every language
    # but Python, and Python's /run_code programs.
    language: str = "python"
    native: bool = False
    # Whose run it is (the API key that created it; None for runs made without one): re-runs take turns by key.
    api_key_id: uuid.UUID | None = None
    # The run's priority (a claim's samples share it).
    priority: str = RunPriority.BATCH


def _candidate_runs():
    """Which runs to serve first: the preferred priority, then the API key holding the fewest leased samples
    (keys share the workers at equal priority), then the oldest run; up to 8, so that a claim that finds a run's
    samples all taken by other claims tries the next. No locks: _CLAIM locks what it takes.

    Read without going through every active run, however many wait: within one priority and one key the order is
    the runs' age alone, so the first 8 runs overall are among the first 8 with queued samples of each (key,
    priority), and those are walked in ix_runs_claim_order's order. The (key, priority) pairs themselves are found by
    skipping from one to the next in that index (one descent each), so the cost follows the keys and the runs
    passed over (active, but with every sample leased), not the runs queued."""
    active, key = sql_in("status", ACTIVE_RUN_STATES), claim_key()
    # Whether a run has a queued sample, as a scalar subquery with a LIMIT: a condition the planner checks run by run
    # as it walks the index (an EXISTS would become a semi-join that reads every active run's queued samples first).
    # Ordered as ix_samples_queued_run is, and by `= ANY(ARRAY[...])` (see _claim), so that its plan walks that index
    # from the run's first queued sample rather than reading the table until it meets one.
    has_queued = (f"(SELECT 1 FROM samples s WHERE s.run_id = ANY(ARRAY[r.id]) AND s.state = '{SampleState.QUEUED}' "
                  "ORDER BY s.run_id, s.id LIMIT 1) IS NOT NULL")
    return text(
        f"""
        WITH RECURSIVE groups AS (
            (SELECT {key} AS key, priority FROM runs WHERE {active} ORDER BY {key}, priority LIMIT 1)
            UNION ALL
            SELECT later.key, later.priority FROM groups g CROSS JOIN LATERAL (
                SELECT {key} AS key, priority FROM runs
                WHERE {active} AND ({key}, priority) > (g.key, g.priority)
                ORDER BY {key}, priority LIMIT 1
            ) later
        ),
        several_keys AS MATERIALIZED (SELECT count(DISTINCT key) > 1 AS several FROM groups),
        -- Counted only when more than one key is active (the count cannot order runs of one key), from the leased
        -- samples' partial index: it reads every worker's leases (~workers x batch rows), a cost per claim that
        -- grows with the workers.
        leased_by_key AS MATERIALIZED (
            SELECT (SELECT CASE WHEN {active} THEN {key} END FROM runs WHERE runs.id = l.run_id) AS key,
                   count(*) AS leased
            FROM samples l WHERE l.state = '{SampleState.LEASED}' GROUP BY 1
        )
        SELECT c.id, c.priority FROM groups g CROSS JOIN LATERAL (
            SELECT r.id, r.priority, r.created_at FROM runs r
            WHERE {sql_in("r.status", ACTIVE_RUN_STATES)} AND {claim_key("r")} = g.key AND r.priority = g.priority
              AND {has_queued}
            ORDER BY r.created_at, r.id LIMIT 8
        ) c
        WHERE CAST(:only AS text) IS NULL OR g.priority = CAST(:only AS text)
        ORDER BY c.priority != CAST(:first AS text),
                 CASE WHEN (SELECT several FROM several_keys)
                      THEN coalesce((SELECT leased FROM leased_by_key b WHERE b.key = g.key), 0) ELSE 0 END,
                 c.created_at, c.id
        LIMIT 8
        """
    ).columns(id=UUID(as_uuid=True), priority=Text())


def _claim():
    """One problem per claim: samples of the head run, then (to fill the batch) samples of the same problem in
    other active runs with the same priority and the same limits (one-sample runs such as POST /run_code's
    then share a batch); they share a program prefix and limits. Returns each sample's run status too, so
    that marking runs `running` costs a statement only when one of them is still queued, and its API key (the
    re-run lane takes turns by key)."""
    # The problem: that of a queued sample of the head run found from a random pivot between the run's first and
    # last queued samples (then from the first, if none is left past it), so that workers claiming together
    # spread over the run's problems instead of all reaching for its first rows (SKIP LOCKED makes them pass
    # each other's, but each still walks them). Walking ix_samples_queued_run in its order: `= ANY(ARRAY[run])`
    # rather than `= run`, which would let the planner walk the primary key instead, filtering every queued
    # sample of the runs before this one (it assumes them spread evenly over the ids, and they are not).
    # LIMIT 1 in the SQL text, not a parameter: a worker's plans are generic (database.make_worker_engine), and a
    # generic plan that does not know the limit expects to read a tenth of the rows, so it sorts them instead of
    # walking an index.
    in_head_run = (samples.c.state == fixed(SampleState.QUEUED),
                   samples.c.run_id == any_(array([bindparam("head_run", type_=UUID)])))

    def queued_end(*order):
        return select(samples.c.id).where(*in_head_run).order_by(*order).limit(ONE).scalar_subquery()

    first, last = queued_end(samples.c.run_id, samples.c.id), queued_end(samples.c.run_id.desc(), samples.c.id.desc())
    pivot = select(cast(first + func.floor(func.random() * (last - first + 1)), BigInteger).label("at")).cte("pivot")
    at = select(pivot.c.at).scalar_subquery()
    head_columns = (
        samples.c.run_id, samples.c.problem_id, runs.c.priority, runs.c.time_limit_s, runs.c.memory_mb, runs.c.use_cache,
        runs.c.compile_time_limit_s, runs.c.compile_memory_mb,
    )

    def from_pivot(side, name: str):
        return (
            select(*head_columns)
            .select_from(samples.join(runs, runs.c.id == samples.c.run_id))
            .where(*in_head_run, side)
            .order_by(samples.c.run_id, samples.c.id)
            .limit(ONE)
            .with_for_update(of=samples, skip_locked=True)
            .cte(name)
        )

    # A CTE is read on demand: `before` is walked only when `past` found nothing.
    past, before = from_pivot(samples.c.id >= at, "past"), from_pivot(samples.c.id < at, "before")
    head = select(union_all(select(past), select(before)).subquery("found")).limit(ONE).cte("head")
    same_limits = and_(
        runs.c.status.in_(fixed(ACTIVE_RUN_STATES)), runs.c.priority == head.c.priority, runs.c.use_cache == head.c.use_cache,
        runs.c.time_limit_s.is_not_distinct_from(head.c.time_limit_s), runs.c.memory_mb.is_not_distinct_from(head.c.memory_mb),
        runs.c.compile_time_limit_s.is_not_distinct_from(head.c.compile_time_limit_s),
        runs.c.compile_memory_mb.is_not_distinct_from(head.c.compile_memory_mb),
    )
    # The head run's samples of that problem first (ix_samples_queued_group, in id order), then, only if the
    # batch is not full, other runs' (ix_samples_queued_problem): two index scans that stop at the batch size,
    # rather than sorting every queued sample of the problem across runs on each claim.
    # Ordered as the indexes are (the run and the problem are constants), so that the planner walks them.
    queued = samples.c.state == fixed(SampleState.QUEUED)
    problem = select(head.c.problem_id).scalar_subquery()
    head_rows = (
        select(samples.c.id)
        .where(queued, samples.c.run_id == bindparam("head_run"), samples.c.problem_id == problem)
        .order_by(samples.c.run_id, samples.c.problem_id, samples.c.id)
        .limit(bindparam("limit"))
        .with_for_update(of=samples, skip_locked=True)
        .cte("head_rows")
    )
    # The other run's limits are checked sample by sample as ix_samples_queued_problem is walked (a scalar subquery
    # with a LIMIT, which the planner cannot turn into a join): as a join, the planner would read every active run of
    # the priority first (thousands of one-sample runs in an RL step's backlog) and sort their queued samples.
    fits = select(ONE).where(runs.c.id == samples.c.run_id, same_limits).limit(ONE).scalar_subquery()
    others = (
        select(samples.c.id)
        .select_from(samples.join(head, true()))
        .where(queued, samples.c.problem_id == problem, samples.c.run_id != head.c.run_id, fits.is_not(None))
        .order_by(samples.c.problem_id, samples.c.id)
        .limit(bindparam("limit") - select(func.count()).select_from(head_rows).scalar_subquery())
        .with_for_update(of=samples, skip_locked=True)
        .cte("others")
    )
    picked = union_all(select(head_rows.c.id), select(others.c.id)).cte("picked")
    run_status = select(runs.c.status).where(runs.c.id == samples.c.run_id).scalar_subquery()
    run_key = select(runs.c.api_key_id).where(runs.c.id == samples.c.run_id).scalar_subquery()
    return (
        update(samples)
        .where(samples.c.id == picked.c.id)
        .values(
            state=SampleState.LEASED, lease_owner=bindparam("owner"), attempts=samples.c.attempts + 1,
            lease_expires_at=func.now() + bindparam("lease", type_=Interval),
        )
        .returning(
            samples.c.id, samples.c.run_id, samples.c.problem_id, samples.c.completion, samples.c.attempts,
            run_status.label("run_status"), run_key.label("api_key_id"),
        )
    )


_LIMITS = ("time_limit_s", "memory_mb", "compile_time_limit_s", "compile_memory_mb")


def _context():
    """The problem's row, with the run's cache choice and the run's and the dataset's limits (`run_…`,
    `dataset_…`), from which limits_in_force decides the limits in force."""
    return (
        select(
            problems, runs.c.use_cache, datasets.c.language,
            *(runs.c[name].label(f"run_{name}") for name in _LIMITS),
            *(datasets.c[name].label(f"dataset_{name}") for name in _LIMITS),
        )
        .select_from(
            problems.join(runs, runs.c.id == bindparam("run_id")).join(datasets, datasets.c.id == problems.c.dataset_id)
        )
        .where(problems.c.id == bindparam("problem_id"))
    )


# Built once: a claim is the hottest path of every worker.
_CANDIDATE_RUNS, _CLAIM, _CONTEXT = _candidate_runs(), _claim(), _context()
_STARTING = (
    update(runs)
    .where(
        runs.c.id.in_(
            select(runs.c.id)
            .where(runs.c.id.in_(bindparam("run_ids", expanding=True)), runs.c.status == fixed(RunState.QUEUED))
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
    )
    .values(status=RunState.RUNNING, started_at=func.now())
)
# A problem's row and a run's limits never change once stored: a worker reads them once per (run, problem).
_CONTEXTS: dict[tuple[uuid.UUID, int], Row] = {}
_CONTEXTS_KEPT = 4096


def _context_of(session: Session, run_id: uuid.UUID, problem_id: int) -> Row:
    key = (run_id, problem_id)
    context = _CONTEXTS.get(key)
    if context is None:
        context = session.execute(_CONTEXT, {"run_id": run_id, "problem_id": problem_id}).one()
        if len(_CONTEXTS) >= _CONTEXTS_KEPT:
            _CONTEXTS.clear()
        _CONTEXTS[key] = context
    return context


def claim_batch(
    session: Session,
    owner: str,
    limit: int,
    lease_s: float,
    default_time_limit_s: float,
    default_memory_mb: int,
    image_id: str | Callable[[str], tuple[str, str]],
    first_priority: str = "interactive",
    interactive_limit: int | None = None,
    only_priority: str | None = None,
) -> list[ClaimedSample]:
    """`image_id`: the sandbox image's id, or (languages) a function language -> (its image's id, toolchain
    version), which the program and its cache key include; what it raises ends the claim (the caller's transaction
    rolls back: nothing leased, no attempt counted). `interactive_limit`: at most this many samples of
    interactive runs in one claim (a thread runs its claim's programs one after the other: frames.ClaimSize says
    how many). `only_priority`: claim runs of that priority only."""
    rows: list = []
    priority = RunPriority.BATCH
    for candidate, priority in session.execute(_CANDIDATE_RUNS, {"first": first_priority, "only": only_priority}).all():
        most = interactive_limit if interactive_limit and priority == RunPriority.INTERACTIVE else limit
        rows = session.execute(
            _CLAIM, {"head_run": candidate, "owner": owner, "limit": most, "lease": timedelta(seconds=lease_s)}
        ).all()
        if rows:
            break
    if not rows:
        return []
    context = _context_of(session, rows[0].run_id, rows[0].problem_id)
    # SKIP LOCKED: a cancel holds the run row, then waits for the samples this claim holds; waiting here
    # for the run row would deadlock the two. Skipped, the run is marked running by a later claim (or is
    # being cancelled, and the worker's cancel check releases these samples).
    starting = sorted({row.run_id for row in rows if row.run_status == RunState.QUEUED})
    if starting:
        session.execute(_STARTING, {"run_ids": starting})
    language = context.language or languages.DEFAULT
    # The formats read the limits in force from the row's `limits`: the worker's own defaults fill what the
    # run, the problem and the dataset left unset (never the process-wide settings).
    limits = limits_in_force(
        run=SimpleNamespace(**{name: context._mapping[f"run_{name}"] for name in _LIMITS}),
        problem=context,
        dataset=SimpleNamespace(**{name: context._mapping[f"dataset_{name}"] for name in _LIMITS}),
        language=languages.all_languages().get(language),
        default_time_limit_s=default_time_limit_s,
        default_memory_mb=default_memory_mb,
    )
    time_limit, memory_bytes = limits.time_limit_s, limits.memory_bytes
    problem = SimpleNamespace(**context._mapping, limits=limits)
    image_key, toolchain = image_id(language) if callable(image_id) else (image_id, "")
    claimed = []
    for row in sorted(rows, key=lambda r: r.id):
        program = with_toolchain(program_for(problem, row.completion), toolchain)
        limit_s = program.time_limit_s or time_limit
        claimed.append(
            ClaimedSample(
                id=row.id,
                run_id=row.run_id,
                problem_key=context.key,
                program=program.text,
                time_limit_s=limit_s,
                memory_bytes=memory_bytes,
                attempts=row.attempts,
                judged=program.judged,
                # A variant's programs (python-science) are its family's, run in the variant's image.
                language=language if languages.get(language).family == program.language else program.language,
                native=program.native is not None,
                api_key_id=row.api_key_id,
                priority=priority,
                cache_key=(
                    cache_key(program.text, limit_s, memory_bytes, image_key, program.judged) if context.use_cache else None
                ),
            )
        )
    return claimed


def renew_leases(session: Session, owner: str, lease_s: float, sample_ids: Collection[int] | None = None) -> int:
    """Extend this worker's leases that have run down by a quarter of `lease_s` (RENEW_AFTER); with `sample_ids`,
    only those (the ones it is still working on). Returns how many were extended.

    Renewing every row that carries our name would keep a lease alive forever after its batch was
    abandoned (results that could not be recorded, a claim whose commit reply was lost): such
    samples must expire so that reclaim_expired hands them to a worker again. A lease taken less than a
    quarter of its length ago is left as it is: rewriting it would cost a new version of the row and its index
    entries (lease_expires_at is indexed) and gain nothing, and most batches end before their first renewal.
    """
    if sample_ids is not None and not sample_ids:
        return 0
    run_down = samples.c.lease_expires_at < func.now() + timedelta(seconds=lease_s * (1 - RENEW_AFTER))
    if sample_ids is None:
        mine = select(samples.c.id).where(*leased_by(owner), run_down)
    else:  # by primary key (held_by: not by walking every worker's leases)
        mine = select(samples.c.id).where(*held_by(owner), run_down, samples.c.id.in_(sorted(sample_ids)))
    # SKIP LOCKED: rows a thread is recording right now need no renewal, and waiting for them (while
    # holding others that the recorder wants next) deadlocked renewals against recordings.
    mine = mine.with_for_update(skip_locked=True)
    result = session.execute(
        update(samples)
        .where(samples.c.id.in_(mine.scalar_subquery()))
        .values(lease_expires_at=func.now() + timedelta(seconds=lease_s))
    )
    return result.rowcount


def release_unrun(session: Session, owner: str, sample_ids: Collection[int]) -> int:
    """Leased samples this worker did not run (their run was cancelled, or their batch ran past its time budget):
    those of a cancelled run end `cancelled`; the others go back to the queue, their attempt not counted, and the
    workers waiting for work are woken.
    """
    released = _give_back(
        session, owner, sample_ids,
        detail=case((run_cancelled, "the run was cancelled before this sample ran")),
        attempts=case((run_cancelled, samples.c.attempts), else_=func.greatest(samples.c.attempts - 1, 0)),
    )
    if released:
        session.execute(notify(Channel.SAMPLES))
    return released


def requeue(session: Session, owner: str, sample_ids: Collection[int]) -> int:
    """Leased samples this worker gives back unrun (it is stopping): queued again, the attempt not counted."""
    return _give_back(session, owner, sample_ids, attempts=func.greatest(samples.c.attempts - 1, 0))


def _give_back(session: Session, owner: str, sample_ids: Collection[int], **values) -> int:
    """Leased samples back to the queue (`cancelled` where their run was), lease-guarded, their runs locked first."""
    if not sample_ids:
        return 0
    lock_runs_of(session, sample_ids)
    return session.execute(
        update(samples)
        .where(samples.c.id.in_(sorted(sample_ids)), *leased_by(owner))
        .values(state=requeued_state(), lease_owner=None, lease_expires_at=None, **values)
    ).rowcount


def reclaim_expired(session: Session, max_attempts: int) -> int:
    """Requeue samples whose worker vanished; give up on ones that took down a worker every time (they end, with
    their event ids; the runs they finish are ended by the sweep, results.end_runs, in the next transaction)."""
    expired = [samples.c.state == fixed(SampleState.LEASED), samples.c.lease_expires_at < func.now()]
    run_ids = set(session.execute(select(samples.c.run_id).distinct().where(*expired)).scalars())
    if not run_ids:
        return 0
    lock_runs(session, run_ids)  # the lock order: runs (against a cancel), then samples, in id order
    doomed = (
        select(samples.c.id)
        .where(*expired, samples.c.run_id.in_(sorted(run_ids)))
        .order_by(samples.c.id)
        .with_for_update()
        .cte("doomed")
    )
    spent = samples.c.attempts >= max_attempts
    ends = and_(spent, ~run_cancelled)
    result = session.execute(
        update(samples)
        .where(samples.c.id == doomed.c.id)
        .values(
            state=requeued_state((spent, SampleState.DONE)),
            verdict=case((run_cancelled, None), (spent, Verdict.SANDBOX_ERROR)),
            detail=case(
                (run_cancelled, "the run was cancelled while its worker was lost"),
                (spent, func.concat("the worker running this sample was lost ", samples.c.attempts, " times")),
            ),
            finished_at=case((ends, func.now())),
            event=case((ends, event_id()), else_=samples.c.event),
            lease_owner=None, lease_expires_at=None,
        )
        .returning(samples.c.id, samples.c.state)
    ).all()
    if any(row.state == SampleState.QUEUED for row in result):
        session.execute(notify(Channel.SAMPLES))
    return len(result)
