"""Is the model's stated confidence honest? Brier score, its Murphy decomposition, ECE, reliability bins.

Forecasts f_i in [0, 1] (the model's probability that sample i passes) against outcomes
o_i in {0, 1} (it passed).

- Brier = mean((f_i - o_i)^2): 0 is perfect, always saying 0.5 scores 0.25 (seed 002), saying
  0.99 and being wrong costs 0.98 (seed 000).
- Murphy (1973), seed 000 equation (11): with forecasts grouped so that group k has n_k items
  all forecasting f_k and hit rate o_k, and base rate o,
  Brier = reliability - resolution + uncertainty, where reliability = sum n_k (f_k - o_k)^2 / N,
  resolution = sum n_k (o_k - o)^2 / N, uncertainty = o (1 - o). Exact when the groups are
  the distinct forecast values. When forecasts are binned (a bin holds different values),
  two within-bin terms make it exact again (Stephenson, Coelho & Jolliffe 2008):
  Brier = REL - RES + UNC + WBV - WBC, with WBV = sum (f_i - fbar_k)^2 / N and
  WBC = 2 sum (f_i - fbar_k)(o_i - o_k) / N, and REL computed with the bin's mean forecast.
- ECE = sum |B_m| / N * |acc(B_m) - conf(B_m)| (seed 002, section 3), over equal-width bins
  ([0, 1/M), ..., [(M-1)/M, 1]) or equal-count ("adaptive") bins. It is a BIASED plug-in: an absolute
  value of noisy gaps is positive even when every gap is zero, so a perfectly calibrated model shows
  an ECE of about sum_m sqrt(2/pi) sqrt(sum_(i in B_m) f_i (1 - f_i)) / N (each bin's sum of o - f is
  then a sum of independent zero-mean terms; E|X| = sqrt(2/pi) sd for a normal X): 0.08 at N = 164,
  0.025 at N = 1,640. Its interval is a bootstrap over problems, reversed about the estimate (the
  "basic" bootstrap, 2 ECE - quantiles, which corrects the bias the resampled ECEs share), with a
  lower bound of 0 whenever the ECE lies within the 95 % range of a perfectly calibrated model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from service.statistics.bootstrap import index_chunks
from service.statistics.operating import (
    Figure,
    bootstrap_distribution,
    figures_from_distribution,
    multiplicity,
    problem_sums,
    ratio_of_sums,
)

__all__ = [
    "Binning",
    "CalibrationBin",
    "CalibrationSummary",
    "calibration_summary",
    "CalibratedBaseline",
    "EceSummary",
    "MurphyDecomposition",
    "calibrated_baseline",
    "brier_score",
    "calibration_bins",
    "ece",
    "ece_from_bins",
    "ece_interval",
    "equal_count_bins",
    "equal_width_bins",
    "murphy_decomposition",
]

Binning = Literal["equal_width", "equal_count"]
MAX_BINS = 100

ECE_LABEL = (
    "BIASED plug-in: sampling noise alone makes it positive; compare it with `calibrated`, the ECE a perfectly "
    "calibrated model shows with these confidences at this number of samples"
)
# Draws of the perfectly calibrated model's ECE (one normal per bin each: cheap at any N).
_BASELINE_DRAWS = 4000


@dataclass(frozen=True)
class MurphyDecomposition:
    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float  # 0 when every group holds one forecast value
    within_bin_covariance: float
    groups: int

    @property
    def total(self) -> float:
        """reliability - resolution + uncertainty + WBV - WBC: equals brier up to rounding."""
        return (
            self.reliability - self.resolution + self.uncertainty + self.within_bin_variance - self.within_bin_covariance
        )


@dataclass(frozen=True)
class CalibrationBin:
    low: float
    high: float
    count: int
    mean_confidence: float | None  # None for an empty bin
    accuracy: float | None


def _check(forecasts: np.ndarray, outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(forecasts, dtype=np.float64)
    o = np.asarray(outcomes, dtype=np.float64)
    if f.ndim != 1 or f.shape != o.shape:
        raise ValueError(f"forecasts and outcomes must be 1-D of one length, got {f.shape} and {o.shape}")
    if f.size == 0:
        raise ValueError("at least one forecast is needed")
    if not np.all((f >= 0) & (f <= 1)):
        raise ValueError("forecasts must lie in [0, 1]")
    if not np.all((o == 0) | (o == 1)):
        raise ValueError("outcomes must be 0 or 1")
    return f, o


def _check_bins(bins: int) -> int:
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be an integer between 1 and {MAX_BINS}, got {bins!r}")
    return int(bins)


def brier_score(forecasts: np.ndarray, outcomes: np.ndarray) -> float:
    f, o = _check(forecasts, outcomes)
    return float(np.mean((f - o) ** 2))


def equal_width_bins(forecasts: np.ndarray, bins: int) -> np.ndarray:
    """Bin index of each forecast: [0, 1/M), [1/M, 2/M), ..., [(M-1)/M, 1] (1.0 in the last bin)."""
    bins = _check_bins(bins)
    f = np.asarray(forecasts, dtype=np.float64)
    # floor(M f) misplaces values on an edge by an ulp (0.7 * 10 = 7.000000000000001 is fine, others are
    # not); compare against the edges i / M themselves instead.
    edges = np.arange(1, bins, dtype=np.float64) / bins
    return np.searchsorted(edges, f, side="right").astype(np.intp)


def equal_count_bins(forecasts: np.ndarray, bins: int) -> np.ndarray:
    """Bin index of each forecast for adaptive ECE: sorted by forecast, split into M groups of sizes differing by at most 1.

    Equal forecasts can straddle two bins (the split is by rank, stable in input order).
    """
    bins = _check_bins(bins)
    f = np.asarray(forecasts, dtype=np.float64)
    order = np.argsort(f, kind="stable")
    index = np.empty(f.size, dtype=np.intp)
    for b, part in enumerate(np.array_split(order, min(bins, max(1, f.size)))):
        index[part] = b
    return index


def _bin_index(forecasts: np.ndarray, bins: int, binning: Binning) -> np.ndarray:
    if binning == "equal_width":
        return equal_width_bins(forecasts, bins)
    if binning == "equal_count":
        return equal_count_bins(forecasts, bins)
    raise ValueError(f"binning must be equal_width or equal_count, got {binning!r}")


def murphy_decomposition(
    forecasts: np.ndarray, outcomes: np.ndarray, groups: np.ndarray | None = None
) -> MurphyDecomposition:
    """Brier = REL - RES + UNC (+ WBV - WBC when a group holds different forecasts).

    groups: a group label per forecast (e.g. from equal_width_bins); None groups by distinct
    forecast value, where the three classical terms add up to the Brier score exactly.
    """
    f, o = _check(forecasts, outcomes)
    values = None
    if groups is None:
        values, label = np.unique(f, return_inverse=True)
    else:
        _, label = np.unique(np.asarray(groups), return_inverse=True)
        if label.shape != f.shape:
            raise ValueError("groups must have one label per forecast")
    label = label.reshape(-1)
    size = int(label.max()) + 1
    n = float(f.size)
    count = np.bincount(label, minlength=size).astype(np.float64)
    # grouped by value, a group's forecast is that value exactly (a mean of equal floats can move by an ulp)
    f_mean = values if values is not None else np.bincount(label, weights=f, minlength=size) / count
    o_mean = np.bincount(label, weights=o, minlength=size) / count
    base = float(o.mean())
    reliability = float(np.sum(count * (f_mean - o_mean) ** 2) / n)
    resolution = float(np.sum(count * (o_mean - base) ** 2) / n)
    f_dev = f - f_mean[label]
    wbv = float(np.sum(f_dev**2) / n)
    wbc = float(2.0 * np.sum(f_dev * (o - o_mean[label])) / n)
    return MurphyDecomposition(
        brier=float(np.mean((f - o) ** 2)),
        reliability=reliability,
        resolution=resolution,
        uncertainty=base * (1.0 - base),
        within_bin_variance=wbv,
        within_bin_covariance=wbc,
        groups=size,
    )


def ece_from_bins(counts: Sequence[float], confidences: Sequence[float], accuracies: Sequence[float]) -> float:
    """ECE from per-bin summaries: sum n_m / N * |acc_m - conf_m| (empty bins contribute nothing).

    Seed 002: bins of 10, 30 and 60 samples at confidence 0.55, 0.75, 0.95 with accuracy
    0.4, 0.7, 0.83 give 0.015 + 0.015 + 0.072 = 0.102.
    """
    n = np.asarray(counts, dtype=np.float64)
    conf = np.asarray(confidences, dtype=np.float64)
    acc = np.asarray(accuracies, dtype=np.float64)
    if not (n.shape == conf.shape == acc.shape) or n.ndim != 1:
        raise ValueError("counts, confidences and accuracies must be 1-D of one length")
    if np.any(n < 0) or n.sum() <= 0:
        raise ValueError("counts must be non-negative with a positive total")
    filled = n > 0
    return float(np.sum(n[filled] / n.sum() * np.abs(acc[filled] - conf[filled])))


def calibration_bins(
    forecasts: np.ndarray, outcomes: np.ndarray, bins: int = 10, binning: Binning = "equal_width"
) -> list[CalibrationBin]:
    """The reliability diagram's points: per bin its range, count, mean confidence and accuracy."""
    f, o = _check(forecasts, outcomes)
    index = _bin_index(f, bins, binning)
    size = bins if binning == "equal_width" else int(index.max()) + 1
    count = np.bincount(index, minlength=size)
    conf_sum = np.bincount(index, weights=f, minlength=size)
    hit_sum = np.bincount(index, weights=o, minlength=size)
    out: list[CalibrationBin] = []
    for b in range(size):
        if binning == "equal_width":
            low, high = b / bins, (b + 1) / bins
        else:
            members = f[index == b]
            low, high = float(members.min()), float(members.max())
        c = int(count[b])
        out.append(
            CalibrationBin(
                low, high, c, float(conf_sum[b] / c) if c else None, float(hit_sum[b] / c) if c else None
            )
        )
    return out


