"""Bootstrap confidence intervals for means over problems.

Problems are the sampling unit: the samples within a problem are the
measurement (already folded into its per-problem pass@k), the problems are
the population. So we resample rows (problems), never individual samples.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "bootstrap_means"]

MAX_RESAMPLES = 100_000

# Index elements drawn per chunk (~8 MB as intp, plus one gathered copy of the
# same size), so memory does not grow with resamples x problems.
_CHUNK_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class Interval:
    """A point estimate with a bootstrap confidence interval."""

    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str
    resamples: int
    standard_error: float


def _validate_options(
    resamples: object, confidence: object, seed: object
) -> tuple[int, float, int]:
    if isinstance(resamples, bool) or not isinstance(resamples, int | np.integer):
        raise ValueError(f"resamples must be an integer, got {resamples!r}")
    resamples_ = operator.index(resamples)
    if not 1 <= resamples_ <= MAX_RESAMPLES:
        raise ValueError(f"resamples must be between 1 and {MAX_RESAMPLES:,}, got {resamples_}")
    numeric = int | float | np.integer | np.floating
    if isinstance(confidence, bool) or not isinstance(confidence, numeric):
        raise ValueError(f"confidence must be a number between 0 and 1, got {confidence!r}")
    confidence_ = float(confidence)
    if not 0.0 < confidence_ < 1.0:  # also rejects NaN
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence_}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return resamples_, confidence_, operator.index(seed)


def _validate_values(values: object) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"values must have shape (problems, columns), got shape {arr.shape}")
    if arr.shape[0] < 1:
        raise ValueError("values must contain at least one problem (row)")
    if arr.shape[1] < 1:
        raise ValueError("values must contain at least one column")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values must be finite (no NaN or infinity)")
    return arr


def _index_chunks(rng: np.random.Generator, problems: int, resamples: int) -> Iterator[np.ndarray]:
    """Yield consecutive row blocks of one (resamples x problems) index matrix.

    The chunk size depends only on problems and resamples, never on the
    number of columns, so adding a column cannot change another column's
    interval for the same seed. A paired comparison must draw from this
    same generator and apply each chunk to both systems.
    """
    rows = max(1, min(resamples, _CHUNK_ELEMENTS // problems))
    for start in range(0, resamples, rows):
        size = (min(rows, resamples - start), problems)
        yield rng.integers(0, problems, size=size, dtype=np.intp)


def bootstrap_means(
    values: np.ndarray,
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Interval]:
    """Percentile bootstrap interval for the mean of each column of values.

    values has shape (problems, K), e.g. per-problem pass@k for K values of k.
    Rows are resampled with replacement; every column uses the same resampled
    rows, so intervals across k describe one coherent curve.
    """
    resamples, confidence, seed = _validate_options(resamples, confidence, seed)
    arr = _validate_values(values)
    problems, columns = arr.shape
    # Column-major copy so each column is contiguous for np.take.
    by_column = np.ascontiguousarray(arr.T)

    rng = np.random.default_rng(seed)
    means = np.empty((resamples, columns), dtype=np.float64)
    start = 0
    for idx in _index_chunks(rng, problems, resamples):
        stop = start + idx.shape[0]
        for j in range(columns):
            means[start:stop, j] = np.take(by_column[j], idx).mean(axis=1)
        start = stop

    alpha = 1.0 - confidence
    lows, highs = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)

    intervals: list[Interval] = []
    for j in range(columns):
        column = by_column[j]
        if np.all(column == column[0]):
            # Floating-point means of identical values can drift by an ulp;
            # a constant column has no uncertainty, so report it exactly.
            value = float(column[0])
            estimate, low, high, se = value, value, value, 0.0
        else:
            estimate = float(column.mean())
            low, high = float(lows[j]), float(highs[j])
            se = float(column.std(ddof=1) / math.sqrt(problems)) if problems > 1 else 0.0
        intervals.append(
            Interval(
                estimate=estimate,
                ci_low=low,
                ci_high=high,
                confidence=confidence,
                method="percentile",
                resamples=resamples,
                standard_error=se,
            )
        )
    return intervals


# bootstrap_means_pair(values_a, values_b, *, resamples, confidence, seed)
# belongs here: an interval for mean(values_a) - mean(values_b) on the same
# problems. Not implemented yet. It must resample problems jointly (one index
# chunk from _index_chunks applied to both arrays) so the per-problem pairing
# cancels shared difficulty; independent resampling would inflate the interval.
