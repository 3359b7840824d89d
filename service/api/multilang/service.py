"""Compare one model across languages: load each run's per-problem counts, check one model and one run per
language, and compute the per-language, micro and macro pass@k with a stratified bootstrap."""

from __future__ import annotations

from functools import partial

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.datasets.repository import DatasetRepository
from service.api.datasets.service import toolchains
from service.core.exceptions import Conflict, InvalidInput
from service.core.estimates import interval_out
from service.api.metrics.service import check_k_fits, load_runs_of_one_model
from service.api.multirun import MultiRunQuery
from service.api.multilang.schemas import AverageRow, KPoint, LanguageComparison, LanguageRow
from service.api.auth.principal import Principal
from service.statistics import per_problem_estimates
from service.statistics.intervals import Interval, Method
from service.statistics.languages import LanguageSummary, language_intervals

MAX_RUNS = 20


def _points(ks: list[int], intervals: list[Interval]) -> list[KPoint]:
    return [KPoint(k=k, pass_at_k=interval_out(iv)) for k, iv in zip(ks, intervals, strict=True)]


async def compare(session: AsyncSession, principal: Principal, query: MultiRunQuery) -> LanguageComparison:
    ks, resamples, confidence, seed, method = query.ks, query.resamples, query.confidence, query.seed, query.method
    model, loaded = await load_runs_of_one_model(
        session, principal, query.run_ids, fewest=1, most=MAX_RUNS, what="a language comparison"
    )
    datasets = DatasetRepository(session)
    rows: dict[str, tuple] = {}
    for run, _, counts in loaded:
        dataset = await datasets.of_run(run.dataset_id)
        if dataset.language in rows:
            other = rows[dataset.language][0]
            raise InvalidInput(["query", "runs"], f"runs {other.id} and {run.id} are both in {dataset.language}: "
                               "give one run per language", dataset.language)
        rows[dataset.language] = (run, dataset, counts)
    values: dict[str, np.ndarray] = {}
    for language, (run, _, counts) in rows.items():
        finished = [p for p in counts if p.finished]
        if not finished:
            raise Conflict(f"run {run.id} ({language}) has no finished problem yet: nothing to compare")
        ns = np.array([p.n for p in finished], dtype=np.int64)
        cs = np.array([p.c for p in finished], dtype=np.int64)
        check_k_fits(ks, ns, run)
        values[language] = per_problem_estimates(ns, cs, ks, [p.key for p in finished])[0]
    summary: LanguageSummary = await anyio.to_thread.run_sync(partial(
        language_intervals, values, resamples=resamples, confidence=confidence, seed=seed, method=method))
    versions = await toolchains(session)
    warnings = []
    small = sorted(language for language, v in values.items() if v.shape[0] < 30)
    if small:
        warnings.append(f"fewer than 30 problems in {', '.join(small)}: intervals over so few problems are unreliable")
    if len(rows) == 1:
        warnings.append("one language only: micro and macro equal its own figures")
    return LanguageComparison(
        model=model, ks=ks, confidence=confidence, method=method, resamples=resamples, seed=seed,
        languages=[
            LanguageRow(
                language=group.tag, toolchain=versions.get(group.tag, (None, None))[0], run_id=rows[group.tag][0].id,
                dataset_id=rows[group.tag][1].id, dataset_name=rows[group.tag][1].name, problems=group.problems,
                pass_at_k=_points(ks, group.intervals),
            )
            for group in summary.languages
        ],
        micro=AverageRow(label=summary.micro_label, problems=summary.problems, pass_at_k=_points(ks, summary.micro)),
        macro=AverageRow(label=summary.macro_label, problems=summary.problems, pass_at_k=_points(ks, summary.macro)),
        warnings=warnings,
    )
