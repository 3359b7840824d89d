"""Checkpoint view use case: one model's runs on one dataset in step order, each against the one before it.

A run's own pass@k is computed as its run page computes it (summarize, over its finished problems); the step from
one checkpoint to the next is paired over the problems both finished, exactly as GET /v1/compare pairs two runs.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import partial

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth.principal import Principal
from service.api.checkpoints.repository import CheckpointRepository
from service.api.checkpoints.schemas import ChangeOut, CheckpointPoint, CheckpointSeries, PendingCheckpoint
from service.api.metrics.service import ProblemCounts, load_counts
from service.core.estimates import interval_out
from service.core.exceptions import APIError, InvalidInput, NotFound
from service.core.models import Run
from service.statistics import Interval, KTooLarge, Method, per_problem_estimates
from service.statistics.checkpoints import Change, holm, versus_previous
from service.statistics.intervals import FEW_PROBLEMS
from service.statistics.summary import Options, summarize

# Points drawn at most: the latest this many steps are shown, and a warning says how many there are in all.
# Each costs about 0.15 s of bootstrap (164 problems, 10,000 resamples) on a quiet core.
MAX_POINTS = 100


class NoCheckpoints(NotFound):
    def __init__(self, model: str | None, dataset_name: str) -> None:
        which = f"of model {model!r} " if model is not None else ""
        APIError.__init__(
            self, f"no run {which}on dataset {dataset_name!r} carries a step: submit runs with `checkpoint` and "
            "`step` (passk submit --checkpoint NAME --step N)" + (", or check the model's name" if which else ""),
        )


@dataclass(frozen=True)
class CheckpointOptions:
    k: int = 1
    method: Method = "bca"
    confidence: float = 0.95
    resamples: int = 10_000
    seed: int = 0
    permutations: int = 10_000


@dataclass(frozen=True)
class _Loaded:
    run: Run
    finished: list[ProblemCounts]  # in dataset order


def _describe(run: Run) -> str:
    return f"checkpoint {run.checkpoint} (step {run.step}, run {run.id})" if run.checkpoint else f"step {run.step} (run {run.id})"


def _too_large(loaded: _Loaded, exc: KTooLarge) -> InvalidInput:
    ids = list(exc.problem_ids[:10])
    more = f" (+{len(exc.problem_ids) - 10} more)" if len(exc.problem_ids) > 10 else ""
    zero = " (every sample of these ended in sandbox_error)" if exc.min_n == 0 else ""
    return InvalidInput(
        ["query", "k"],
        f"k={exc.k} exceeds the samples per problem of {_describe(loaded.run)}: {len(exc.problem_ids)} problem(s) "
        f"have only n={exc.min_n}{zero}: {', '.join(ids)}{more}. Choose k up to {exc.min_n}.",
        {"k": exc.k, "n_min": exc.min_n, "run": str(loaded.run.id), "step": loaded.run.step, "problem_ids": ids},
    )


def _own_interval(loaded: _Loaded, options: CheckpointOptions) -> Interval:
    """The run's pass@k over its finished problems, the run page's figure to the last bit."""
    problems = loaded.finished
    try:
        estimates = summarize(
            [p.key for p in problems], np.array([p.n for p in problems], dtype=np.int64),
            np.array([p.c for p in problems], dtype=np.int64),
            Options(ks=[options.k], method=options.method, confidence=options.confidence,
                    resamples=options.resamples, seed=options.seed),
        )
    except KTooLarge as exc:
        raise _too_large(loaded, exc) from None
    return estimates.metrics[0].pass_at_k


def _change(previous: _Loaded, current: _Loaded, options: CheckpointOptions) -> Change | None:
    """current - previous over the problems both finished, in the previous run's (dataset) order as compare
    takes the base's; None when they share none."""
    theirs = {p.key: p for p in current.finished}
    pairs = [(p, theirs[p.key]) for p in previous.finished if p.key in theirs]
    if not pairs:
        return None
    keys = [b.key for b, _ in pairs]

    def column(side: list[ProblemCounts]) -> np.ndarray:
        ns = np.array([p.n for p in side], dtype=np.int64)
        cs = np.array([p.c for p in side], dtype=np.int64)
        return per_problem_estimates(ns, cs, [options.k], keys)[0][:, 0]

    return versus_previous(
        column([b for b, _ in pairs]), column([c for _, c in pairs]), k=options.k, confidence=options.confidence,
        resamples=options.resamples, seed=options.seed, method=options.method, permutations=options.permutations,
    )


def _compute(loaded: list[_Loaded], options: CheckpointOptions) -> tuple[list[Interval], list[Change | None]]:
    own = [_own_interval(item, options) for item in loaded]
    changes: list[Change | None] = [None] * min(1, len(loaded))  # the first checkpoint has none before it
    changes += [_change(a, b, options) for a, b in zip(loaded, loaded[1:])]
    return own, changes


