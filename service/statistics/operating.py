"""What a run costs and how long it takes: cost per sample, cost per success, latency percentiles, tokens.

Pure functions over per-sample values grouped by problem. Every interval is a bootstrap over
problems that draws exactly the index matrix pass@k draws for the same seed and number of
problems (`bootstrap.index_chunks` on `default_rng(seed)`), so "cost per success" and "pass@1"
of one response describe the same resampled problem sets. A resampled problem brings all its
samples, with its multiplicity.

Ratios are ratios of sums (total cost / passes), never means of per-problem ratios: seed 004's
"cost per success = cost per request / success rate" is total cost / total passes.

Percentiles use the inverted-CDF definition (the smallest value x with F(x) >= q, numpy's
`method="inverted_cdf"`): a reported p95 latency is a latency that was observed, and a
resample that repeats a problem's samples weighs them by the repetition.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from service.statistics.bootstrap import index_chunks, validate_options
from service.statistics.intervals import sorted_quantiles

__all__ = [
    "Figure",
    "PERCENTILES",
    "bootstrap_distribution",
    "figures_from_distribution",
    "incremental_cost_per_success",
    "problem_sums",
    "ratio_of_sums",
    "weighted_percentiles",
    "PooledValues",
]

PERCENTILES: tuple[float, ...] = (0.50, 0.95, 0.99)

# Elements of one (rows x samples) weight block in weighted_percentiles (~8 MB as float64).
_BLOCK_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class Figure:
    """A point estimate with a percentile bootstrap interval over problems.

    estimate or bounds are None where the figure is undefined (no pass: no cost per success)
    or unbounded (some resamples have no pass), with `note` saying which.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    resamples: int
    standard_error: float | None  # standard deviation of the bootstrap distribution
    method_used: str = "percentile"
    note: str | None = None


def problem_sums(problem: np.ndarray, values: np.ndarray, problems: int) -> tuple[np.ndarray, np.ndarray]:
    """Per problem: sum of the values that are present (not NaN) and how many are present."""
    problem = np.asarray(problem, dtype=np.intp)
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    sums = np.bincount(problem[present], weights=values[present], minlength=problems)
    counts = np.bincount(problem[present], minlength=problems).astype(np.float64)
    return sums, counts


