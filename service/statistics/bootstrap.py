"""Bootstrap over problems: the resampling engine and `bootstrap_means`.

Problems are the sampling unit: the samples within a problem are the
measurement (already folded into its per-problem pass@k), the problems are
the population. So we resample rows (problems), never individual samples.
Turning a bootstrap distribution into an interval (percentile, BCa and their
fallbacks) lives in intervals.py.
"""

from __future__ import annotations

import operator
import zlib
from collections.abc import Iterator

import numpy as np

from service.statistics.intervals import (
    METHODS,
    Interval,
    Method,
    mean_intervals,
)

__all__ = [
    "MAX_RESAMPLES",
    "Interval",
    "bootstrap_means",
    "derive_seed",
    "index_chunks",
    "resample_means",
    "validate_options",
    "validate_values",
]

MAX_RESAMPLES = 100_000

# Index elements drawn per chunk (~8 MB as intp, plus one gathered copy of the
# same size), so memory does not grow with resamples x problems.
_CHUNK_ELEMENTS = 1 << 20


def validate_options(
    resamples: object, confidence: object, seed: object, method: object = "bca"
) -> tuple[int, float, int, Method]:
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
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return resamples_, confidence_, operator.index(seed), method  # type: ignore[return-value]


def validate_values(values: object) -> np.ndarray:
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


def derive_seed(seed: int, label: str) -> int:
    """A reproducible seed for a named sub-analysis (a group, a test), independent of the others.

    Keyed by the label rather than by position, so adding a group to a request does not
    change another group's interval.
    """
    sequence = np.random.SeedSequence([seed, zlib.crc32(label.encode("utf-8"))])
    return int(sequence.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def index_chunks(rng: np.random.Generator, problems: int, resamples: int) -> Iterator[np.ndarray]:
    """Yield consecutive row blocks of one (resamples x problems) index matrix.

    The chunk size depends only on problems and resamples, never on the
    number of columns, so adding a column cannot change another column's
    interval for the same seed. A paired comparison draws from this same
    generator and applies each chunk to both systems.
    """
    rows = max(1, min(resamples, _CHUNK_ELEMENTS // problems))
    for start in range(0, resamples, rows):
        size = (min(rows, resamples - start), problems)
        yield rng.integers(0, problems, size=size, dtype=np.intp)


def resample_means(values: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap distribution of each column's mean, shape (resamples, columns).

    Every column uses the same resampled rows, so the curve over k (and a
    paired difference next to its two runs) is one coherent resample.
    """
    problems, columns = values.shape
    # Column-major copy so each column is contiguous for np.take.
    by_column = np.ascontiguousarray(values.T)
    rng = np.random.default_rng(seed)
    means = np.empty((resamples, columns), dtype=np.float64)
    start = 0
    for idx in index_chunks(rng, problems, resamples):
        stop = start + idx.shape[0]
        for j in range(columns):
            means[start:stop, j] = np.take(by_column[j], idx).mean(axis=1)
        start = stop
    return means


def bootstrap_means(
    values: np.ndarray,
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    method: Method = "bca",
    bounded: np.ndarray | bool = True,
) -> list[Interval]:
    """Bootstrap interval for the mean of each column of values (BCa by default).

    values has shape (problems, K), e.g. per-problem pass@k for K values of k.
    Rows are resampled with replacement; every column uses the same resampled
    rows, so intervals across k describe one coherent curve. `bounded` says
    which columns hold per-problem scores in [0, 1] (pass@k, pass^k; not a
    paired difference): only those get the exact fallback when every problem
    scores 0 or every problem scores 1.
    """
    resamples, confidence, seed, method = validate_options(resamples, confidence, seed, method)
    arr = validate_values(values)
    distribution = resample_means(arr, resamples=resamples, seed=seed)
    return mean_intervals(distribution, arr, method=method, confidence=confidence, bounded=bounded)
