"""One model in several languages: per-language intervals, with the micro and the macro average.

Each language's problems are a stratum (a problem is in exactly one language). The bootstrap resamples
problems within each language, independently, with a seed derived from the language's name (adding a
language does not move another's); from the same per-language resamples:

- micro: the mean over all problems of all languages pooled, i.e. sum_g n_g * mean_g / N (bigger
  languages weigh more) -- "how does a random problem go";
- macro: the unweighted mean of the per-language means -- "how well does it do in each language".

Both are reported, labelled, and neither is called "the" average (seeds 000 and 004).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from service.statistics.bootstrap import derive_seed, resample_means
from service.statistics.groups import GroupResult, group_intervals
from service.statistics.intervals import (
    Interval,
    Method,
    clt_standard_errors,
    column_means,
    mean_intervals,
)

__all__ = ["LanguageSummary", "language_intervals", "micro_macro"]

MICRO_LABEL = "micro average: mean over all problems of all languages pooled (larger languages weigh more)"
MACRO_LABEL = "macro average: unweighted mean of the per-language means (every language weighs the same)"


@dataclass(frozen=True)
class LanguageSummary:
    languages: list[GroupResult]  # sorted by language name; `tag` is the language
    micro: list[Interval]
    macro: list[Interval]
    problems: int
    micro_label: str = MICRO_LABEL
    macro_label: str = MACRO_LABEL


def micro_macro(values_by_language: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The point estimates per column: (micro, macro)."""
    blocks = [np.asarray(v, dtype=float) for v in values_by_language.values()]
    pooled = np.concatenate(blocks, axis=0)
    return column_means(pooled), column_means(np.array([column_means(b) for b in blocks]))


def language_intervals(
    values_by_language: Mapping[str, np.ndarray], *, resamples: int, confidence: float, seed: int, method: Method,
) -> LanguageSummary:
    """values_by_language: language -> (problems, columns) per-problem scores in [0, 1] (e.g. pass@k per k)."""
    if not values_by_language:
        raise ValueError("no language to compare")
    names = sorted(values_by_language)
    blocks = [np.asarray(values_by_language[name], dtype=float) for name in names]
    if any(b.ndim != 2 or b.shape[0] == 0 for b in blocks) or len({b.shape[1] for b in blocks}) != 1:
        raise ValueError("each language needs a (problems, columns) array with at least one problem, same columns")
    values = np.concatenate(blocks, axis=0)
    tags = [[name] for name, block in zip(names, blocks, strict=True) for _ in range(block.shape[0])]
    # Disjoint groups: group_intervals gives per-language intervals and the stratified macro (with its
    # honest handling of languages whose values cannot vary), each language with seed derive_seed(seed, "group:<lang>").
    grouped = group_intervals(values, tags, resamples=resamples, confidence=confidence, seed=seed, method=method)
    # Micro from the same per-language resamples (stratified), weighted by problem counts.
    sizes = np.array([b.shape[0] for b in blocks], dtype=float)
    weights = sizes / sizes.sum()
    distribution = sum(
        w * resample_means(b, resamples=resamples, seed=derive_seed(seed, f"group:{name}"))
        for w, name, b in zip(weights, names, blocks, strict=True)
    )
    ses = np.array([clt_standard_errors(b) for b in blocks])
    micro = mean_intervals(
        np.asarray(distribution), values, method=method, confidence=confidence,
        standard_errors=np.sqrt(np.sum((weights[:, None] * ses) ** 2, axis=0)),
    )
    return LanguageSummary(grouped.groups, micro, grouped.macro, values.shape[0])
