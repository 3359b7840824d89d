"""From a bootstrap distribution to an interval: percentile, BCa, and honest fallbacks.

BCa (Efron 1987; Efron & Tibshirani 1993, ch. 14) corrects the percentile
interval for bias (z0) and skew (acceleration a). scipy.stats.bootstrap
computes a by a full jackknife, which for m problems and several columns is
m statistic evaluations per column; for a mean the leave-one-out values are
(sum - x_i) / (m - 1), so a has a closed form and we compute it directly.
The adjusted levels use scipy.special.ndtr/ndtri exactly as scipy does, and
tests check the bounds against scipy.stats.bootstrap on the same resamples.

Where an interval cannot be computed the way it was asked for, the Interval
says which method was used instead and why (`method_used`, `fallback_reason`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri
from scipy.stats import binomtest

__all__ = [
    "METHODS",
    "Interval",
    "Method",
    "clt_standard_errors",
    "column_means",
    "exact_boundary_interval",
    "intervals_from_distribution",
    "mean_accelerations",
    "mean_intervals",
    "sorted_quantiles",
    "wilson_interval",
]

Method = Literal["bca", "percentile"]
METHODS: tuple[str, ...] = ("bca", "percentile")

# Means of up to ~1e5 values in [0, 1] carry rounding error far below this, while
# genuinely different resampled means of scores on a c/n grid differ by far more.
_TIE_TOLERANCE = 1e-10


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval over problems."""

    estimate: float
    ci_low: float | None  # None when no interval exists (one problem, or every problem has the same value)
    ci_high: float | None
    confidence: float
    method: str  # as requested: "bca" or "percentile"
    resamples: int
    standard_error: float  # CLT: standard deviation over problems / sqrt(problems)
    method_used: str = "percentile"  # bca | percentile | clopper-pearson | none
    fallback_reason: str | None = None


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
    # resampled mean within _TIE_TOLERANCE of the estimate as a tie.
    tolerance = _TIE_TOLERANCE * max(1.0, abs(estimate))
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
) -> list[Interval]:
    """One Interval per column of a (resamples x columns) bootstrap distribution of means.

    constant: the column's per-problem values are all equal (resampling cannot move the
    mean, so neither bootstrap method says anything); bounded: the column's values lie in
    [0, 1], which allows an exact interval when they are all 0 or all 1.
    """
    resamples = distribution.shape[0]
    alpha = 1.0 - confidence
    ordered = np.sort(distribution, axis=0)
    out: list[Interval] = []
    for j in range(distribution.shape[1]):
        common = {"confidence": confidence, "method": method, "resamples": resamples}
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
                out.append(Interval(value, low, high, standard_error=0.0, method_used="clopper-pearson",
                                    fallback_reason=reason, **common))
            else:
                reason = (
                    "a single problem: an interval over problems needs at least two"
                    if problems == 1
                    else "every problem has the same value: the bootstrap has no variation to resample"
                )
                # Not a zero-width "interval": resampling says nothing here, so there are no bounds.
                out.append(Interval(value, None, None, standard_error=0.0, method_used="none",
                                    fallback_reason=reason, **common))
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
    """intervals_from_distribution for the column means of `values` (problems x columns), given their bootstrap
    distribution; the standard errors default to the CLT's, `bounded` (per column or for all) to [0, 1] scores."""
    return intervals_from_distribution(
        distribution,
        estimates=column_means(values),
        standard_errors=clt_standard_errors(values) if standard_errors is None else standard_errors,
        accelerations=mean_accelerations(values),
        constant=np.all(values == values[0], axis=0),
        first_row=values[0],
        problems=values.shape[0],
        bounded=np.broadcast_to(np.asarray(bounded, dtype=bool), (values.shape[1],)),
        method=method,
        confidence=confidence,
    )
