"""pass@k / pass^k for a run: counts come from one grouped query, numpy runs in a worker thread."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import MODEL_VERDICTS, Verdict
from service.dependencies import InvalidInput, NotFound
from service.metrics.schemas import IntervalOut, KMetric, ProblemResult, ProblemResults, RunMetrics
from service.models import Run
from service.runs.repository import RunRepository
from service.runs.schemas import VerdictCounts
from service.statistics import Interval, KTooLarge, bootstrap_means, per_problem_estimates

MAX_KS = 32
_K = re.compile(r"[0-9]{1,9}")  # ASCII only, and short enough that int() cannot blow up


@dataclass(frozen=True)
class ProblemCounts:
    key: str
    total: int
    pending: int
    verdicts: dict[str, int]

    @property
    def n(self) -> int:
        # sandbox_error is our failure, not the model's: it is neither a pass nor a fail.
        return sum(self.verdicts[v.value] for v in MODEL_VERDICTS)

    @property
    def c(self) -> int:
        return self.verdicts[Verdict.PASSED.value]

    @property
    def finished(self) -> bool:
        done = sum(self.verdicts.values())
        cancelled = self.total - self.pending - done
        if self.pending or done == 0:
            return False
        # n == 0 with cancelled samples: the problem simply did not run (cancelled run), leave it
        # out. n == 0 otherwise means every sample hit sandbox_error: keep it, so the client gets
        # a 422 naming it instead of a quietly smaller set of problems.
        return self.n > 0 or cancelled == 0


def parse_ks(raw: str) -> list[int]:
    """'1,10,100' -> [1, 10, 100] (order kept, duplicates dropped)."""
    ks: list[int] = []
    for part in raw.split(","):
        token = part.strip()
        if not _K.fullmatch(token) or int(token) < 1:
            raise InvalidInput(["query", "k"], f"k must be comma-separated positive integers; {token!r} is not one", raw)
        if int(token) not in ks:
            ks.append(int(token))
    if len(ks) > MAX_KS:
        raise InvalidInput(["query", "k"], f"at most {MAX_KS} values of k per request", raw)
    return ks


async def _load(session: AsyncSession, run_id: uuid.UUID) -> tuple[Run, list[ProblemCounts]]:
    repository = RunRepository(session)
    run = await repository.get(run_id)
    if run is None:
        raise NotFound("run", run_id)
    rows = await repository.problem_counts(run_id)
    counts = [
        ProblemCounts(row.key, row.total, row.pending, {v.value: getattr(row, v.value) for v in Verdict})
        for row in rows
    ]
    return run, counts


def _k_too_large(exc: KTooLarge) -> InvalidInput:
    ids = list(exc.problem_ids[:10])
    more = f" (+{len(exc.problem_ids) - 10} more)" if len(exc.problem_ids) > 10 else ""
    zero = " (every sample of these ended in sandbox_error)" if exc.min_n == 0 else ""
    message = f"{exc}. Problems with n={exc.min_n}{zero}: {', '.join(ids)}{more}"
    return InvalidInput(["query", "k"], message, {"k": exc.k, "n_min": exc.min_n, "problem_ids": ids})


def _intervals(
    problems: Sequence[ProblemCounts], ks: list[int], *, confidence: float, resamples: int, seed: int
) -> list[KMetric]:
    ids = [p.key for p in problems]
    ns = np.fromiter((p.n for p in problems), dtype=np.int64, count=len(problems))
    cs = np.fromiter((p.c for p in problems), dtype=np.int64, count=len(problems))
    if ns.min() == 0:
        # per_problem_estimates treats n=0 as invalid input; for the client it is the same
        # situation as k > n, so report it the same way.
        raise KTooLarge(max(ks), 0, [ids[i] for i in np.flatnonzero(ns == 0)])
    pass_at, pass_hat = per_problem_estimates(ns, cs, ks, ids)
    # One call: both metrics and every k share the same resampled problem sets.
    intervals = bootstrap_means(np.hstack([pass_at, pass_hat]), resamples=resamples, confidence=confidence, seed=seed)

    def out(interval: Interval) -> IntervalOut:
        return IntervalOut(**{f: getattr(interval, f) for f in IntervalOut.model_fields})

    return [
        KMetric(k=k, pass_at_k=out(intervals[j]), pass_hat_k=out(intervals[len(ks) + j]))
        for j, k in enumerate(ks)
    ]


async def run_metrics(
    session: AsyncSession, run_id: uuid.UUID, ks: list[int], *, confidence: float, resamples: int, seed: int
) -> RunMetrics:
    run, counts = await _load(session, run_id)
    finished = [p for p in counts if p.finished]
    partial_ = len(finished) < len(counts)
    metrics: list[KMetric] = []
    if finished:
        compute = partial(_intervals, finished, ks, confidence=confidence, resamples=resamples, seed=seed)
        try:
            # Bootstrapping 1,000 problems x 10,000 resamples is tens of ms of numpy: keep it off the event loop.
            metrics = await anyio.to_thread.run_sync(compute)
        except KTooLarge as exc:
            raise _k_too_large(exc) from exc
    ns = [p.n for p in finished]
    note = None
    if not finished:
        note = "no problem has finished yet: metrics appear once all samples of at least one problem have run"
    elif partial_:
        note = (
            f"partial: computed over the {len(finished)} of {len(counts)} problems whose samples have all "
            "finished; the estimate may move as the rest finish"
        )
        if run.status == "cancelled":
            note += " (the run was cancelled: problems none of whose samples got a verdict are left out)"
    return RunMetrics(
        run_id=run.id,
        dataset_id=run.dataset_id,
        model=run.model,
        sampling=run.sampling,
        status=run.status,  # type: ignore[arg-type]
        partial=partial_,
        problems=len(finished),
        problems_finished=len(finished),
        problems_total=len(counts),
        samples=sum(ns),
        excluded_sandbox_errors=sum(p.verdicts[Verdict.SANDBOX_ERROR.value] for p in finished),
        n_min=min(ns) if ns else None,
        n_max=max(ns) if ns else None,
        seed=seed,
        metrics=metrics,
        note=note,
    )


def _per_problem(problems: Sequence[ProblemCounts], ks: list[int]) -> list[ProblemResult]:
    ns = np.fromiter((p.n for p in problems), dtype=np.int64, count=len(problems))
    cs = np.fromiter((p.c for p in problems), dtype=np.int64, count=len(problems))
    at: list[dict[str, float | None]] = [{str(k): None for k in ks} for _ in problems]
    hat: list[dict[str, float | None]] = [{str(k): None for k in ks} for _ in problems]
    for k in ks:
        # Vectorised per k over the problems that have enough samples for it.
        rows = np.flatnonzero(ns >= k)
        if rows.size:
            pass_at, pass_hat = per_problem_estimates(ns[rows], cs[rows], [k])
            for row, a, h in zip(rows.tolist(), pass_at[:, 0].tolist(), pass_hat[:, 0].tolist(), strict=True):
                at[row][str(k)], hat[row][str(k)] = a, h
    return [
        ProblemResult(
            problem_id=p.key,
            n=p.n,
            c=p.c,
            done=p.pending == 0,
            total=p.total,
            pending=p.pending,
            by_verdict=VerdictCounts(**p.verdicts),
            pass_at_k=at[i],
            pass_hat_k=hat[i],
        )
        for i, p in enumerate(problems)
    ]


async def problem_results(session: AsyncSession, run_id: uuid.UUID, ks: list[int]) -> ProblemResults:
    _, counts = await _load(session, run_id)
    problems = await anyio.to_thread.run_sync(_per_problem, counts, ks)
    return ProblemResults(run_id=run_id, ks=ks, problems=problems)
