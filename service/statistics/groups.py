"""Metrics per problem tag, with the micro and the macro average, both labelled.

Micro: the mean over the distinct problems in any group (a big group weighs
more; a problem with two tags counts once). Macro: the unweighted mean of the
group means (every group weighs the same; a problem with two tags counts in
both). They answer different questions and can differ a lot, so both are
reported and neither is called "the" average.

Each group is bootstrapped on its own problems with its own seed (derived from
the tag, so adding a group does not move another). The macro interval is the
stratified bootstrap built from exactly those per-group resamples: groups are
fixed strata, problems are resampled within them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.statistics.bootstrap import bootstrap_means, derive_seed, resample_means
from service.statistics.intervals import (
    Interval,
    Method,
    clt_standard_errors,
    column_means,
    intervals_from_distribution,
    mean_accelerations,
)

__all__ = ["MAX_GROUPS", "GroupResult", "GroupSummary", "TooManyGroups", "group_intervals"]

MAX_GROUPS = 100

MICRO_LABEL = "micro average: mean over the distinct problems in any group (larger groups weigh more)"
MACRO_LABEL = "macro average: unweighted mean of the group means (every group weighs the same)"


class TooManyGroups(ValueError):
    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__(f"{count} distinct tags form groups, at most {MAX_GROUPS}; narrow them with tag_prefix")


@dataclass(frozen=True)
class GroupResult:
    tag: str
    problems: int
    intervals: list[Interval]  # one per column (k and metric), like the run's


@dataclass(frozen=True)
class GroupSummary:
    tag_prefix: str | None
    groups: list[GroupResult]
    micro: list[Interval]
    micro_problems: int
    macro: list[Interval]
    untagged_problems: int  # problems with no (matching) tag: in no group, micro or macro
    overlapping: bool  # some problem is in two groups
    micro_label: str = MICRO_LABEL
    macro_label: str = MACRO_LABEL


def _macro_acceleration(group_values: Sequence[np.ndarray]) -> np.ndarray:
    """BCa acceleration of the macro mean under the stratified jackknife (scipy's multi-sample form).

    Leaving problem i out of group g moves the macro mean by (x_i - mean_g) / (G (m_g - 1)),
    so U_gi = (x_i - mean_g) / G and a = sum U^3/m_g^3 / (6 (sum U^2/m_g^2)^1.5).
    Groups of one problem have no jackknife and no bootstrap variation: they add nothing.
    """
    count = len(group_values)
    num = np.zeros(group_values[0].shape[1])
    den = np.zeros(group_values[0].shape[1])
    for values in group_values:
        m = values.shape[0]
        if m < 2:
            continue
        u = (values - values.mean(axis=0)) / count
        num += np.sum(u**3, axis=0) / m**3
        den += np.sum(u**2, axis=0) / m**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / (6.0 * den**1.5), np.nan)


def _degenerate_macro(
    estimate: float, all_same: bool, sizes: Sequence[int], confidence: float, method: Method, resamples: int
) -> Interval:
    """The macro interval when no group varies within itself (the stratified bootstrap cannot move).

    All problems of all groups at 0, or all at 1 (none / all solved): per group the exact
    Clopper-Pearson bound at level alpha / G (Bonferroni, so all G hold at once), averaged.
    Otherwise (e.g. every group is a single problem) there is no honest interval to give.
    """
    if all_same and estimate in (0.0, 1.0):
        alpha = (1.0 - confidence) / len(sizes)
        bound = float(np.mean([(alpha / 2.0) ** (1.0 / m) for m in sizes]))
        low, high = (bound, 1.0) if estimate == 1.0 else (0.0, 1.0 - bound)
        reason = (
            f"every problem of every group scores {estimate:g}, so the stratified bootstrap is degenerate; "
            f"mean over groups of Clopper-Pearson bounds at level alpha/{len(sizes)} (Bonferroni)"
        )
        return Interval(estimate, low, high, confidence, method, resamples, 0.0, "clopper-pearson", reason)
    reason = (
        "no group varies within itself (each has one problem or identical scores): "
        "resampling problems within groups cannot move the macro mean"
    )
    return Interval(estimate, estimate, estimate, confidence, method, resamples, 0.0, "none", reason)


def _macro(
    group_values: list[np.ndarray], distributions: list[np.ndarray], *, problems: int,
    resamples: int, confidence: float, method: Method,
) -> list[Interval]:
    """Macro intervals from the per-group bootstrap distributions (the stratified bootstrap)."""
    count = len(group_values)
    columns = group_values[0].shape[1]
    estimates = column_means(np.array([column_means(g) for g in group_values]))
    # Strata are independent: Var(macro) = sum_g Var(mean_g) / G^2.
    ses = np.array([clt_standard_errors(g) for g in group_values])
    flat = np.zeros(columns, dtype=bool)  # degenerate columns are replaced below
    macro = intervals_from_distribution(
        np.mean(distributions, axis=0), estimates=estimates,
        standard_errors=np.sqrt(np.sum(ses**2, axis=0)) / count,
        accelerations=_macro_acceleration(group_values), constant=flat, first_row=estimates,
        problems=problems, bounded=flat, method=method, confidence=confidence,
    )
    still = np.all([np.all(g == g[0], axis=0) for g in group_values], axis=0)
    first = group_values[0][0]
    all_same = np.all([np.all(g == first, axis=0) for g in group_values], axis=0)
    sizes = [g.shape[0] for g in group_values]
    return [
        _degenerate_macro(float(estimates[j]), bool(all_same[j]), sizes, confidence, method, resamples)
        if still[j] else macro[j]
        for j in range(columns)
    ]


def group_intervals(
    values: np.ndarray,
    tags: Sequence[Sequence[str]],
    *,
    tag_prefix: str | None = None,
    resamples: int,
    confidence: float,
    seed: int,
    method: Method,
) -> GroupSummary:
    """Per-tag intervals of each column's mean, plus micro and macro averages.

    values: (problems, columns) per-problem scores in [0, 1]; tags: one list per problem.
    Only tags starting with tag_prefix form groups (e.g. "difficulty:"), so that one facet
    can be asked for and its groups do not overlap.
    """
    members: dict[str, list[int]] = {}
    for row, problem_tags in enumerate(tags):
        for tag in dict.fromkeys(problem_tags):  # a tag listed twice on a problem counts once
            if tag_prefix is None or tag.startswith(tag_prefix):
                members.setdefault(tag, []).append(row)
    if len(members) > MAX_GROUPS:
        raise TooManyGroups(len(members))
    columns = values.shape[1]
    in_any = sorted({row for rows in members.values() for row in rows})
    untagged = values.shape[0] - len(in_any)
    overlapping = sum(len(rows) for rows in members.values()) > len(in_any)
    if not members:
        return GroupSummary(tag_prefix, [], [], 0, [], untagged, False)

    groups: list[GroupResult] = []
    group_values: list[np.ndarray] = []
    distributions: list[np.ndarray] = []
    for tag in sorted(members):
        sub = values[np.asarray(members[tag], dtype=np.intp)]
        distribution = resample_means(sub, resamples=resamples, seed=derive_seed(seed, f"group:{tag}"))
        intervals = intervals_from_distribution(
            distribution, estimates=column_means(sub), standard_errors=clt_standard_errors(sub),
            accelerations=mean_accelerations(sub), constant=np.all(sub == sub[0], axis=0), first_row=sub[0],
            problems=sub.shape[0], bounded=np.ones(columns, dtype=bool), method=method, confidence=confidence,
        )
        groups.append(GroupResult(tag, sub.shape[0], intervals))
        group_values.append(sub)
        distributions.append(distribution)

    # Micro with the run's own seed: when every problem is tagged it is the run's interval.
    micro = bootstrap_means(values[in_any], resamples=resamples, confidence=confidence, seed=seed, method=method)
    macro = _macro(group_values, distributions, problems=len(in_any), resamples=resamples,
                   confidence=confidence, method=method)
    return GroupSummary(tag_prefix, groups, micro, len(in_any), macro, untagged, overlapping)
