"""From a bootstrap distribution to an interval: percentile, BCa, and honest fallbacks.

BCa (Efron 1987; Efron & Tibshirani 1993, ch. 14) corrects the percentile
interval for bias (z0) and skew (acceleration a). scipy.stats.bootstrap
computes a by a full jackknife, which for m problems and several columns is
m statistic evaluations per column; for a mean the leave-one-out values are
(sum - x_i) / (m - 1), so a has a closed form and we compute it directly.
The adjusted levels use scipy.special.ndtr/ndtri exactly as scipy does, and
tests check the bounds against scipy.stats.bootstrap on the same resamples.

The bootstrap distribution of a mean of m values has variance (m - 1)/m * s^2/m,
narrower than the unbiased s^2/m that the standard error reports; for a group of
4 problems the percentile interval is 13 % too short. `rescaled` stretches the
distribution about the estimate by sqrt(m/(m - 1)) (the rescaling bootstrap of
Rao & Wu 1988 for a stratum of m units), so interval and standard error agree.
BCa's bias correction and acceleration are unchanged by that stretch.

Where an interval cannot be computed the way it was asked for, the Interval
says which method was used instead and why (`method_used`, `fallback_reason`);
where its standard error is not the CLT one (or there is none), it says why
(`standard_error_note`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri
from scipy.stats import binomtest

__all__ = [
    "FEW_PROBLEMS",
    "METHODS",
    "TIE_TOLERANCE",
    "Interval",
    "Method",
    "clt_standard_errors",
    "column_means",
    "effective_problems",
    "effective_problems_warning",
    "exact_boundary_interval",
    "intervals_from_distribution",
    "mean_accelerations",
    "mean_intervals",
    "rescaled",
    "shrinkage_factor",
    "sorted_quantiles",
    "wilson_interval",
]

Method = Literal["bca", "percentile"]
METHODS: tuple[str, ...] = ("bca", "percentile")

# Means of up to ~1e5 values in [0, 1] carry rounding error far below this, while
# genuinely different resampled means of scores on a c/n grid differ by far more.
TIE_TOLERANCE = 1e-10

# Below this many problems (or this effective number of problems carrying an estimate) bootstrap
# intervals of any flavour tend to be too narrow; every surface says so where it shows one.
FEW_PROBLEMS = 30

NO_SPREAD_NOTE = (
    "no standard error: every problem scores the same, so the problems show no spread to estimate one from; "
    "the interval is an exact bound instead"
)
NO_INTERVAL_NOTE = "no standard error: there is no interval to stand beside"


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval over problems."""

    estimate: float
    ci_low: float | None  # None when no interval exists (one problem, or every problem has the same value)
    ci_high: float | None
    confidence: float
    method: str  # as requested: "bca" or "percentile"
    resamples: int
    # CLT: standard deviation over problems / sqrt(problems); None where the interval is not a bootstrap one
    # that such a figure could describe (an exact bound, no interval), with standard_error_note saying why.
    standard_error: float | None
    method_used: str = "percentile"  # bca | percentile | clopper-pearson | widened | none
    fallback_reason: str | None = None
    standard_error_note: str | None = None
    # (sum x)^2 / sum x^2 over the per-problem contributions: how many problems carry the estimate. A pass^100
    # that three problems make up is a mean of about three numbers, however many problems there are.
    effective_problems: float | None = None
    warning: str | None = None  # set when effective_problems < FEW_PROBLEMS


def shrinkage_factor(problems: int) -> float:
    """sqrt(m / (m - 1)): how much narrower the bootstrap distribution of a mean of m values is than s / sqrt(m)."""
    return math.sqrt(problems / (problems - 1)) if problems > 1 else 1.0


def rescaled(distribution: np.ndarray, estimates: np.ndarray, problems: int) -> np.ndarray:
    """The bootstrap distribution stretched about the estimates by sqrt(m/(m - 1)) (see the module docstring)."""
    factor = shrinkage_factor(problems)
    if factor == 1.0:
        return distribution
    return estimates + factor * (distribution - estimates)


