"""The samples table as a work queue: claim with leases, renew, record, reclaim.

Every function takes a Session and never commits; the caller's `transaction()`
makes each claim or each batch of results one atomic step. A lease guards every
write: a worker that lost its lease (it was presumed dead and the samples went
to another worker) cannot overwrite what the new owner records.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import bindparam, text
from sqlalchemy.orm import Session

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.failures import join_failure, split_failure
from service.formats.native import with_toolchain
from service.problems import program_for

# Which runs to serve first: the preferred priority, then the API key holding the fewest leased samples
# (keys share the workers at equal priority), then the oldest run. No locks: _CLAIM locks what it takes.
_CANDIDATE_RUNS = text(
    """
    SELECT r.id FROM runs r
    WHERE r.status IN ('queued', 'running')
      AND EXISTS (SELECT 1 FROM samples s WHERE s.run_id = r.id AND s.state = 'queued')
    ORDER BY (r.priority <> :first),
        (SELECT count(*) FROM samples l JOIN runs k ON k.id = l.run_id
         WHERE l.state = 'leased' AND k.status IN ('queued', 'running')
           AND k.api_key_id IS NOT DISTINCT FROM r.api_key_id),
        r.created_at, r.id
    LIMIT 8
    """
)

# One problem per claim: samples of the head run, then (to fill the batch) samples of the same problem in
# other active runs with the same priority and the same limits (one-sample runs such as POST /run_code's
# then share a batch); they share a program prefix and limits.
_CLAIM = text(
    """
    WITH head AS (
        SELECT s.run_id, s.problem_id, r.priority, r.time_limit_s, r.memory_mb, r.use_cache
        FROM samples s JOIN runs r ON r.id = s.run_id
        WHERE s.state = 'queued' AND s.run_id = :run_id ORDER BY s.id LIMIT 1
        FOR UPDATE OF s SKIP LOCKED
    ), picked AS (
        SELECT s.id FROM samples s JOIN runs r ON r.id = s.run_id CROSS JOIN head h
        WHERE s.state = 'queued' AND s.problem_id = h.problem_id
          AND (s.run_id = h.run_id OR (
              r.status IN ('queued', 'running') AND r.priority = h.priority AND r.use_cache = h.use_cache
              AND r.time_limit_s IS NOT DISTINCT FROM h.time_limit_s AND r.memory_mb IS NOT DISTINCT FROM h.memory_mb))
        ORDER BY (s.run_id <> h.run_id), s.id LIMIT :limit
        FOR UPDATE OF s SKIP LOCKED
    )
    UPDATE samples SET state = 'leased', lease_owner = :owner, attempts = attempts + 1,
        lease_expires_at = now() + make_interval(secs => :lease)
    FROM picked WHERE samples.id = picked.id
    RETURNING samples.id, samples.run_id, samples.problem_id, samples.completion, samples.attempts
    """
)

_CONTEXT = text(
    """
    SELECT p.*, r.use_cache, d.language,
           coalesce(r.time_limit_s, p.time_limit_s, d.time_limit_s) AS effective_time_limit_s,
           coalesce(r.memory_mb, p.memory_mb, d.memory_mb) AS effective_memory_mb
    FROM problems p JOIN runs r ON r.id = :run_id JOIN datasets d ON d.id = p.dataset_id
    WHERE p.id = :problem_id
    """
)


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
    # The dataset's language; for any but Python, `program` is the JSON of the native job (sandbox/languages).
    language: str = "python"


# Bump when the supervisor's judging changes, so old cached verdicts stop matching.
CACHE_VERSION = 2


def cache_key(program: str, time_limit_s: float, memory_bytes: int, image_id: str, judged: bool = False) -> str:
    """Everything that decides a verdict: program bytes, limits, and the exact sandbox image (which holds the
    judges' code)."""
    header = json.dumps([CACHE_VERSION, image_id, time_limit_s, memory_bytes, judged]).encode()
    return hashlib.sha256(header + b"\0" + program.encode("utf-8", "surrogatepass")).hexdigest()


def claim_batch(
    session: Session,
    owner: str,
    limit: int,
    lease_s: float,
    default_time_limit_s: float,
    default_memory_mb: int,
    image_id: str | Callable[[str], tuple[str, str]],
    first_priority: str = "interactive",
) -> list[ClaimedSample]:
    """`image_id`: the sandbox image's id, or (languages) a function language -> (its image's id, toolchain
    version), which the program and its cache key include."""
    rows: list = []
    for candidate in session.execute(_CANDIDATE_RUNS, {"first": first_priority}).scalars():
        rows = session.execute(
            _CLAIM, {"limit": limit, "owner": owner, "lease": lease_s, "run_id": candidate}
        ).all()
        if rows:
            break
    if not rows:
        return []
    run_id, problem_id = rows[0].run_id, rows[0].problem_id
    context = session.execute(_CONTEXT, {"run_id": run_id, "problem_id": problem_id}).one()
    # SKIP LOCKED: a cancel holds the run row, then waits for the samples this claim holds; waiting here
    # for the run row would deadlock the two. Skipped, the run is marked running by a later claim (or is
    # being cancelled, and the worker's cancel check releases these samples).
    session.execute(
        text(
            "UPDATE runs SET status = 'running', started_at = now() WHERE id IN "
            "(SELECT id FROM runs WHERE id = ANY(:run_ids) AND status = 'queued' FOR UPDATE SKIP LOCKED)"
        ),
        {"run_ids": sorted({row.run_id for row in rows})},
    )
    time_limit = context.effective_time_limit_s or default_time_limit_s
    memory_bytes = (context.effective_memory_mb or default_memory_mb) * 1024 * 1024
    language = getattr(context, "language", None) or "python"
    image_key, toolchain = image_id(language) if callable(image_id) else (image_id, "")
    claimed = []
    for row in sorted(rows, key=lambda r: r.id):
        program = with_toolchain(program_for(context, row.completion), toolchain)
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
                language=program.language,
                cache_key=(
                    cache_key(program.text, limit_s, memory_bytes, image_key, program.judged) if context.use_cache else None
                ),
            )
        )
    return claimed