def _warnings(loaded: list[_Loaded], changes: list[Change | None], shown: int, total: int,
              options: CheckpointOptions) -> list[str]:
    out: list[str] = []
    if total > shown:
        out.append(f"{total} runs carry a step; the latest {shown} are shown")
    steps = [item.run.step for item in loaded]
    repeated = sorted({s for s in steps if steps.count(s) > 1}, key=lambda s: s or 0)
    if repeated:
        out.append(
            "several runs share step " + ", ".join(str(s) for s in repeated)
            + ": each is its own point, in submission order, compared with the one before it"
        )
    sizes = {len(item.finished) for item in loaded}
    if len(sizes) > 1:
        out.append(
            "the runs cover different problems (" + ", ".join(str(s) for s in sorted(sizes)) + " finished): each "
            "point's pass@k is over its own problems; each change is paired over the problems both share"
        )
    if any(len(item.finished) < FEW_PROBLEMS for item in loaded):
        out.append(f"some runs have fewer than {FEW_PROBLEMS} finished problems: their intervals are unreliable")
    for item, change in zip(loaded[1:], changes[1:]):
        if change is None:
            out.append(f"{_describe(item.run)} shares no finished problem with the checkpoint before it: not compared")
    tested = sum(1 for c in changes if c is not None)
    if tested >= 10:
        expected = tested * (1.0 - options.confidence)
        out.append(
            f"{tested} steps are tested, each at {1 - options.confidence:.0%}: about {expected:.1f} marks are "
            "expected by chance alone; `p_value_adjusted` (Holm) holds for the whole series"
        )
    return out


async def _only_model(repository: CheckpointRepository, principal: Principal, dataset_id: uuid.UUID,
                      dataset_name: str) -> str:
    """Without a model named: the one model whose runs on the dataset carry a step; a 422 naming them if several."""
    models = await repository.models_with_steps(principal, dataset_id)
    if not models:
        raise NoCheckpoints(None, dataset_name)
    if len(models) > 1:
        shown = ", ".join(models[:20]) + (" and more" if len(models) > 20 else "")
        raise InvalidInput(["query", "model"], f"several models have checkpoints on {dataset_name}: {shown}; name "
                           "one with `model`", models[:20])
    return models[0]


async def checkpoint_series(
    session: AsyncSession, principal: Principal, model: str | None, dataset_id: uuid.UUID, options: CheckpointOptions
) -> CheckpointSeries:
    """The caller's runs of `model` on the dataset that carry a step (another project's runs do not exist here)."""
    repository = CheckpointRepository(session)
    dataset_name = await repository.dataset_name(principal, dataset_id)
    if dataset_name is None:
        raise NotFound("dataset", dataset_id)
    if model is None:
        model = await _only_model(repository, principal, dataset_id, dataset_name)
    runs, total = await repository.runs_with_steps(principal, model, dataset_id, MAX_POINTS)
    if not runs:
        raise NoCheckpoints(model, dataset_name)
    loaded: list[_Loaded] = []
    pending: list[PendingCheckpoint] = []
    for run in runs:
        _, _, counts = await load_counts(session, principal, run.id)
        finished = [p for p in counts if p.finished]
        if finished:
            loaded.append(_Loaded(run, finished))
        else:
            pending.append(PendingCheckpoint(run_id=run.id, checkpoint=run.checkpoint, step=run.step or 0,
                                             status=run.status))  # type: ignore[arg-type]
    own, changes = await anyio.to_thread.run_sync(partial(_compute, loaded, options))
    tested = [i for i, c in enumerate(changes) if c is not None]
    adjusted = dict(zip(tested, holm([changes[i].p_value for i in tested]), strict=True))  # type: ignore[union-attr]
    points = []
    for i, (item, interval, change) in enumerate(zip(loaded, own, changes, strict=True)):
        vs = None
        if change is not None:
            vs = ChangeOut(
                previous_run_id=loaded[i - 1].run.id, problems=change.problems,
                difference=interval_out(change.difference), p_value=change.p_value,
                p_value_exact=change.p_value_exact, p_value_adjusted=adjusted[i], significant=change.significant,
                direction=change.direction,
            )
        counts_all = item.run.problem_count
        points.append(
            CheckpointPoint(
                run_id=item.run.id, checkpoint=item.run.checkpoint, step=item.run.step or 0,
                status=item.run.status,  # type: ignore[arg-type]
                partial=len(item.finished) < counts_all, problems=len(item.finished),
                created_at=item.run.created_at, pass_at_k=interval_out(interval), vs_previous=vs,
            )
        )
    return CheckpointSeries(
        model=model, dataset_id=dataset_id, dataset_name=dataset_name, k=options.k, confidence=options.confidence,
        method=options.method, resamples=options.resamples, seed=options.seed, points=points, pending=pending,
        significant_changes=sum(1 for c in changes if c is not None and c.significant),
        warnings=_warnings(loaded, changes, len(runs), total, options),
    )
