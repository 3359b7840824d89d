"""The verdict cache: what decides a verdict (the key), which outcomes may be kept, and reading and writing them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from sandbox.executor import Outcome
from sandbox.verdicts import Verdict
from service.core.models import VerdictCache
from service.worker.outcomes import OUTCOME_COLUMNS, outcome_values

verdict_cache = VerdictCache.__table__

# Bump when the supervisor's judging changes, or what an entry keeps, so old cached verdicts stop matching
# (3: entries keep the reward-hack flags; older ones, written without them, would hand out unflagged copies).
CACHE_VERSION = 3


def cache_key(program: str, time_limit_s: float, memory_bytes: int, image_id: str, judged: bool = False) -> str:
    """Everything that decides a verdict: program bytes, limits, and the exact sandbox image (which holds the
    judges' code)."""
    header = json.dumps([CACHE_VERSION, image_id, time_limit_s, memory_bytes, judged]).encode()
    return hashlib.sha256(header + b"\0" + program.encode("utf-8", "surrogatepass")).hexdigest()


def wall_timeout(outcome: Outcome) -> bool:
    """The one rule for a load-dependent timeout: re-run before it is final, and never cached.

    A CPU-time timeout measures the program itself; a wall-clock one may only measure the machine's load. A
    `client` timeout is the wall-clock limit a /run_code client asked for (SandboxFusion's meaning): final at once,
    since the client waits for the answer, and never cached either.
    """
    return outcome.verdict is Verdict.TIMEOUT and outcome.timeout_kind not in ("cpu", "client")


def cacheable(outcome: Outcome) -> bool:
    # Our failures and wall-clock timeouts (load-dependent, or the client's) say nothing lasting about the program.
    return (outcome.verdict is not Verdict.SANDBOX_ERROR and not wall_timeout(outcome)
            and outcome.timeout_kind != "client")


def lookup_cache(session: Session, keys: Iterable[str]) -> dict[str, Outcome]:
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    columns = [verdict_cache.c[name] for name in OUTCOME_COLUMNS]
    rows = session.execute(
        select(verdict_cache.c.key, verdict_cache.c.failure, verdict_cache.c.flags, *columns)
        .where(verdict_cache.c.key.in_(wanted))
    ).all()
    # A hit is the program it repeats: its verdict, what failed, and the flags it raised.
    return {
        row.key: Outcome(
            id="", verdict=Verdict(row.verdict), detail=row.detail, exit_code=row.exit_code, signal=row.signal,
            duration_ms=row.duration_ms, cpu_ms=row.cpu_ms, stdout=row.stdout or "", stderr=row.stderr or "",
            stdout_truncated=row.stdout_truncated, stderr_truncated=row.stderr_truncated,
            failure=row.failure, flags=tuple(row.flags or ()),
        )
        for row in rows
    }


def store_cache(session: Session, entries: dict[str, Outcome]) -> None:
    if not entries:
        return
    session.execute(
        insert(verdict_cache).on_conflict_do_nothing(index_elements=[verdict_cache.c.key]),
        [{"key": key, **outcome_values(outcome)} for key, outcome in sorted(entries.items())],
    )
