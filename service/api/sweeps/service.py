"""Temperature sweep use case: load each run's per-problem counts, check they are one model on one dataset."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.exceptions import Conflict, InvalidInput
from service.core.estimates import interval_out
from service.api.metrics.service import ProblemCounts, check_k_fits, load_runs_of_one_model
from service.api.multirun import MultiRunQuery
from service.api.auth.principal import Principal
from service.statistics import per_problem_estimates
from service.statistics.intervals import FEW_PROBLEMS, Method
from service.statistics.sweeps import SweepSummary, sweep_summary
from service.api.sweeps.schemas import Sweep, SweepBest, SweepPoint, SweepRun

MAX_RUNS = 20


def _temperature(sampling: dict[str, Any]) -> float | None:
    value = sampling.get("temperature")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _compute(per_run: list[np.ndarray], ks: list[int], resamples: int, confidence: float, seed: int,
             method: Method) -> SweepSummary:
    return sweep_summary(per_run, ks, resamples=resamples, confidence=confidence, seed=seed, method=method)


async def sweep(session: AsyncSession, principal: Principal, query: MultiRunQuery) -> Sweep:
    ks, resamples, confidence, seed, method = query.ks, query.resamples, query.confidence, query.seed, query.method
    model, loaded = await load_runs_of_one_model(session, principal, query.run_ids, fewest=2, most=MAX_RUNS, what="a sweep")
    digests = {digest for _, digest, _ in loaded}
    if len(digests) > 1:
        raise InvalidInput(["query", "runs"], "the runs are on different datasets: a sweep compares one dataset", None)
    finished_sets = [{p.key for p in counts if p.finished} for _, _, counts in loaded]
    shared = set.intersection(*finished_sets)
    first_counts = loaded[0][2]
    keys = [p.key for p in first_counts if p.key in shared]
    if not keys:
        raise Conflict("no problem has finished in every run yet: nothing to compare")
    by_run: list[dict[str, ProblemCounts]] = [{p.key: p for p in counts} for _, _, counts in loaded]
    per_run: list[np.ndarray] = []
    for (run, _, _), counts in zip(loaded, by_run, strict=True):
        ns = np.array([counts[k].n for k in keys], dtype=np.int64)
        cs = np.array([counts[k].c for k in keys], dtype=np.int64)
        check_k_fits(ks, ns, run)
        per_run.append(per_problem_estimates(ns, cs, ks, keys)[0])
    order = sorted(range(len(loaded)), key=lambda i: (_temperature(loaded[i][0].sampling) is None,
                                                      _temperature(loaded[i][0].sampling) or 0.0, i))
    runs = [loaded[i][0] for i in order]
    per_run = [per_run[i] for i in order]
    summary = await anyio.to_thread.run_sync(partial(_compute, per_run, ks, resamples, confidence, seed, method))

    warnings: list[str] = []
    temperatures = [_temperature(r.sampling) for r in runs]
    if any(t is None for t in temperatures):
        warnings.append("some runs have no numeric sampling.temperature: they are listed last")
    rest = [{k: v for k, v in r.sampling.items() if k != "temperature"} for r in runs]
    if any(other != rest[0] for other in rest[1:]):
        warnings.append(
            "the runs differ in sampling settings other than temperature: each is its own curve, nothing is pooled, "
            "but the differences are not due to temperature alone"
        )
    if len(set(temperatures)) < len(temperatures):
        warnings.append("two runs share a temperature: they are separate curves (never pooled)")
    if len(keys) < FEW_PROBLEMS:
        warnings.append(f"only {len(keys)} problems: intervals over so few problems are unreliable")
    else:
        warnings += [
            f"T={_temperature(run.sampling)}, pass@{k}: {interval.warning}"
            for run, intervals in zip(runs, summary.intervals, strict=True)
            for k, interval in zip(ks, intervals, strict=True) if interval.warning
        ]
    return Sweep(
        model=model, dataset_id=runs[0].dataset_id, problems=len(keys), ks=ks, confidence=confidence,
        method=method, resamples=resamples, seed=seed,
        runs=[
            SweepRun(
                run_id=run.id, temperature=_temperature(run.sampling), sampling=run.sampling,
                curve=[SweepPoint(k=k, pass_at_k=interval_out(iv)) for k, iv in zip(ks, ivs, strict=True)],
            )
            for run, ivs in zip(runs, summary.intervals, strict=True)
        ],
        best=[
            SweepBest(
                k=b.k, best_run_id=runs[b.best].id, best_temperature=_temperature(runs[b.best].sampling),
                tie=b.tie, tied_run_ids=[runs[r].id for r in b.tied], probability_best=b.probability_best, margin=b.margin, margin_ci_low=b.margin_low,
                margin_ci_high=b.margin_high, envelope=b.envelope, envelope_ci_low=b.envelope_low,
                envelope_ci_high=b.envelope_high,
            )
            for b in summary.best
        ],
        warnings=warnings,
    )
