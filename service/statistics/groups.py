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
level alpha / G for each such group, and the interval says so; its standard
error is then the widened interval's half-width over z, not the bootstrap's.

Every resampled stratum (a group, or the union of overlapping groups) is
stretched by sqrt(m/(m - 1)) about its estimate (intervals.rescaled): a group of
4 problems would otherwise get an interval 13 % too short. A group of fewer than
FEW_PROBLEMS problems is still unreliable, and the summary says so by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import ndtri

from service.statistics.bootstrap import bootstrap_means, derive_seed, index_chunks, resample_means
from service.statistics.intervals import (
    FEW_PROBLEMS,
    NO_INTERVAL_NOTE,
    NO_SPREAD_NOTE,
    Interval,
    Method,
    clt_standard_errors,
    column_means,
    effective_problems,
    exact_boundary_interval,
    intervals_from_distribution,
    mean_intervals,
    rescaled,
)

__all__ = [
    "MAX_GROUPS",
    "GroupResult",
    "GroupSummary",
    "JointMeans",
    "TooManyGroups",
    "group_intervals",
    "joint_group_means",
    "small_group_warnings",
]

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
    warnings: list[str] = field(default_factory=list)  # groups of fewer than FEW_PROBLEMS problems, by name


def small_group_warnings(sizes: dict[str, int], *, tags: bool = True) -> list[str]:
    """One warning naming every group of fewer than FEW_PROBLEMS problems (none if there is none): tags quoted with
    their sizes, languages by name (their sizes are in the table beside it)."""
    small = sorted((name, m) for name, m in sizes.items() if m < FEW_PROBLEMS)
    if not small:
        return []
    named = ", ".join(f"{name!r} ({m})" if tags else name for name, m in small)
    return [
        f"fewer than {FEW_PROBLEMS} problems in {'tag ' if tags else ''}{named}: intervals over so few problems are "
        "unreliable (bootstrap intervals tend to be too narrow), and the macro average weighs each as much as any other"
    ]


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
        return Interval(estimate, low, high, confidence, method, resamples, None, "clopper-pearson", reason,
                        NO_SPREAD_NOTE)
    reason = (
        "no group varies within itself (each has one problem or identical scores): "
        "resampling problems within groups cannot move the macro mean"
    )
    return Interval(estimate, None, None, confidence, method, resamples, None, "none", reason, NO_INTERVAL_NOTE)


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
    low, high = max(0.0, interval.ci_low + low_shift), min(1.0, interval.ci_high + high_shift)
    # The bootstrap's standard error leaves the frozen groups' spread out, as the unwidened interval did.
    z = float(ndtri(1.0 - (1.0 - interval.confidence) / 2.0))
    note = (
        f"half the widened interval's width over z = {z:.3g}: the frozen groups' spread is unknown, so the "
        "bootstrap's standard error (which leaves it out) would understate it"
    )
    return replace(
        interval, ci_low=low, ci_high=high, standard_error=(high - low) / (2.0 * z), method_used="widened",
        fallback_reason=reason, standard_error_note=note,
    )


@dataclass(frozen=True)
class JointMeans:
    """Weighted sums of group means when units are resampled jointly, each weighting one set of group weights."""

    estimates: np.ndarray  # (combinations, columns)
    distribution: np.ndarray  # (kept resamples, combinations, columns), rescaled by sqrt(U/(U - 1))
    accelerations: np.ndarray  # (combinations, columns): jackknife over units
    standard_errors: np.ndarray  # (combinations, columns): linearised over units
    effective: np.ndarray  # (combinations, columns): effective number of units carrying the estimate
    units: int


