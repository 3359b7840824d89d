"""Compare two runs on the same problems: paired intervals, a permutation test, McNemar for n = 1.

Only problems finished in both runs enter. Two runs on different datasets are
compared only when the caller asks for the intersection, and then only on
problems with the same id and the same prompt, test and entry point.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.api.compare.schemas import (
    CompareMetric,
    Comparison,
    DetectabilityOut,
    PairedFigureOut,
    McNemarOut,
    PerProblem,
    ProblemDelta,
    RunSide,
)
from service.core.exceptions import Conflict, InvalidInput
from service.api.metrics.convert import figure_out
from service.core.estimates import interval_out
from service.api.metrics.service import ProblemCounts, load_counts, load_sample_columns
from service.core.models import Run
from service.api.auth.principal import Principal
from service.statistics import KTooLarge, per_problem_estimates
from service.statistics.bootstrap import derive_seed
from service.statistics.intervals import FEW_PROBLEMS, Method
from service.statistics.power import detectability
from service.statistics.operating import (
    PairedFigure,
    SampleColumns,
    incremental_cost_per_success,
    paired_figures,
)
from service.statistics.paired import (
    correlation,
    mcnemar,
    paired_bootstrap,
    sign_flip_p_value,
    win_loss_tie,
)


@dataclass(frozen=True)
class CompareOptions:
    ks: Sequence[int]
    intersection: bool = False
    method: Method = "bca"
    confidence: float = 0.95
    resamples: int = 10_000
    seed: int = 0
    permutations: int = 10_000
    items_limit: int = 1000


@dataclass(frozen=True)
class _Loaded:
    run: Run
    digest: str
    counts: list[ProblemCounts]


@dataclass(frozen=True)
class _Paired:
    ids: list[str]
    base: list[ProblemCounts]
    candidate: list[ProblemCounts]
    dropped: int
    mismatched: int  # same id, different problem content (intersection only)
    shared: int  # problems in both runs, finished or not


def _pair(base: _Loaded, candidate: _Loaded, intersection: bool) -> _Paired:
    same = base.run.dataset_id == candidate.run.dataset_id or base.digest == candidate.digest
    if not same and not intersection:
        raise InvalidInput(
            ["query", "intersection"],
            f"the runs are on different datasets ({base.run.dataset_id} and {candidate.run.dataset_id}); pass "
            "intersection=true to compare them on the problems both datasets contain (same id, prompt and tests)",
            False,
        )
    by_key = {p.key: p for p in candidate.counts}
    ids: list[str] = []
    pairs_b: list[ProblemCounts] = []
    pairs_c: list[ProblemCounts] = []
    mismatched = shared = 0
    for b in base.counts:
        c = by_key.get(b.key)
        if c is None:
            continue
        if not same and b.content_digest != c.content_digest:
            mismatched += 1
            continue
        shared += 1
        if b.finished and c.finished:
            ids.append(b.key)
            pairs_b.append(b)
            pairs_c.append(c)
    union = len({p.key for p in base.counts} | set(by_key))
    return _Paired(ids, pairs_b, pairs_c, union - len(ids), mismatched, shared)


def _check_k(ks: Sequence[int], sides: Sequence[tuple[str, list[ProblemCounts]]], ids: list[str]) -> None:
    """422 naming the run and problems when a k exceeds the smallest n of the compared problems."""
    for name, problems in sides:
        ns = np.array([p.n for p in problems])
        if max(ks) > ns.min():
            exc = KTooLarge(max(ks), int(ns.min()), [ids[i] for i in np.flatnonzero(ns == ns.min())])
            shown = list(exc.problem_ids[:10])
            more = f" (+{len(exc.problem_ids) - 10} more)" if len(exc.problem_ids) > 10 else ""
            zero = " (every sample of these ended in sandbox_error)" if exc.min_n == 0 else ""
            raise InvalidInput(
                ["query", "k"],
                f"in the {name} run, {exc}. Problems with n={exc.min_n}{zero}: {', '.join(shown)}{more}",
                {"k": exc.k, "n_min": exc.min_n, "run": name, "problem_ids": shown},
            )


def _side(loaded: _Loaded, compared: list[ProblemCounts]) -> RunSide:
    ns = [p.n for p in compared]
    return RunSide(
        run_id=loaded.run.id,
        dataset_id=loaded.run.dataset_id,
        model=loaded.run.model,
        sampling=loaded.run.sampling,
        status=loaded.run.status,  # type: ignore[arg-type]
        problems=sum(1 for p in loaded.counts if p.finished),
        excluded_sandbox_errors=sum(p.verdicts[Verdict.SANDBOX_ERROR.value] for p in compared),
        n_min=min(ns) if ns else None,
        n_max=max(ns) if ns else None,
    )


def _warnings(base: _Loaded, candidate: _Loaded, paired: _Paired, partial_: bool) -> list[str]:
    out: list[str] = []
    b, c = base.run, candidate.run
    if b.sampling != c.sampling:
        keys = sorted(set(b.sampling) | set(c.sampling), key=str)
        diffs = [
            f"{k}: {b.sampling.get(k)!r} vs {c.sampling.get(k)!r}"
            for k in keys
            if b.sampling.get(k) != c.sampling.get(k)
        ]
        out.append(
            "sampling metadata differ (" + "; ".join(diffs) + "): the difference mixes the change of model with "
            "the change of sampling; each side is reported with its own metadata and nothing is pooled"
        )
    if (b.time_limit_s, b.memory_mb) != (c.time_limit_s, c.memory_mb):
        out.append(
            f"execution limits differ (time_limit_s {b.time_limit_s} vs {c.time_limit_s}, memory_mb {b.memory_mb} "
            f"vs {c.memory_mb}): verdicts of the same program could differ between the runs"
        )
    if b.dataset_id != c.dataset_id and base.digest == candidate.digest:
        out.append("the runs are on two datasets with identical content (same digest): compared as one dataset")
    if paired.mismatched:
        out.append(f"{paired.mismatched} problem(s) share an id but differ in prompt, test or entry point: left out")
    if partial_:
        out.append("some problems have unfinished samples in one of the runs: compared only where both finished")
    if paired.dropped:
        out.append(f"{paired.dropped} problem(s) of either run are not compared")
    if 0 < len(paired.ids) < FEW_PROBLEMS:
        out.append(f"only {len(paired.ids)} problems compared: intervals over so few problems are unreliable")
    return out


def _detectability_out(differences: np.ndarray) -> DetectabilityOut:
    d = detectability(differences)
    return DetectabilityOut(**{f: getattr(d, f) for f in DetectabilityOut.model_fields})


def _effective_warnings(metrics: list[CompareMetric], problems: int) -> list[str]:
    """A run's pass@k that few problems carry (where the comparison's own size does not already say so)."""
    if problems < FEW_PROBLEMS:
        return []
    return [
        f"{side}, pass@{m.k}: {interval.warning}"
        for m in metrics for side, interval in (("base", m.base), ("candidate", m.candidate)) if interval.warning
    ]


def _paired_out(figure: PairedFigure) -> PairedFigureOut:
    return PairedFigureOut(
        base=figure_out(figure.base), candidate=figure_out(figure.candidate),
        difference=figure_out(figure.difference), relative_difference=figure_out(figure.relative_difference),
    )


def _without_cost(columns: SampleColumns) -> SampleColumns:
    return replace(columns, cost=np.full(columns.cost.shape, np.nan))


def _figures(
    base: SampleColumns, candidate: SampleColumns, problems: int, options: CompareOptions
) -> dict[str, PairedFigure]:
    return paired_figures(
        base, candidate, problems, resamples=options.resamples, confidence=options.confidence, seed=options.seed
    )


def _compute(paired: _Paired, options: CompareOptions) -> tuple[list[CompareMetric], PerProblem, McNemarOut | None]:
    ks = list(options.ks)
    nb = np.array([p.n for p in paired.base], dtype=np.int64)
    cb = np.array([p.c for p in paired.base], dtype=np.int64)
    nc = np.array([p.n for p in paired.candidate], dtype=np.int64)
    cc = np.array([p.c for p in paired.candidate], dtype=np.int64)
    base_at, _ = per_problem_estimates(nb, cb, ks, paired.ids)
    cand_at, _ = per_problem_estimates(nc, cc, ks, paired.ids)
    intervals = paired_bootstrap(
        base_at, cand_at, resamples=options.resamples, confidence=options.confidence,
        seed=options.seed, method=options.method,
    )
    metrics: list[CompareMetric] = []
    for j, k in enumerate(ks):
        p_value, exact = sign_flip_p_value(
            cand_at[:, j] - base_at[:, j], permutations=options.permutations,
            seed=derive_seed(options.seed, f"sign-flip:{k}"),
        )
        metrics.append(
            CompareMetric(
                k=k, base=interval_out(intervals[j].base), candidate=interval_out(intervals[j].candidate),
                difference=interval_out(intervals[j].difference), p_value=p_value, p_value_exact=exact,
                permutations=options.permutations, correlation=correlation(base_at[:, j], cand_at[:, j]),
                detectability=_detectability_out(cand_at[:, j] - base_at[:, j]),
            )
        )
    tally = win_loss_tie(base_at[:, 0], cand_at[:, 0])
    items = [
        ProblemDelta(problem_id=i, base=b, candidate=c, delta=c - b)
        for i, b, c in zip(
            paired.ids[: options.items_limit], base_at[: options.items_limit, 0].tolist(),
            cand_at[: options.items_limit, 0].tolist(), strict=True,
        )
    ]
    per_problem = PerProblem(
        k=ks[0], wins=tally.wins, losses=tally.losses, ties=tally.ties, items=items,
        items_total=len(paired.ids), items_truncated=len(paired.ids) > options.items_limit,
    )
    result = None
    if np.all(nb == 1) and np.all(nc == 1):
        # One sample per problem: each run's outcome is 0/1, so McNemar applies to the discordant problems.
        m = mcnemar(int(np.count_nonzero((cc == 1) & (cb == 0))), int(np.count_nonzero((cc == 0) & (cb == 1))))
        result = McNemarOut(**vars(m))
    return metrics, per_problem, result


async def compare_runs(
    session: AsyncSession, principal: Principal, base_id: uuid.UUID, candidate_id: uuid.UUID, options: CompareOptions
) -> Comparison:
    """Candidate minus base, two of the caller's runs (another project's is a 404 as no run is)."""
    loaded: list[_Loaded] = []
    for run_id in (base_id, candidate_id):
        run, digest, counts = await load_counts(session, principal, run_id, content_digest=options.intersection)
        loaded.append(_Loaded(run, digest, counts))
    base, candidate = loaded
    paired = _pair(base, candidate, options.intersection)
    partial_ = any(not p.finished for side in loaded for p in side.counts)
    if paired.shared == 0:
        raise InvalidInput(
            ["query", "intersection"],
            f"the two datasets have no problem in common (same id, prompt, test and entry point); "
            f"{paired.mismatched} share an id only",
            True,
        )
    if not paired.ids:
        raise Conflict("no shared problem has finished in both runs yet: nothing to compare")
    _check_k(options.ks, [("base", paired.base), ("candidate", paired.candidate)], paired.ids)
    metrics, per_problem, mcnemar_out = await anyio.to_thread.run_sync(partial(_compute, paired, options))
    warnings = _warnings(base, candidate, paired, partial_) + _effective_warnings(metrics, len(paired.ids))
    columns_b = await load_sample_columns(session, base.run.id, paired.ids)
    columns_c = await load_sample_columns(session, candidate.run.id, paired.ids)
    currency = base.run.currency or candidate.run.currency
    if base.run.currency and candidate.run.currency and base.run.currency != candidate.run.currency:
        warnings.append(
            f"costs are in {base.run.currency} and {candidate.run.currency}: cost figures are not compared"
        )
        columns_b = _without_cost(columns_b)
        columns_c = _without_cost(columns_c)
        currency = None
    figures: dict[str, PairedFigure] = {}
    if columns_b.problem.size and columns_c.problem.size:
        figures = await anyio.to_thread.run_sync(partial(_figures, columns_b, columns_c, len(paired.ids), options))
    incremental = None
    if "mean_cost_per_sample" in figures and metrics[0].k == 1:
        mean_cost = figures["mean_cost_per_sample"]
        if mean_cost.base.estimate is not None and mean_cost.candidate.estimate is not None:
            incremental = incremental_cost_per_success(
                mean_cost.base.estimate, metrics[0].base.estimate, mean_cost.candidate.estimate,
                metrics[0].candidate.estimate,
            )
    same_dataset = base.run.dataset_id == candidate.run.dataset_id
    return Comparison(
        base=_side(base, paired.base),
        candidate=_side(candidate, paired.candidate),
        dataset_id=base.run.dataset_id if same_dataset else None,
        problems=len(paired.ids),
        dropped_problems=paired.dropped,
        intersection=not same_dataset and base.digest != candidate.digest,
        partial=partial_,
        confidence=options.confidence,
        method=options.method,
        resamples=options.resamples,
        seed=options.seed,
        metrics=metrics,
        per_problem=per_problem,
        mcnemar=mcnemar_out,
        currency=currency,
        figures={name: _paired_out(figure) for name, figure in figures.items()},
        incremental_cost_per_success=incremental,
        warnings=warnings,
    )
