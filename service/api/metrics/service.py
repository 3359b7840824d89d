"""pass@k / pass^k for a run: counts come from one grouped query, numpy runs in a worker thread."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import MODEL_VERDICTS, Verdict
from service.core import kvalues
from service.core.exceptions import InvalidInput, NotFound
from service.api.metrics.convert import calibration_out, operating_out
from service.core.estimates import DiversityOut, diversity_out, groups_out, histogram_out, metric_out
from service.api.metrics.repository import MetricsRepository
from service.api.metrics.schemas import CurvesOut, ProblemResult, ProblemResults, RewardHacksOut, RunMetrics
from service.core.flags import described
from service.core.models import Run
from service.api.runs.coalesce import resolve_with
from service.api.runs.repository import FlagCounts, RunRepository
from service.api.runs.schemas import VerdictCounts, coverage
from service.api.auth.principal import Principal
from service.statistics import KTooLarge, per_problem_estimates
from service.statistics.calibration import CalibrationSummary, calibration_summary
from service.statistics.groups import TooManyGroups
from service.statistics.operating import OperatingSummary, SampleColumns, operating_summary
from service.core.states import RunState
from service.statistics.summary import Options, RunEstimates, canonical_order, summarize

# Below this mean share of distinct programs per problem, the n samples are far from n draws.
LOW_DIVERSITY = 0.5


@dataclass(frozen=True)
class ProblemCounts:
    key: str
    total: int
    pending: int
    verdicts: dict[str, int]
    tags: list[str] = field(default_factory=list)
    distinct_programs: int | None = None
    content_digest: str | None = None

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
    """'1,10,100' -> [1, 10, 100]; a 422 naming the query parameter otherwise."""
    try:
        return kvalues.parse_ks(raw)
    except ValueError as exc:
        raise InvalidInput(["query", "k"], str(exc), raw) from None


async def load_counts(
    session: AsyncSession, principal: Principal, run_id: uuid.UUID, *, distinct_programs: bool = False,
    content_digest: bool = False,
) -> tuple[Run, str, list[ProblemCounts]]:
    """The caller's run, its dataset's digest and its per-problem counts; 404 for an unknown run (or another
    project's)."""
    repository = MetricsRepository(session)
    found = await repository.get_run(principal, run_id)
    if found is None:
        raise NotFound("run", run_id)
    run, digest = found
    rows = await repository.problem_counts(run_id, distinct_programs=distinct_programs, content_digest=content_digest)
    counts = [
        ProblemCounts(
            row.key,
            row.total,
            row.pending,
            {v.value: getattr(row, v.value) for v in Verdict},
            list(row.tags or []),
            getattr(row, "distinct_programs", None),
            getattr(row, "content_digest", None),
        )
        for row in rows
    ]
    return run, digest, counts


async def load_runs_of_one_model(
    session: AsyncSession, principal: Principal, run_ids: Sequence[uuid.UUID], *, fewest: int, most: int, what: str
) -> tuple[str, list[tuple[Run, str, list[ProblemCounts]]]]:
    """The model and each run's load_counts, for a view over several runs of one model (`what`, e.g. "a sweep");
    a 422 naming `runs` for too few or many ids, a repeated one, or runs of several models."""
    if not fewest <= len(run_ids) <= most or len(set(run_ids)) != len(run_ids):
        raise InvalidInput(["query", "runs"], f"give {fewest} to {most} distinct run ids", [str(r) for r in run_ids])
    loaded = [await load_counts(session, principal, run_id) for run_id in run_ids]
    models = sorted({run.model for run, _, _ in loaded})
    if len(models) > 1:
        raise InvalidInput(["query", "runs"], f"{what} is one model's runs; these are of {', '.join(models)}", models)
    return models[0], loaded


def check_k_fits(ks: list[int], ns: np.ndarray, run: Run) -> None:
    """A 422 naming `k` when the largest k exceeds the run's smallest n."""
    if max(ks) > ns.min():
        raise InvalidInput(["query", "k"], f"k={max(ks)} exceeds the smallest n ({int(ns.min())}) of run {run.id}",
                           {"k": max(ks), "n_min": int(ns.min()), "run": str(run.id)})


def k_too_large(exc: KTooLarge) -> InvalidInput:
    ids = list(exc.problem_ids[:10])
    more = f" (+{len(exc.problem_ids) - 10} more)" if len(exc.problem_ids) > 10 else ""
    zero = " (every sample of these ended in sandbox_error)" if exc.min_n == 0 else ""
    message = f"{exc}. Problems with n={exc.min_n}{zero}: {', '.join(ids)}{more}"
    return InvalidInput(["query", "k"], message, {"k": exc.k, "n_min": exc.min_n, "problem_ids": ids})


def _diversity(problems: Sequence[ProblemCounts]) -> DiversityOut | None:
    known = [(p.distinct_programs, p.total) for p in problems if p.distinct_programs is not None and p.total > 0]
    return diversity_out(known)


async def load_sample_columns(session: AsyncSession, run_id: uuid.UUID, keys: Sequence[str]) -> SampleColumns:
    """Per-sample metadata of the run's finished samples on these problems (rows in `keys` order)."""
    rows = await MetricsRepository(session).sample_metadata(run_id)
    index = {key: i for i, key in enumerate(keys)}
    kept = [row for row in rows if row.key in index]
    if not kept:
        return SampleColumns.empty()

    def column(name: str) -> np.ndarray:
        # None -> NaN: "not sent"
        return np.array([getattr(row, name) for row in kept], dtype=np.float64)

    return SampleColumns(
        problem=np.array([index[row.key] for row in kept], dtype=np.intp),
        passed=np.array([1.0 if row.passed else 0.0 for row in kept]),
        cost=column("cost"),
        latency_ms=column("latency_ms"),
        input_tokens=column("input_tokens"),
        output_tokens=column("output_tokens"),
        confidence=column("confidence"),
        steps=column("steps"),
    )


def sample_figures(
    problems: Sequence[ProblemCounts], columns: SampleColumns, options: Options, bins: int
) -> tuple[OperatingSummary, CalibrationSummary | None]:
    """Cost, latency, tokens, steps and calibration on the resampled problems of pass@k (same seed)."""
    ns = np.fromiter((p.n for p in problems), dtype=np.int64, count=len(problems))
    cs = np.fromiter((p.c for p in problems), dtype=np.int64, count=len(problems))
    pass_at, _ = per_problem_estimates(ns, cs, list(options.ks), [p.key for p in problems])
    common = {"resamples": options.resamples, "confidence": options.confidence, "seed": options.seed}
    operating = operating_summary(columns, len(problems), pass_at, list(options.ks), **common)
    calibration = calibration_summary(
        columns.problem, columns.confidence, columns.passed, len(problems), bins=bins, **common
    )
    return operating, calibration


def _summarize(problems: Sequence[ProblemCounts], options: Options) -> RunEstimates:
    ids = [p.key for p in problems]
    ns = np.fromiter((p.n for p in problems), dtype=np.int64, count=len(problems))
    cs = np.fromiter((p.c for p in problems), dtype=np.int64, count=len(problems))
    return summarize(ids, ns, cs, options, [p.tags for p in problems])


class MetricsCache:
    """Rendered run metrics (the response body) by (run state, query): a poll of a run whose state has not
    changed is answered without resampling or rendering, and with `If-None-Match` without a body (the state
    and query make the ETag).

    Polls that miss at the same moment share one computation (`get_or_compute`): twenty dashboards polling a
    running run compute its metrics once per state, not twenty times.
    """

    def __init__(self, kept: int = 256) -> None:
        self.kept = kept
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._pending: dict[str, asyncio.Future[bytes | None]] = {}

    def get(self, etag: str) -> bytes | None:
        found = self._entries.get(etag)
        if found is not None:
            self._entries.move_to_end(etag)
        return found

    def put(self, etag: str, metrics: bytes) -> None:
        self._entries[etag] = metrics
        while len(self._entries) > self.kept:
            self._entries.popitem(last=False)

    async def get_or_compute(self, etag: str, compute: Callable[[], Awaitable[bytes]]) -> bytes:
        """The cached metrics, else those another request is computing, else compute() (kept)."""
        while (found := self.get(etag)) is None:
            pending = self._pending.get(etag)
            if pending is None:
                return await self._compute(etag, compute)
            # Shielded: a waiter that goes away does not cancel the computation others wait for. None: the
            # computing request was cancelled; look again (and compute if nobody else does).
            if (shared := await asyncio.shield(pending)) is not None:
                return shared
        return found

    async def _compute(self, etag: str, compute: Callable[[], Awaitable[bytes]]) -> bytes:
        future: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        self._pending[etag] = future
        try:
            metrics = await resolve_with(future, compute)
        finally:
            del self._pending[etag]
        self.put(etag, metrics)
        return metrics


async def metrics_etag(session: AsyncSession, principal: Principal, run_id: uuid.UUID, query: str) -> str:
    """A strong ETag for the run's metrics under this query, from the run's current state; 404 for no run (or
    another project's: the ETag, and the cached figures it names, are reached only past this check)."""
    state = await MetricsRepository(session).run_state(principal, run_id)
    if state is None:
        raise NotFound("run", run_id)
    digest = hashlib.sha256(repr((str(run_id), *state, query)).encode()).hexdigest()[:32]
    return f'"{digest}"'


async def run_metrics(
    session: AsyncSession, principal: Principal, run_id: uuid.UUID, options: Options, *, diversity: bool = False,
    bins: int = 10,
) -> RunMetrics:
    # Distinct programs read every completion (~0.2 s per 200,000 samples): only when asked.
    run, _, counts = await load_counts(session, principal, run_id, distinct_programs=diversity)
    finished = [p for p in counts if p.finished]
    partial_ = len(finished) < len(counts)
    summary: RunEstimates | None = None
    if finished:
        try:
            # Bootstrapping 1,000 problems x 10,000 resamples is tens of ms of numpy: keep it off the event loop.
            summary = await anyio.to_thread.run_sync(partial(_summarize, finished, options))
        except KTooLarge as exc:
            raise k_too_large(exc) from exc
        except TooManyGroups as exc:
            raise InvalidInput(["query", "tag_prefix"], str(exc), options.tag_prefix) from exc
    extras: dict[str, object] = {}
    if summary is not None:
        # In the order summarize resamples problems (by id), so these figures draw exactly pass@k's
        # resampled problems: cost per solved problem's bounds stay cost / pass@k's bounds.
        ordered = [finished[i] for i in canonical_order([p.key for p in finished])]
        columns = await load_sample_columns(session, run_id, [p.key for p in ordered])
        if columns.problem.size:
            operating, calibration = await anyio.to_thread.run_sync(
                partial(sample_figures, ordered, columns, options, bins)
            )
            extras = {**operating_out(operating, run.currency), "calibration": calibration_out(calibration)}
    note = None
    if not finished:
        note = "no problem has finished yet: metrics appear once all samples of at least one problem have run"
    elif partial_:
        note = (
            f"partial: computed over the {len(finished)} of {len(counts)} problems whose samples have all "
            "finished; the estimate may move as the rest finish"
        )
        if run.status == RunState.CANCELLED:
            note += " (the run was cancelled: problems none of whose samples got a verdict are left out)"
    warnings = list(summary.warnings) if summary else []
    diversity_summary = _diversity(finished)
    if diversity_summary is not None and diversity_summary.mean_distinct_fraction < LOW_DIVERSITY:
        warnings.append(
            f"low diversity: on average only {diversity_summary.mean_distinct_fraction:.0%} of a problem's samples are "
            "distinct programs, so the n samples carry less information than n independent draws"
        )
    excluded = sum(p.verdicts[Verdict.SANDBOX_ERROR.value] for p in finished)
    if excluded:
        warnings.append(
            f"{excluded} sample{'s' if excluded != 1 else ''} still ended in sandbox_error after retries: "
            "excluded from n, not counted as failures"
        )
    dataset_name, dataset_problems = await MetricsRepository(session).dataset_header(run.dataset_id)
    covered = coverage(len(finished), dataset_problems)
    if covered.subset and finished:
        warnings.insert(
            0,
            f"subset: these figures cover {covered.text} of {dataset_name}; they are not comparable with "
            "scores over the whole dataset",
        )
    hacks = await RunRepository(session).flag_counts(run.id)
    if hacks.samples:
        # First: an RL team whose rewards are these verdicts needs this more than any other figure.
        warnings.insert(0, reward_hack_warning(hacks, run.id))
    histogram = None if summary is None else histogram_out(summary.histogram)
    return RunMetrics(
        dataset_name=dataset_name,
        dataset_problems=dataset_problems,
        coverage=covered,
        run_id=run.id,
        dataset_id=run.dataset_id,
        model=run.model,
        sampling=run.sampling,
        status=run.status,  # type: ignore[arg-type]
        partial=partial_,
        problems=len(finished),
        problems_finished=len(finished),
        problems_total=len(counts),
        samples=summary.samples if summary else 0,
        excluded_sandbox_errors=excluded,
        n_min=summary.n_min if summary else None,
        n_max=summary.n_max if summary else None,
        k_max_allowed=summary.k_bound.k_max_allowed if summary else None,
        k_max_bounding_problems=summary.k_bound.problem_ids if summary else [],
        k_max_bounding_count=summary.k_bound.problems if summary else 0,
        seed=options.seed,
        method=options.method,
        confidence=options.confidence,
        resamples=options.resamples,
        metrics=[metric_out(m) for m in summary.metrics] if summary else [],
        histogram=histogram,
        diversity=diversity_summary,
        groups=groups_out(summary.groups, options.ks) if summary and summary.groups else None,
        **extras,  # type: ignore[arg-type]
        reward_hacks=RewardHacksOut(samples=hacks.samples, passed=hacks.passed, by_flag=hacks.by_flag),
        warnings=warnings,
        note=note,
    )


def reward_hack_warning(hacks: FlagCounts, run_id: uuid.UUID) -> str:
    """`3 samples did what only a forger does: 2 ended with ... (ended_early), ...; 1 of them passed anyway ...`"""
    plural = "s" if hacks.samples != 1 else ""
    passed = (
        f"{hacks.passed} of them passed anyway and count as passes in these figures" if hacks.passed
        else "none of them passed"
    )
    return (
        f"{hacks.samples} sample{plural} did what only a forger does: {described(hacks.by_flag)}; {passed} "
        f"(GET /v1/runs/{run_id}/samples?flagged=true lists them)"
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
            distinct_programs=p.distinct_programs or 0,
            tags=p.tags,
            pass_at_k=at[i],
            pass_hat_k=hat[i],
        )
        for i, p in enumerate(problems)
    ]