def ece(forecasts: np.ndarray, outcomes: np.ndarray, bins: int = 10, binning: Binning = "equal_width") -> float:
    """Expected calibration error over equal-width or equal-count bins."""
    table = calibration_bins(forecasts, outcomes, bins, binning)
    return ece_from_bins(
        [b.count for b in table],
        [b.mean_confidence or 0.0 for b in table],
        [b.accuracy or 0.0 for b in table],
    )


@dataclass(frozen=True)
class CalibratedBaseline:
    """The ECE a perfectly calibrated model shows with these confidences at this N: its mean and 95th percentile."""

    expected: float
    high: float  # 95th percentile


def calibrated_baseline(forecasts: np.ndarray, bins: int = 10, *, seed: int = 0) -> CalibratedBaseline:
    """ECE of outcomes drawn as Bernoulli(f): each bin's sum of o - f is a zero-mean sum with variance
    sum f (1 - f); its expected absolute value sqrt(2/pi) sd (normal), and the 95th percentile of
    sum_m |X_m| / N over normal draws. Tests check both against drawing the outcomes themselves."""
    f = np.asarray(forecasts, dtype=np.float64)
    index = equal_width_bins(f, bins)
    sd = np.sqrt(np.bincount(index, weights=f * (1.0 - f), minlength=bins))
    expected = float(np.sqrt(2.0 / np.pi) * sd.sum() / f.size)
    draws = np.abs(np.random.default_rng(seed).standard_normal((_BASELINE_DRAWS, bins)) * sd).sum(axis=1) / f.size
    return CalibratedBaseline(expected, float(np.quantile(draws, 0.95)))