_OUTCOME_COLUMNS = (
    "verdict", "detail", "exit_code", "signal", "duration_ms", "cpu_ms",
    "stdout", "stderr", "stdout_truncated", "stderr_truncated",
)


def lookup_cache(session: Session, keys: Iterable[str]) -> dict[str, Outcome]:
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    rows = session.execute(
        text(f"SELECT key, failure, {', '.join(_OUTCOME_COLUMNS)} FROM verdict_cache WHERE key = ANY(:keys)"),
        {"keys": wanted},
    ).all()
    return {
        row.key: Outcome(
            id="", verdict=Verdict(row.verdict), detail=join_failure(row.detail, row.failure), exit_code=row.exit_code, signal=row.signal,
            duration_ms=row.duration_ms, cpu_ms=row.cpu_ms, stdout=row.stdout or "", stderr=row.stderr or "",
            stdout_truncated=row.stdout_truncated, stderr_truncated=row.stderr_truncated,
        )
        for row in rows
    }


def wall_timeout(outcome: Outcome) -> bool:
    """The one rule for a load-dependent timeout: re-run before it is final, and never cached.

    A CPU-time timeout measures the program itself; a wall-clock one may only measure the machine's load.
    """
    return outcome.verdict is Verdict.TIMEOUT and outcome.timeout_kind != "cpu"


def cacheable(outcome: Outcome) -> bool:
    # Our failures and load-dependent wall-clock timeouts say nothing lasting about the program.
    return outcome.verdict is not Verdict.SANDBOX_ERROR and not wall_timeout(outcome)


def _store_cache(session: Session, entries: dict[str, Outcome]) -> None:
    if not entries:
        return
    columns = ", ".join(_OUTCOME_COLUMNS)
    values = ", ".join(f":{name}" for name in _OUTCOME_COLUMNS)
    session.execute(
        text(
            f"INSERT INTO verdict_cache (key, failure, {columns}) VALUES (:key, CAST(:failure AS jsonb), {values}) "
            "ON CONFLICT (key) DO NOTHING"
        ),
        [{"key": key, **_outcome_params(outcome)} for key, outcome in sorted(entries.items())],
    )


def _outcome_params(outcome: Outcome) -> dict[str, object]:
    detail, failure = split_failure(outcome.detail)
    return {
        "verdict": outcome.verdict.value,
        "detail": detail,
        "failure": json.dumps(failure) if failure is not None else None,
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "duration_ms": outcome.duration_ms,
        "cpu_ms": outcome.cpu_ms,
        "stdout": _clean(outcome.stdout),
        "stderr": _clean(outcome.stderr),
        "stdout_truncated": outcome.stdout_truncated,
        "stderr_truncated": outcome.stderr_truncated,
    }


