"""Temperature sweeps: one model's runs at several temperatures on the same problems.

Seed 001: "pass@1 falls while pass@k rises" with temperature, and "the temperature is part of the
metric definition". So each temperature stays its own curve (never pooled), and the questions are
which temperature is best at each k, how sure that is, and what the best achievable curve (the
envelope over temperatures) looks like.

Every run and every k is bootstrapped on the same resampled problems (one index matrix), so the
comparison between temperatures is paired, and per resample we can ask which temperature wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.statistics.bootstrap import resample_means, validate_options
from service.statistics.intervals import TIE_TOLERANCE, Interval, Method, mean_intervals, rescaled

__all__ = ["BestAtK", "SweepSummary", "sweep_summary"]

ENVELOPE_LABEL = (
    "simultaneous: from the largest of the runs' lower bounds at level 1 - alpha/R (R runs) to the largest of their "
    "upper bounds, so it covers the best run's pass@k whichever run that is"
)


@dataclass(frozen=True)
class BestAtK:
    k: int
    best: int  # index of the run with the highest pass@k (the first of them when several tie)
    tied: list[int]  # every run whose pass@k equals the highest (one run when there is no tie)
    probability_best: list[float]  # per run: share of resamples in which it has the highest pass@k, ties split
    margin: float  # best - runner-up (0 with one run, or a tie)
    # best - runner-up +- c x its standard error, c simultaneous over every pair of runs (see _pairwise_critical)
    margin_low: float | None
    margin_high: float | None
    envelope: float  # max over runs of pass@k (optimistic: picking the best of several is biased up)
    envelope_low: float | None  # simultaneous (see sweep_summary); None where some run has no interval
    envelope_high: float | None

    @property
    def tie(self) -> bool:
        return len(self.tied) > 1


@dataclass(frozen=True)
class SweepSummary:
    intervals: list[list[Interval]]  # [run][k]
    best: list[BestAtK]
    envelope_label: str = ENVELOPE_LABEL


def _shares_of_best(at_k: np.ndarray) -> np.ndarray:
    """Per run, the share of resamples (rows) in which it has the highest value; a tie of t runs gives each 1/t.

    Taking the first maximum instead hands every tie to the run listed first, so two identical runs would
    read [1, 0] and swapping them would swap the answer.
    """
    top = at_k.max(axis=1, keepdims=True)
    winners = at_k >= top - TIE_TOLERANCE * np.maximum(1.0, np.abs(top))
    return (winners / winners.sum(axis=1, keepdims=True)).mean(axis=0)


def _pairwise_critical(at_k: np.ndarray, point: np.ndarray, confidence: float) -> float:
    """c such that, over the resamples, every pair's difference stays within c of its estimate in units of its
    standard error with probability `confidence`: the (confidence) quantile of max_(i<j) |d*_ij - d_ij| / se_ij.

    The best run and its runner-up are picked because their estimates came out on top, so the interval of
    their difference alone would sit too high (the winner's noise helped it win); an interval that holds for
    every pair at once holds for the pair picked, whichever it is. With two runs it is the plain studentised one.
    """
    first, second = np.triu_indices(at_k.shape[1], 1)
    spread = at_k[:, first] - at_k[:, second]
    scale = spread.std(axis=0, ddof=1)
    moving = scale > 0
    if not moving.any():
        return 0.0
    deviation = np.abs(spread[:, moving] - (point[first] - point[second])[moving]) / scale[moving]
    return float(np.quantile(deviation.max(axis=1), confidence))


def sweep_summary(
    per_run: Sequence[np.ndarray],
    ks: Sequence[int],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    method: Method = "bca",
) -> SweepSummary:
    """per_run: one (problems x len(ks)) array of per-problem pass@k per run, rows the same problems.

    Independent of the order of the runs: the resampled problems do not depend on it, ties are split.
    """
    resamples, confidence, seed, method = validate_options(resamples, confidence, seed, method)
    runs = len(per_run)
    if runs < 1:
        raise ValueError("at least one run is needed")
    width = len(ks)
    stacked = np.hstack([np.asarray(r, dtype=np.float64).reshape(-1, width) for r in per_run])
    # Exactly the resamples the intervals are read from (same seed and shape), stretched as they are.
    raw = resample_means(stacked, resamples=resamples, seed=seed)
    intervals = mean_intervals(raw, stacked, method=method, confidence=confidence)
    estimates = stacked.mean(axis=0)
    distribution = rescaled(raw, estimates, stacked.shape[0])
    # The envelope's truth is the best run's pass@k, theta* = max_r theta_r. Its lower bound, the largest of the
    # runs' lower bounds, is wrong when any run's lower bound passes theta* >= theta_r: at level 1 - alpha/R for
    # each (Bonferroni), that is at most alpha/2 in all. Its upper bound, the largest upper bound, is wrong only
    # when the best run's own upper bound is below its truth: alpha/2 at the plain level. The picking of a
    # maximum, which made the resampled maximum's percentile interval cover 82 % at k = 10, does not enter.
    simultaneous = mean_intervals(raw, stacked, method=method, confidence=1.0 - (1.0 - confidence) / runs)
    best: list[BestAtK] = []
    for j, k in enumerate(ks):
        columns = [r * width + j for r in range(runs)]
        at_k = distribution[:, columns]  # (resamples, runs)
        point = estimates[columns]
        top = float(point.max())
        tied = [r for r in range(runs) if point[r] >= top - TIE_TOLERANCE * max(1.0, abs(top))]
        winner = tied[0]
        # Who wins a resample: on the resampled means themselves (stretching each run about its own estimate
        # would turn a tie between runs that differ elsewhere into a win for the lower one).
        wins = _shares_of_best(raw[:, columns])
        lows = [simultaneous[c].ci_low for c in columns]
        highs = [intervals[c].ci_high for c in columns]
        env_low = env_high = None
        if all(v is not None for v in lows + highs):
            env_low, env_high = max(lows), max(highs)  # type: ignore[type-var]
        margin_low = margin_high = None
        margin = 0.0
        if runs > 1:
            others = [c for c in range(runs) if c != winner]
            runner_up = others[int(np.argmax(point[others]))]
            margin = 0.0 if len(tied) > 1 else float(point[winner] - point[runner_up])
            error = float(np.std(at_k[:, winner] - at_k[:, runner_up], ddof=1))
            critical = _pairwise_critical(at_k, point, confidence)
            margin_low, margin_high = margin - critical * error, margin + critical * error
        best.append(
            BestAtK(
                k=k, best=winner, tied=tied, probability_best=[float(w) for w in wins], margin=margin,
                margin_low=margin_low, margin_high=margin_high, envelope=top, envelope_low=env_low,
                envelope_high=env_high,
            )
        )
    return SweepSummary([[intervals[r * width + j] for j in range(width)] for r in range(runs)], best)
