"""Compare one model across languages: load each run's per-problem counts, check one model and one run per
language, and compute the per-language, micro and macro pass@k with a stratified bootstrap."""

from __future__ import annotations

import re
from functools import partial

import anyio.to_thread
import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox import languages as language_registry
from service.api.auth.principal import Principal
from service.api.datasets.repository import DatasetRepository
from service.api.datasets.service import toolchains
from service.api.metrics.service import check_k_fits, load_runs_of_one_model
from service.api.multilang.schemas import AverageRow, KPoint, LanguageComparison, LanguageRow, PairingOut
from service.api.multirun import MultiRunQuery
from service.core.estimates import interval_out
from service.core.exceptions import Conflict, InvalidInput
from service.formats.humaneval_x import PREFIXES as HUMANEVAL_X_PREFIXES
from service.statistics import per_problem_estimates
from service.statistics.intervals import FEW_PROBLEMS, Interval
from service.statistics.languages import LanguageSummary, language_intervals

MAX_RUNS = 20

PAIRING_RULE = (
    "the id after its language prefix: CPP/0, Go/0 (HumanEval-X), HumanEval/0 and HumanEval_0_<name> (MultiPL-E) "
    "are HumanEval/0; mbpp_2_<name> is MBPP/2; cpp/two_sum and go/two_sum are two_sum"
)
# MultiPL-E names a translated problem <benchmark>_<number>_<name>.
_MULTIPL_E_NAME = re.compile(r"(?i)(humaneval|mbpp)_(\d+)(?:_\w*)?")
_BENCHMARKS = {"humaneval": "HumanEval", "mbpp": "MBPP"}


def translation_key(problem_id: str) -> str:
    """The problem a (possibly translated) problem id names, so that one problem in several languages matches."""
    named = _MULTIPL_E_NAME.fullmatch(problem_id)
    if named:
        return f"{_BENCHMARKS[named.group(1).lower()]}/{named.group(2)}"
    prefix, slash, rest = problem_id.partition("/")
    if not slash or not rest:
        return problem_id
    if prefix in HUMANEVAL_X_PREFIXES or prefix.lower() in _BENCHMARKS:
        return f"{_BENCHMARKS.get(prefix.lower(), 'HumanEval')}/{rest}"
    try:
        language_registry.resolve(prefix)
    except ValueError:
        return problem_id
    return rest


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
    ids: dict[str, list[str]] = {}
    for language, (run, _, counts) in rows.items():
        finished = [p for p in counts if p.finished]
        if not finished:
            raise Conflict(f"run {run.id} ({language}) has no finished problem yet: nothing to compare")
        ns = np.array([p.n for p in finished], dtype=np.int64)
        cs = np.array([p.c for p in finished], dtype=np.int64)
        check_k_fits(ks, ns, run)
        values[language] = per_problem_estimates(ns, cs, ks, [p.key for p in finished])[0]
        ids[language] = [p.key for p in finished]
    keys = {language: [translation_key(i) for i in problem_ids] for language, problem_ids in ids.items()}
    summary: LanguageSummary = await anyio.to_thread.run_sync(partial(
        language_intervals, values, resamples=resamples, confidence=confidence, seed=seed, method=method,
        keys_by_language=keys, ids_by_language=ids))
    versions = await toolchains(session)
    warnings = list(summary.warnings)
    # An estimate that few problems carry, where the language's own size does not already say so.
    rows_shown = [(g.tag, g.problems, g.intervals) for g in summary.languages] + [
        ("micro average", summary.problems, summary.micro), ("macro average", summary.problems, summary.macro)
    ]
    warnings += [
        f"{name}, pass@{k}: {interval.warning}"
        for name, problems, intervals in rows_shown if problems >= FEW_PROBLEMS
        for k, interval in zip(ks, intervals, strict=True) if interval.warning
    ]
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
        pairing=None if summary.pairing is None else PairingOut(
            rule=PAIRING_RULE, joint=summary.pairing.joint, units=summary.pairing.units, paired=summary.pairing.keys,
            unmatched=summary.pairing.unmatched,
        ),
        warnings=warnings,
    )