def renew_leases(session: Session, owner: str, lease_s: float, sample_ids: Collection[int] | None = None) -> int:
    """Extend this worker's leases; with `sample_ids`, only those (the ones it is still working on).

    Renewing every row that carries our name would keep a lease alive forever after its batch was
    abandoned (results that could not be recorded, a claim whose commit reply was lost): such
    samples must expire so that reclaim_expired hands them to a worker again.
    """
    if sample_ids is not None and not sample_ids:
        return 0
    only = " AND id = ANY(:ids)" if sample_ids is not None else ""
    # SKIP LOCKED: rows a thread is recording right now need no renewal, and waiting for them (while
    # holding others that the recorder wants next) deadlocked renewals against recordings.
    result = session.execute(
        text(
            "UPDATE samples SET lease_expires_at = now() + make_interval(secs => :lease) WHERE id IN ("
            f"SELECT id FROM samples WHERE state = 'leased' AND lease_owner = :owner{only} FOR UPDATE SKIP LOCKED)"
        ),
        {"owner": owner, "lease": lease_s, "ids": sorted(sample_ids or ())},
    )
    return result.rowcount


_FINISH = text(
    """
    UPDATE samples SET state = 'done', verdict = :verdict, detail = :detail, exit_code = :exit_code,
        signal = :signal, duration_ms = :duration_ms, cpu_ms = :cpu_ms, stdout = :stdout, stderr = :stderr,
        stdout_truncated = :stdout_truncated, stderr_truncated = :stderr_truncated, finished_at = now(),
        cached = :cached, rerun = :rerun, lease_owner = NULL, lease_expires_at = NULL,
        failure = CAST(:failure AS jsonb)
    WHERE id = :b_id AND state = 'leased' AND lease_owner = :owner
    """
).bindparams(bindparam("b_id"))

# Each finished sample gets the next number of its run's events, under the run's row lock (held to commit),
# so numbers become visible in order: a reader that saw event N has seen every event below N.
_NUMBER_EVENTS = text(
    """
    WITH todo AS (
        SELECT id, row_number() OVER (ORDER BY id) AS k FROM samples
        WHERE run_id = :run_id AND id = ANY(:ids) AND state = 'done' AND event IS NULL
    ), bump AS (
        UPDATE runs SET events = events + (SELECT count(*) FROM todo) WHERE id = :run_id
        RETURNING events - (SELECT count(*) FROM todo) AS base
    )
    UPDATE samples SET event = bump.base + todo.k FROM todo, bump WHERE samples.id = todo.id
    """
)


def number_events(session: Session, run_id: uuid.UUID, sample_ids: Collection[int]) -> None:
    """Number the run's newly finished samples and wake whoever follows its events (at commit)."""
    if not sample_ids:
        return
    session.execute(_NUMBER_EVENTS, {"run_id": run_id, "ids": sorted(sample_ids)})
    session.execute(text("SELECT pg_notify('passk_events', :run)"), {"run": str(run_id)})

# A sample of a cancelled run is not put back in the queue (where a worker would run it for nobody):
# it ends `cancelled` like the run's other unfinished samples.
_RUN_CANCELLED = "EXISTS (SELECT 1 FROM runs WHERE runs.id = samples.run_id AND runs.status = 'cancelled')"

_RETRY = text(
    f"""
    UPDATE samples SET state = CASE WHEN {_RUN_CANCELLED} THEN 'cancelled' ELSE 'queued' END,
        detail = :detail, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = :b_id AND state = 'leased' AND lease_owner = :owner
    """
)

# A claim can hold samples of several runs (same problem and limits): only those of a cancelled run end
# `cancelled`; the others go back to the queue, their attempt not counted.
_RELEASE_CANCELLED = text(
    f"""
    UPDATE samples SET
        state = CASE WHEN {_RUN_CANCELLED} THEN 'cancelled' ELSE 'queued' END,
        detail = CASE WHEN {_RUN_CANCELLED} THEN 'the run was cancelled before this sample ran' END,
        attempts = CASE WHEN {_RUN_CANCELLED} THEN attempts ELSE greatest(attempts - 1, 0) END,
        lease_owner = NULL, lease_expires_at = NULL
    WHERE id = ANY(:ids) AND state = 'leased' AND lease_owner = :owner
    """
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
    _lock_runs(session, {sample.run_id for sample in claimed})
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
                **_outcome_params(outcome),
            }
        )
        if sample.cache_key and sample.id not in cached_ids and cacheable(outcome):
            fresh[sample.cache_key] = outcome
    if finish:
        session.execute(_FINISH, finish)
    if retry:
        session.execute(_RETRY, retry)
    _store_cache(session, fresh)
    for run_id in {sample.run_id for sample in claimed}:
        number_events(session, run_id, [row["b_id"] for row, sample in zip(finish, finished, strict=True)
                                        if sample.run_id == run_id])
        finish_run_if_done(session, run_id)