def curves(problems: Sequence[ProblemCounts]) -> CurvesOut | None:
    """Mean pass@k and pass^k for k = 1 .. n_min over the finished problems with n > 0 (the dashboard's curves)."""
    finished = [p for p in problems if p.finished and p.n > 0]
    if not finished:
        return None
    ns = np.fromiter((p.n for p in finished), dtype=np.int64, count=len(finished))
    cs = np.fromiter((p.c for p in finished), dtype=np.int64, count=len(finished))
    n_min = int(ns.min())
    pass_at, pass_hat = per_problem_estimates(ns, cs, range(1, n_min + 1))
    return CurvesOut(
        n_min=n_min,
        problems=len(finished),
        pass_at_k=pass_at.mean(axis=0).tolist(),
        pass_hat_k=pass_hat.mean(axis=0).tolist(),
    )


def _results(problems: Sequence[ProblemCounts], ks: list[int]) -> tuple[list[ProblemResult], CurvesOut | None]:
    return _per_problem(problems, ks), curves(problems)


async def problem_results(
    session: AsyncSession, principal: Principal, run_id: uuid.UUID, ks: list[int]
) -> ProblemResults:
    _, _, counts = await load_counts(session, principal, run_id, distinct_programs=True)
    problems, curve_points = await anyio.to_thread.run_sync(_results, counts, ks)
    return ProblemResults(run_id=run_id, ks=ks, problems=problems, curves=curve_points)