@dataclass(frozen=True)
class EceSummary:
    estimate: float  # the plug-in ECE over equal-width bins (biased up)
    interval: Figure  # basic bootstrap over problems, lower bound 0 within the calibrated model's range
    calibrated: CalibratedBaseline
    label: str = ECE_LABEL


def ece_interval(
    problem: np.ndarray, forecasts: np.ndarray, outcomes: np.ndarray, problems: int, *, bins: int = 10,
    resamples: int = 10_000, confidence: float = 0.95, seed: int = 0,
) -> EceSummary:
    """The equal-width ECE with an interval over problems (pass@k's resampled problems for this seed).

    Per bin, sum(o - f) over the resampled problems' samples, |.| summed over bins, over their samples.
    The interval is 2 ECE - the (1 - alpha/2, alpha/2) quantiles of the resampled ECEs: they sit above the
    ECE by about its own bias, so reflecting them removes it to first order. Where the ECE is no larger than
    a perfectly calibrated model's 95th percentile at these confidences, the data cannot tell the model from
    a calibrated one, and the lower bound is 0.
    """
    bins = _check_bins(bins)
    f, o = _check(forecasts, outcomes)
    rows = np.asarray(problem, dtype=np.intp)
    index = equal_width_bins(f, bins)
    gaps = np.zeros((problems, bins))
    np.add.at(gaps, (rows, index), o - f)
    counts = np.bincount(rows, minlength=problems).astype(np.float64)
    estimate = ece(f, o, bins, "equal_width")  # the same number as the table's, to the last bit
    parts = []
    for idx in index_chunks(np.random.default_rng(seed), problems, resamples):
        weight = multiplicity(idx, problems).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.abs(weight @ gaps).sum(axis=1) / (weight @ counts))
    distribution = np.concatenate(parts)
    distribution = distribution[np.isfinite(distribution)]
    baseline = calibrated_baseline(f, bins, seed=seed)
    alpha = 1.0 - confidence
    low_q, high_q = np.quantile(distribution, [alpha / 2.0, 1.0 - alpha / 2.0])
    low, high = max(0.0, 2.0 * estimate - float(high_q)), max(0.0, 2.0 * estimate - float(low_q))
    note = None
    if estimate <= baseline.high:
        low = 0.0
        note = "within the range a perfectly calibrated model shows at this N: the lower bound is 0"
    spread = float(np.std(distribution, ddof=1)) if distribution.size > 1 else None
    interval = Figure(estimate, low, high, confidence, resamples, spread, "basic bootstrap", note)
    return EceSummary(estimate, interval, baseline)