def joint_group_means(
    values: np.ndarray, members: Sequence[np.ndarray], weights: Sequence[np.ndarray], *, units: np.ndarray | None = None,
    resamples: int, seed: int,
) -> JointMeans:
    """sum_g w_g mean_g for each weight vector w, when the groups share units (resampled together).

    values: (rows, columns); members: each group's rows; units: the unit of each row (None: every row is its own
    unit, as for problems with two tags; a problem translated into several languages is one unit of several rows).
    One set of unit indices per resample for all groups; a group's mean is over the rows of its resampled units,
    with their multiplicity. Resamples in which some group drew no row are left out (its mean does not exist).
    The distribution is stretched by sqrt(U/(U - 1)) about the estimates; the standard errors are the
    linearisation U/(U - 1) sum_u z_u^2 with z_u the unit's influence sum_g w_g sum_(r in u, g) (x_r - mean_g) / n_g;
    the acceleration is the jackknife's, leaving out one unit at a time.
    """
    rows_all = np.unique(np.concatenate(members))
    unit_of_row = rows_all if units is None else np.asarray(units)[rows_all]
    _, unit_of = np.unique(unit_of_row, return_inverse=True)
    unit_of = unit_of.reshape(-1)
    size = int(unit_of.max()) + 1
    local = [np.searchsorted(rows_all, np.asarray(rows_g)) for rows_g in members]
    x = values[rows_all]
    columns = x.shape[1]
    w = np.array([np.asarray(v, dtype=np.float64) for v in weights])  # (combinations, groups)
    counts_g = np.array([rows_g.size for rows_g in local], dtype=np.float64)
    means_g = np.array([x[rows_g].mean(axis=0) for rows_g in local])  # (groups, columns)
    estimates = w @ means_g
    rng = np.random.default_rng(seed)
    parts: list[np.ndarray] = []
    for idx in index_chunks(rng, size, resamples):
        rows = idx.shape[0]
        offsets = idx + (np.arange(rows, dtype=np.intp) * size)[:, None]
        counts = np.bincount(offsets.ravel(), minlength=rows * size).reshape(rows, size).astype(np.float64)
        row_weight = counts[:, unit_of]
        block = np.zeros((rows, w.shape[0], columns))
        empty = np.zeros(rows, dtype=bool)
        for g, rows_g in enumerate(local):
            weight = row_weight[:, rows_g]
            n = weight.sum(axis=1)
            empty |= n == 0
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = (weight @ x[rows_g]) / n[:, None]
            block += w[None, :, g, None] * mean[:, None, :]
        parts.append(block[~empty])
    distribution = rescaled(np.concatenate(parts, axis=0), estimates[None], size)
    # Per unit: its rows' sums and counts in each group, for the influence and the jackknife.
    unit_sums = np.zeros((len(local), size, columns))
    unit_counts = np.zeros((len(local), size))
    for g, rows_g in enumerate(local):
        np.add.at(unit_sums[g], unit_of[rows_g], x[rows_g])
        np.add.at(unit_counts[g], unit_of[rows_g], 1.0)
    # influence z_u (combinations, units, columns) and contributions t_u
    deviation = (unit_sums - unit_counts[:, :, None] * means_g[:, None, :]) / counts_g[:, None, None]
    influence = np.einsum("cg,guj->cuj", w, deviation)
    contributions = np.einsum("cg,guj->cuj", w, unit_sums / counts_g[:, None, None])
    factor = size / (size - 1) if size > 1 else 0.0
    standard_errors = np.sqrt(factor * np.sum(influence**2, axis=1))
    effective = np.stack([effective_problems(t) for t in contributions])
    # Jackknife: leave unit u out of every group that holds it (a group it empties contributes NaN: no jackknife).
    totals = np.array([x[rows_g].sum(axis=0) for rows_g in local])  # (groups, columns)
    with np.errstate(invalid="ignore", divide="ignore"):
        left = (totals[:, None, :] - unit_sums) / (counts_g[:, None] - unit_counts)[:, :, None]
    loo = np.einsum("cg,guj->cuj", w, left)
    u = np.nanmean(loo, axis=1, keepdims=True) - loo
    num = np.nansum(u**3, axis=1)
    den = np.nansum(u**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        accelerations = np.where(den > 0, num / (6.0 * den**1.5), np.nan)
    return JointMeans(estimates, distribution, accelerations, standard_errors, effective, size)


def _units_span_groups(units: np.ndarray, members: Iterable[list[int]]) -> bool:
    """Some unit has rows in two groups."""
    owner: dict[object, int] = {}
    for g, rows in enumerate(members):
        for unit in units[np.asarray(rows, dtype=np.intp)].tolist():
            if owner.setdefault(unit, g) != g:
                return True
    return False


def _macro(
    values: np.ndarray, tags: Sequence[str], members: Sequence[np.ndarray], group_values: list[np.ndarray],
    distributions: list[np.ndarray], *, overlapping: bool, problems: int, resamples: int, confidence: float,
    method: Method, seed: int, units: np.ndarray | None = None,
) -> list[Interval]:
    """Macro intervals: stratified from the per-group (rescaled) distributions, or jointly resampled when groups
    overlap."""
    count = len(group_values)
    columns = group_values[0].shape[1]
    estimates = column_means(np.array([column_means(g) for g in group_values]))
    flat = np.zeros(columns, dtype=bool)  # degenerate columns are replaced below
    if overlapping:
        joint = joint_group_means(
            values, members, [np.full(count, 1.0 / count)], units=units, resamples=resamples,
            seed=derive_seed(seed, "macro:joint"),
        )
        distribution, accelerations = joint.distribution[:, 0, :], joint.accelerations[0]
        standard_errors, effective = joint.standard_errors[0], joint.effective[0]
    else:
        distribution = np.mean(distributions, axis=0)
        accelerations = _macro_acceleration(group_values)
        # Strata are independent: Var(macro) = sum_g Var(mean_g) / G^2.
        ses = np.array([clt_standard_errors(g) for g in group_values])
        standard_errors = np.sqrt(np.sum(ses**2, axis=0)) / count
        effective = effective_problems(np.vstack([g / (count * g.shape[0]) for g in group_values]))
    macro = intervals_from_distribution(
        distribution, estimates=estimates, standard_errors=standard_errors, accelerations=accelerations,
        constant=flat, first_row=estimates, problems=problems, bounded=np.ones(columns, dtype=bool), method=method,
        confidence=confidence, effective=effective,
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
    units: np.ndarray | None = None,
) -> GroupSummary:
    """Per-tag intervals of each column's mean, plus micro and macro averages.

    values: (problems, columns) per-problem scores in [0, 1]; tags: one list per problem.
    Only tags starting with tag_prefix form groups (e.g. "difficulty:"), so that one facet
    can be asked for and its groups do not overlap. units: rows that are one unit of
    resampling (the same problem in several languages); when a unit spans two groups the
    macro interval resamples units jointly, as for overlapping tags.
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
    shared_units = units is not None and _units_span_groups(np.asarray(units), members.values())
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
        distributions.append(rescaled(distribution, column_means(sub), sub.shape[0]))

    # Micro with the run's own seed: when every problem is tagged it is the run's interval.
    micro = bootstrap_means(values[in_any], resamples=resamples, confidence=confidence, seed=seed, method=method)
    macro = _macro(values, sorted(members), rows_by_group, group_values, distributions,
                   overlapping=overlapping or shared_units, units=units if shared_units else None,
                   problems=len(in_any), resamples=resamples, confidence=confidence, method=method, seed=seed)
    warnings = small_group_warnings({g.tag: g.problems for g in groups})
    return GroupSummary(tag_prefix, groups, micro, len(in_any), macro, untagged, overlapping, warnings=warnings)
