"""Metrics per problem tag, with the micro and the macro average, both labelled.

Micro: the mean over the distinct problems in any group (a big group weighs
more; a problem with two tags counts once). Macro: the unweighted mean of the
group means (every group weighs the same; a problem with two tags counts in
both). They answer different questions and can differ a lot, so both are
reported and neither is called "the" average.

Each group is bootstrapped on its own problems with its own seed (derived from
the tag, so adding a group does not move another). When no problem is in two
groups, the macro interval is the stratified bootstrap built from exactly those
per-group resamples: groups are fixed strata, problems are resampled within them.
When groups overlap (a problem with two tags), they are not independent strata:
problems are resampled jointly, one set of indices for all groups, and each
group's mean is taken over its resampled problems.

A group that cannot vary under resampling (one problem, or identical values)
adds no variance, which would make the macro interval too narrow while still
calling it bca. Its mean is then bounded honestly instead: by the exact
Clopper-Pearson bound if all its values are 0 (or 1), otherwise by [0, 1], at
level alpha / G for each such group, and the interval says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.statistics.bootstrap import bootstrap_means, derive_seed, index_chunks, resample_means
from service.statistics.intervals import (
    Interval,
    Method,
    clt_standard_errors,
    column_means,
    exact_boundary_interval,
    intervals_from_distribution,
    mean_intervals,
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
    """The macro interval when no group varies within itself (the bootstrap cannot move).

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
    return Interval(estimate, None, None, confidence, method, resamples, 0.0, "none", reason)


def _widened(
    interval: Interval, column: int, tags: Sequence[str], group_values: Sequence[np.ndarray], frozen: Sequence[int],
) -> Interval:
    """The macro interval with each frozen group's mean bounded instead of treated as known.

    A frozen group (one problem, or identical values) contributes no bootstrap variance; its
    part of the macro mean, v_g / G, is replaced by its bounds / G: Clopper-Pearson at level
    alpha / G when all its values are 0 or 1, else [0, 1] (its spread is unknown).
    """
    count = len(group_values)
    level = 1.0 - (1.0 - interval.confidence) / count
    low_shift = high_shift = 0.0
    described: list[str] = []
    for g in frozen:
        values = group_values[g][:, column]
        value, m = float(values[0]), int(values.shape[0])
        if value in (0.0, 1.0):
            low, high = exact_boundary_interval(value, m, level)
            how = f"{m} problems all at {value:g}: Clopper-Pearson [{low:.4g}, {high:.4g}]"
        else:
            low, high = 0.0, 1.0
            how = "one problem" if m == 1 else f"{m} problems with identical values"
            how += ": its mean is bounded by [0, 1] only"
        low_shift += (low - value) / count
        high_shift += (high - value) / count
        described.append(f"{tags[g]!r} ({how})")
    if interval.ci_low is None or interval.ci_high is None:
        return interval
    reason = (
        f"group(s) {', '.join(described)} cannot vary under resampling, so the bootstrap would treat their means "
        f"as known; widened by their bounds at level alpha/{count} (the rest: {interval.method_used})"
    )
    return Interval(
        interval.estimate, max(0.0, interval.ci_low + low_shift), min(1.0, interval.ci_high + high_shift),
        interval.confidence, interval.method, interval.resamples, interval.standard_error, "widened", reason,
    )