def release_cancelled(session: Session, owner: str, sample_ids: Collection[int]) -> int:
    """Leased samples this worker did not run because their run was cancelled: they end `cancelled`."""
    if not sample_ids:
        return 0
    _lock_runs_of(session, sample_ids)
    return session.execute(_RELEASE_CANCELLED, {"ids": sorted(sample_ids), "owner": owner}).rowcount


def _lock_runs_of(session: Session, sample_ids: Collection[int]) -> None:
    """Lock the runs these samples belong to: the same lock order as everywhere, runs, then samples."""
    rows = session.execute(
        text("SELECT DISTINCT run_id FROM samples WHERE id = ANY(:ids)"), {"ids": sorted(sample_ids)}
    ).scalars()
    _lock_runs(session, set(rows))


def requeue(session: Session, owner: str, sample_ids: Collection[int]) -> int:
    """Leased samples this worker gives back unrun (it is stopping): queued again, the attempt not counted."""
    if not sample_ids:
        return 0
    _lock_runs_of(session, sample_ids)
    return session.execute(
        text(
            f"""
            UPDATE samples SET state = CASE WHEN {_RUN_CANCELLED} THEN 'cancelled' ELSE 'queued' END,
                attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL
            WHERE id = ANY(:ids) AND state = 'leased' AND lease_owner = :owner
            """
        ),
        {"ids": sorted(sample_ids), "owner": owner},
    ).rowcount


def _clean(value: str) -> str:
    # PostgreSQL text cannot hold NUL bytes, which programs can print.
    return value.replace("\x00", "\\x00")


def _lock_runs(session: Session, run_ids: set[uuid.UUID]) -> None:
    # Serialises the "was that the last sample?" check between workers finishing one run together.
    for run_id in sorted(run_ids):
        session.execute(text("SELECT 1 FROM runs WHERE id = :id FOR UPDATE"), {"id": run_id})


def finish_run_if_done(session: Session, run_id: uuid.UUID) -> None:
    """Mark the run completed (or failed, if nothing but sandbox errors came back) once no sample is left."""
    ended = session.execute(
        text(
            """
            UPDATE runs SET finished_at = now(), status = CASE
                WHEN EXISTS (SELECT 1 FROM samples WHERE run_id = :id AND state = 'done' AND verdict <> 'sandbox_error')
                THEN 'completed' ELSE 'failed' END,
                callback_state = CASE WHEN callback_url IS NOT NULL THEN 'pending' END
            WHERE id = :id AND status IN ('queued', 'running')
              AND NOT EXISTS (SELECT 1 FROM samples WHERE run_id = :id AND state IN ('queued', 'leased'))
            RETURNING callback_url
            """
        ),
        {"id": run_id},
    ).first()
    if ended is not None:
        session.execute(text("SELECT pg_notify('passk_events', :run)"), {"run": str(run_id)})
        if ended.callback_url is not None:
            session.execute(text("NOTIFY passk_callbacks"))


def reclaim_expired(session: Session, max_attempts: int) -> int:
    """Requeue samples whose worker vanished; give up on ones that took down a worker every time."""
    run_ids = set(
        session.execute(
            text("SELECT DISTINCT run_id FROM samples WHERE state = 'leased' AND lease_expires_at < now()")
        ).scalars()
    )
    if not run_ids:
        return 0
    _lock_runs(session, run_ids)  # same lock order as record_outcomes: runs, then samples
    result = session.execute(
        text(
            f"""
            UPDATE samples SET
                state = CASE WHEN {_RUN_CANCELLED} THEN 'cancelled' WHEN attempts >= :max THEN 'done' ELSE 'queued' END,
                verdict = CASE WHEN {_RUN_CANCELLED} THEN NULL WHEN attempts >= :max THEN 'sandbox_error' END,
                detail = CASE WHEN {_RUN_CANCELLED} THEN 'the run was cancelled while its worker was lost'
                    WHEN attempts >= :max THEN 'the worker running this sample was lost ' || attempts || ' times' END,
                finished_at = CASE WHEN attempts >= :max AND NOT {_RUN_CANCELLED} THEN now() END,
                lease_owner = NULL, lease_expires_at = NULL
            WHERE state = 'leased' AND lease_expires_at < now() AND run_id = ANY(:run_ids)
            RETURNING id, run_id, state
            """
        ),
        {"max": max_attempts, "run_ids": list(run_ids)},
    ).all()
    for run_id in run_ids:
        number_events(session, run_id, [row.id for row in result if row.run_id == run_id and row.state == "done"])
        finish_run_if_done(session, run_id)
    if any(row.state == "queued" for row in result):
        session.execute(text("NOTIFY passk_samples"))
    return len(result)