@dataclass(frozen=True)
class CalibrationSummary:
    samples: int  # samples that carry a confidence
    bins: int
    brier: Figure  # with a problem-level bootstrap interval
    decomposition: MurphyDecomposition  # over the equal-width bins (exact with the within-bin terms)
    ece_equal_width: float  # biased plug-ins, as `ece` below says
    ece_equal_count: float
    diagram: list[CalibrationBin]  # equal-width
    diagram_equal_count: list[CalibrationBin]
    ece: EceSummary | None = None  # the equal-width ECE with its interval and the calibrated model's


def calibration_summary(
    problem: np.ndarray,
    confidence_values: np.ndarray,
    passed: np.ndarray,
    problems: int,
    *,
    bins: int = 10,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> CalibrationSummary | None:
    """Calibration of the samples that carry a confidence; None if none does.

    The Brier score's interval resamples problems (the same index matrix as pass@k), as a
    ratio of sums: sum of squared errors / samples with a confidence.
    """
    bins = _check_bins(bins)
    present = ~np.isnan(np.asarray(confidence_values, dtype=np.float64))
    if not present.any():
        return None
    f = np.asarray(confidence_values, dtype=np.float64)[present]
    o = np.asarray(passed, dtype=np.float64)[present]
    rows = np.asarray(problem, dtype=np.intp)[present]
    squared, counts = problem_sums(rows, (f - o) ** 2, problems)
    estimate, distribution = bootstrap_distribution(
        problems, ratio_of_sums(squared, counts), resamples=resamples, seed=seed
    )
    (brier,) = figures_from_distribution(estimate, distribution, confidence=confidence, undefined="no confidence")
    return CalibrationSummary(
        samples=int(f.size),
        bins=bins,
        brier=brier,
        decomposition=murphy_decomposition(f, o, equal_width_bins(f, bins)),
        ece_equal_width=ece(f, o, bins, "equal_width"),
        ece_equal_count=ece(f, o, bins, "equal_count"),
        diagram=calibration_bins(f, o, bins, "equal_width"),
        diagram_equal_count=calibration_bins(f, o, bins, "equal_count"),
        ece=ece_interval(rows, f, o, problems, bins=bins, resamples=resamples, confidence=confidence, seed=seed),
    )