def ratio_of_sums(numerator: np.ndarray, denominator: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Statistic over a block of resampled problem indices: sum(num[idx]) / sum(den[idx]) per row (inf/NaN if 0)."""

    def statistic(idx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.take(numerator, idx).sum(axis=1) / np.take(denominator, idx).sum(axis=1)

    return statistic


@dataclass(frozen=True)
class PooledValues:
    """Per-sample values of one run pooled over problems, sorted once for percentiles."""

    values: np.ndarray  # ascending
    problem: np.ndarray  # the problem (row) of each sorted value

    @classmethod
    def of(cls, problem: np.ndarray, values: np.ndarray) -> PooledValues:
        values = np.asarray(values, dtype=np.float64)
        problem = np.asarray(problem, dtype=np.intp)
        present = ~np.isnan(values)
        order = np.argsort(values[present], kind="stable")
        return cls(values[present][order], problem[present][order])

    @property
    def size(self) -> int:
        return int(self.values.size)


def weighted_percentiles(
    pooled: PooledValues, idx: np.ndarray, problems: int, quantiles: Sequence[float] = PERCENTILES
) -> np.ndarray:
    """Inverted-CDF percentiles of the samples of each row's resampled problems, shape (rows, len(quantiles)).

    A problem drawn m times counts each of its samples m times. NaN for a row with no sample.
    """
    rows = idx.shape[0]
    out = np.full((rows, len(quantiles)), np.nan)
    if pooled.size == 0:
        return out
    step = max(1, _BLOCK_ELEMENTS // max(pooled.size, problems))
    q = np.asarray(quantiles, dtype=np.float64)
    for start in range(0, rows, step):
        block = idx[start : start + step]
        size = block.shape[0]
        # multiplicity of each problem in each row, then of each (sorted) sample
        offsets = block + (np.arange(size, dtype=np.intp) * problems)[:, None]
        multiplicity = np.bincount(offsets.ravel(), minlength=size * problems).reshape(size, problems)
        cumulative = np.cumsum(multiplicity[:, pooled.problem], axis=1, dtype=np.float64)
        total = cumulative[:, -1]
        for j, level in enumerate(q):
            # first position whose cumulative weight reaches q * total (integers: exact up to 2^53)
            target = np.ceil(level * total - 1e-9 * total)
            target = np.maximum(target, 1.0)
            position = np.argmax(cumulative >= target[:, None], axis=1)
            values = pooled.values[position]
            out[start : start + size, j] = np.where(total > 0, values, np.nan)
    return out


def bootstrap_distribution(
    problems: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(point estimate, bootstrap distribution) of a statistic of resampled problems.

    statistic maps a (rows x problems) block of problem indices to (rows,) or (rows, m)
    values. The blocks are exactly those pass@k's bootstrap draws for this seed and number of
    problems, so the figures share its resampled problems.
    """
    if problems < 1:
        raise ValueError("at least one problem is needed")
    estimate = np.atleast_1d(np.asarray(statistic(np.arange(problems, dtype=np.intp)[None, :]), dtype=np.float64))
    estimate = estimate.reshape(-1)
    parts: list[np.ndarray] = []
    for idx in index_chunks(np.random.default_rng(seed), problems, resamples):
        part = np.asarray(statistic(idx), dtype=np.float64)
        parts.append(part.reshape(idx.shape[0], -1))
    return estimate, np.vstack(parts)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def figures_from_distribution(
    estimate: np.ndarray, distribution: np.ndarray, *, confidence: float, undefined: str = "undefined"
) -> list[Figure]:
    """Percentile interval per column. A NaN or infinite resample (e.g. no pass) makes a bound unbounded.

    NaN (0/0) sorts as +infinity here: a resample where the figure does not exist cannot
    vouch for either bound, so the bound it could reach is reported as missing (None).
    """
    resamples = distribution.shape[0]
    alpha = 1.0 - confidence
    out: list[Figure] = []
    for j in range(distribution.shape[1]):
        value = float(estimate[j])
        column = np.where(np.isnan(distribution[:, j]), np.inf, distribution[:, j])
        ordered = np.sort(column)
        finite = ordered[np.isfinite(ordered)]
        bad = resamples - finite.size
        if not math.isfinite(value):
            out.append(Figure(None, None, None, confidence, resamples, None, "none", undefined))
            continue
        # the same interpolated quantiles as pass@k's percentile interval; infinities sort to the top
        with np.errstate(invalid="ignore"):
            low, high = (float(v) for v in sorted_quantiles(ordered, np.array([alpha / 2, 1 - alpha / 2])))
        note = None
        if bad:
            note = f"{bad} of {resamples} resamples: {undefined}; the bound they reach is unbounded"
        spread = float(np.std(finite, ddof=1)) if finite.size > 1 else None
        out.append(
            Figure(value, _finite(low), _finite(high), confidence, resamples, spread if not bad else None, note=note)
        )
    return out


def incremental_cost_per_success(
    base_cost: float, base_rate: float, candidate_cost: float, candidate_rate: float
) -> float | None:
    """What each extra success of the candidate costs: (cost_b - cost_a) / (rate_b - rate_a), per request.

    Seed 004: 4 more points of success for $0.019 more per request is 0.019 / 0.04 = $0.475 per extra
    success. None when the success rates are equal (no extra success to price).
    """
    gain = candidate_rate - base_rate
    if gain == 0:
        return None
    return (candidate_cost - base_cost) / gain


def validate(resamples: int, confidence: float, seed: int) -> tuple[int, float, int]:
    resamples_, confidence_, seed_, _ = validate_options(resamples, confidence, seed)
    return resamples_, confidence_, seed_