def _joint_distribution(
    values: np.ndarray, members: Sequence[np.ndarray], *, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Macro means when problems are resampled jointly (overlapping groups), shape (kept resamples, columns).

    One set of indices over the problems in any group; a group's mean is over its resampled
    problems, with their multiplicity. Resamples in which some group drew no problem are left
    out (the macro mean does not exist there). Also the jackknife acceleration of the macro mean.
    """
    union = np.unique(np.concatenate(members))
    position = {int(row): i for i, row in enumerate(union)}
    local = [np.array([position[int(r)] for r in rows], dtype=np.intp) for rows in members]
    x = values[union]  # (U, columns)
    size, columns = x.shape
    rng = np.random.default_rng(seed)
    parts: list[np.ndarray] = []
    for idx in index_chunks(rng, size, resamples):
        rows = idx.shape[0]
        offsets = idx + (np.arange(rows, dtype=np.intp) * size)[:, None]
        counts = np.bincount(offsets.ravel(), minlength=rows * size).reshape(rows, size).astype(np.float64)
        means = np.zeros((rows, columns))
        empty = np.zeros(rows, dtype=bool)
        for rows_g in local:
            weight = counts[:, rows_g]
            n = weight.sum(axis=1)
            empty |= n == 0
            with np.errstate(invalid="ignore", divide="ignore"):
                means += (weight @ x[rows_g]) / n[:, None]
        parts.append(means[~empty] / len(members))
    distribution = np.vstack(parts)
    # Jackknife: leave problem i out of every group that holds it.
    sums = [x[rows_g].sum(axis=0) for rows_g in local]
    loo = np.zeros((size, columns))
    for rows_g, total in zip(local, sums, strict=True):
        m = rows_g.size
        inside = np.zeros(size, dtype=bool)
        inside[rows_g] = True
        with np.errstate(invalid="ignore", divide="ignore"):
            left_out = (total[None, :] - x) / (m - 1) if m > 1 else np.full_like(x, np.nan)
        loo += np.where(inside[:, None], left_out, total[None, :] / m)
    loo /= len(members)
    u = loo.mean(axis=0) - loo
    num = np.sum(u**3, axis=0)
    den = np.sum(u**2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        acceleration = np.where(den > 0, num / (6.0 * den**1.5), np.nan)
    return distribution, acceleration


def _macro(
    values: np.ndarray, tags: Sequence[str], members: Sequence[np.ndarray], group_values: list[np.ndarray],
    distributions: list[np.ndarray], *, overlapping: bool, problems: int, resamples: int, confidence: float,
    method: Method, seed: int,
) -> list[Interval]:
    """Macro intervals: stratified from the per-group distributions, or jointly resampled when groups overlap."""
    count = len(group_values)
    columns = group_values[0].shape[1]
    estimates = column_means(np.array([column_means(g) for g in group_values]))
    flat = np.zeros(columns, dtype=bool)  # degenerate columns are replaced below
    if overlapping:
        distribution, accelerations = _joint_distribution(
            values, members, resamples=resamples, seed=derive_seed(seed, "macro:joint")
        )
        standard_errors = distribution.std(axis=0, ddof=1) if distribution.shape[0] > 1 else np.zeros(columns)
    else:
        distribution = np.mean(distributions, axis=0)
        accelerations = _macro_acceleration(group_values)
        # Strata are independent: Var(macro) = sum_g Var(mean_g) / G^2.
        ses = np.array([clt_standard_errors(g) for g in group_values])
        standard_errors = np.sqrt(np.sum(ses**2, axis=0)) / count
    macro = intervals_from_distribution(
        distribution, estimates=estimates, standard_errors=standard_errors, accelerations=accelerations,
        constant=flat, first_row=estimates, problems=problems, bounded=flat, method=method, confidence=confidence,
    )
    frozen_by_group = np.array([np.all(g == g[0], axis=0) for g in group_values])  # (groups, columns)
    first = group_values[0][0]
    all_same = np.all([np.all(g == first, axis=0) for g in group_values], axis=0)
    sizes = [g.shape[0] for g in group_values]
    out: list[Interval] = []
    for j in range(columns):
        frozen = [g for g in range(count) if frozen_by_group[g, j]]
        if len(frozen) == count:
            out.append(_degenerate_macro(float(estimates[j]), bool(all_same[j]), sizes, confidence, method, resamples))
        elif frozen:
            out.append(_widened(macro[j], j, tags, group_values, frozen))
        else:
            out.append(macro[j])
    return out


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
    in_any = sorted({row for rows in members.values() for row in rows})
    untagged = values.shape[0] - len(in_any)
    overlapping = sum(len(rows) for rows in members.values()) > len(in_any)
    if not members:
        return GroupSummary(tag_prefix, [], [], 0, [], untagged, False)

    groups: list[GroupResult] = []
    group_values: list[np.ndarray] = []
    distributions: list[np.ndarray] = []
    rows_by_group: list[np.ndarray] = []
    for tag in sorted(members):
        rows_by_group.append(np.asarray(members[tag], dtype=np.intp))
        sub = values[rows_by_group[-1]]
        distribution = resample_means(sub, resamples=resamples, seed=derive_seed(seed, f"group:{tag}"))
        intervals = mean_intervals(distribution, sub, method=method, confidence=confidence)
        groups.append(GroupResult(tag, sub.shape[0], intervals))
        group_values.append(sub)
        distributions.append(distribution)

    # Micro with the run's own seed: when every problem is tagged it is the run's interval.
    micro = bootstrap_means(values[in_any], resamples=resamples, confidence=confidence, seed=seed, method=method)
    macro = _macro(values, sorted(members), rows_by_group, group_values, distributions, overlapping=overlapping,
                   problems=len(in_any), resamples=resamples, confidence=confidence, method=method, seed=seed)
    return GroupSummary(tag_prefix, groups, micro, len(in_any), macro, untagged, overlapping)