def effective_problems(contributions: np.ndarray) -> np.ndarray:
    """(sum t)^2 / sum t^2 per column over the units' contributions t (problems x columns); NaN where all are 0.

    For a mean, t_i = x_i / m gives (sum x)^2 / sum x^2: m when every problem scores alike, about 3.6 when three
    or four problems out of 164 carry a pass^100. Meaningful for non-negative scores only.
    """
    columns = _by_column(np.asarray(contributions, dtype=np.float64))
    total = columns.sum(axis=1)
    squares = np.sum(columns**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(squares > 0, total**2 / squares, np.nan)


def effective_problems_warning(effective: float | None) -> str | None:
    """The interval's warning when fewer than FEW_PROBLEMS problems effectively carry its estimate."""
    if effective is None or not math.isfinite(effective) or effective >= FEW_PROBLEMS:
        return None
    return (
        f"the estimate rests on about {effective:.1f} problems (effective number of problems (sum x)^2 / sum x^2, "
        f"under {FEW_PROBLEMS}): its interval can be too narrow"
    )


def _effective(value: float) -> dict[str, float | str | None]:
    """The effective_problems and warning fields of an Interval for an effective number (NaN: none)."""
    effective = float(value) if math.isfinite(value) else None
    return {"effective_problems": effective, "warning": effective_problems_warning(effective)}


def _by_column(values: np.ndarray) -> np.ndarray:
    # Reducing each column as one contiguous row makes a column's result independent of how
    # many other columns sit beside it (numpy sums a strided axis in a different order).
    return np.ascontiguousarray(values.T)


def column_means(values: np.ndarray) -> np.ndarray:
    """Mean of each column over problems, bit-identical to the mean of that column alone."""
    return _by_column(values).mean(axis=1)


def clt_standard_errors(values: np.ndarray) -> np.ndarray:
    """Standard error of each column's mean over problems (rows); 0 for a single problem."""
    problems = values.shape[0]
    if problems < 2:
        return np.zeros(values.shape[1])
    return _by_column(values).std(axis=1, ddof=1) / math.sqrt(problems)


def mean_accelerations(values: np.ndarray) -> np.ndarray:
    """BCa acceleration of the mean of each column, from the analytic jackknife.

    With theta_(i) = (S - x_i)/(m - 1), theta_dot - theta_(i) = (x_i - mean)/(m - 1);
    the factor cancels in sum(U^3) / (6 sum(U^2)^1.5). NaN where a column is constant.
    """
    columns = _by_column(values)
    d = columns - columns.mean(axis=1, keepdims=True)
    num = np.sum(d**3, axis=1)
    den = np.sum(d**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / (6.0 * den**1.5), np.nan)


def sorted_quantiles(sorted_column: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Linearly interpolated quantiles of an ascending array (numpy's and scipy's default)."""
    last = sorted_column.shape[0] - 1
    position = np.clip(probabilities, 0.0, 1.0) * last
    below = np.floor(position).astype(np.intp)
    above = np.minimum(below + 1, last)
    weight = position - below
    low, high = sorted_column[below], sorted_column[above]
    # low + w*(high - low), except where w = 0, so a bound equals a resampled mean exactly.
    return np.where(weight > 0, low + weight * (high - low), low)


def exact_boundary_interval(value: float, problems: int, confidence: float) -> tuple[float, float]:
    """Interval when every one of `problems` per-problem scores in [0, 1] equals 0, or 1.

    If the population mean of a [0, 1]-valued score is mu, P(score = 1) <= mu
    (Markov), so P(all m scores = 1) <= mu^m and mu >= (alpha/2)^(1/m) at the
    stated confidence: the Clopper-Pearson bound for m successes in m trials,
    valid for pass@k and pass^k and not only for 0/1 outcomes. Mirrored for 0.
    """
    bound = ((1.0 - confidence) / 2.0) ** (1.0 / problems)
    return (bound, 1.0) if value == 1.0 else (0.0, 1.0 - bound)


def _bca_levels(
    sorted_distribution: np.ndarray, estimate: float, acceleration: float, alpha: float
) -> tuple[float, float] | str:
    """Adjusted lower/upper quantile levels, or the reason BCa is undefined here."""
    resamples = sorted_distribution.shape[0]
    # Per-problem pass@k lives on a grid (c/n for k = 1), so resampled means often equal the
    # estimate exactly in real arithmetic, but a different summation order puts them an ulp
    # either side; whether they count as below would then depend on rounding. Count a
    # resampled mean within TIE_TOLERANCE of the estimate as a tie.
    tolerance = TIE_TOLERANCE * max(1.0, abs(estimate))
    below = np.searchsorted(sorted_distribution, estimate - tolerance, side="left")
    at_or_below = np.searchsorted(sorted_distribution, estimate + tolerance, side="right")
    # Mid-rank, as scipy does: resampled means equal to the estimate count half.
    share = (below + at_or_below) / (2.0 * resamples)
    if not 0.0 < share < 1.0:
        return "BCa undefined: every bootstrap mean lies on one side of the estimate (infinite bias correction)"
    if not math.isfinite(acceleration):
        return "BCa undefined: the jackknife acceleration is not finite"
    z0 = float(ndtri(share))
    levels: list[float] = []
    for z in (float(ndtri(alpha / 2.0)), float(ndtri(1.0 - alpha / 2.0))):
        shrink = 1.0 - acceleration * (z0 + z)
        if shrink <= 0.0:
            return "BCa undefined: the acceleration is too large for this confidence level (1 - a(z0 + z) <= 0)"
        levels.append(float(ndtr(z0 + (z0 + z) / shrink)))
    return levels[0], levels[1]


def intervals_from_distribution(
    distribution: np.ndarray,
    *,
    estimates: np.ndarray,
    standard_errors: np.ndarray,
    accelerations: np.ndarray,
    constant: np.ndarray,
    first_row: np.ndarray,
    problems: int,
    bounded: np.ndarray,
    method: Method,
    confidence: float,
    effective: np.ndarray | None = None,
) -> list[Interval]:
    """One Interval per column of a (resamples x columns) bootstrap distribution of means.

    constant: the column's per-problem values are all equal (resampling cannot move the
    mean, so neither bootstrap method says anything); bounded: the column's values lie in
    [0, 1], which allows an exact interval when they are all 0 or all 1 (and the bounds are
    kept inside [0, 1]); effective: the effective number of problems per column (NaN: none).
    """
    resamples = distribution.shape[0]
    alpha = 1.0 - confidence
    ordered = np.sort(distribution, axis=0)
    out: list[Interval] = []
    for j in range(distribution.shape[1]):
        common: dict = {"confidence": confidence, "method": method, "resamples": resamples}
        if effective is not None:
            common |= _effective(float(effective[j]))
        if constant[j]:
            # Identical values: report the value itself, not a mean that drifted by an ulp.
            value = float(first_row[j])
            if bounded[j] and value in (0.0, 1.0):
                low, high = exact_boundary_interval(value, problems, confidence)
                which = "solves" if value == 1.0 else "fails"
                reason = (
                    f"every problem scores {value:g}, so resampling problems cannot move the mean and "
                    f"{method} is degenerate; exact Clopper-Pearson bound for {problems} of {problems} "
                    f"(valid for any score in [0, 1]: the model {which} all of them here, not necessarily "
                    "on the population)"
                )
                out.append(Interval(value, low, high, standard_error=None, method_used="clopper-pearson",
                                    fallback_reason=reason, standard_error_note=NO_SPREAD_NOTE, **common))
            else:
                reason = (
                    "a single problem: an interval over problems needs at least two"
                    if problems == 1
                    else "every problem has the same value: the bootstrap has no variation to resample"
                )
                # Not a zero-width "interval": resampling says nothing here, so there are no bounds.
                out.append(Interval(value, None, None, standard_error=None, method_used="none",
                                    fallback_reason=reason, standard_error_note=NO_INTERVAL_NOTE, **common))
            continue
        column = ordered[:, j]
        estimate = float(estimates[j])
        levels: tuple[float, float] | str = (alpha / 2.0, 1.0 - alpha / 2.0)
        used, reason = "percentile", None
        if method == "bca":
            levels = _bca_levels(column, estimate, float(accelerations[j]), alpha)
            if isinstance(levels, str):
                reason, levels = levels + "; percentile used", (alpha / 2.0, 1.0 - alpha / 2.0)
            else:
                used = "bca"
        low, high = sorted_quantiles(column, np.asarray(levels))
        if bounded[j]:
            # the rescaled distribution can step past a score's range near 0 or 1
            low, high = max(0.0, float(low)), min(1.0, float(high))
        out.append(
            Interval(estimate, float(low), float(high), standard_error=float(standard_errors[j]),
                     method_used=used, fallback_reason=reason, **common)
        )
    return out


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (scipy's implementation).

    For independent 0/1 outcomes, e.g. one sample per problem; 48/60 -> [0.682, 0.882].
    """
    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def mean_intervals(
    distribution: np.ndarray,
    values: np.ndarray,
    *,
    method: Method,
    confidence: float,
    standard_errors: np.ndarray | None = None,
    bounded: np.ndarray | bool = True,
) -> list[Interval]:
    """intervals_from_distribution for the column means of `values` (problems x columns), given their raw
    bootstrap distribution (`rescaled` here for the problems' number); the standard errors default to the
    CLT's, `bounded` (per column or for all) to [0, 1] scores."""
    estimates = column_means(values)
    problems = values.shape[0]
    bounded_ = np.broadcast_to(np.asarray(bounded, dtype=bool), (values.shape[1],))
    effective = np.where(bounded_, effective_problems(values), np.nan)
    return intervals_from_distribution(
        rescaled(distribution, estimates, problems),
        estimates=estimates,
        standard_errors=clt_standard_errors(values) if standard_errors is None else standard_errors,
        accelerations=mean_accelerations(values),
        constant=np.all(values == values[0], axis=0),
        first_row=values[0],
        problems=problems,
        bounded=bounded_,
        method=method,
        confidence=confidence,
        effective=effective,
    )
