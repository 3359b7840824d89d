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

from service.statistics.bootstrap import bootstrap_means, resample_means, validate_options
from service.statistics.intervals import Interval, Method, sorted_quantiles

__all__ = ["BestAtK", "SweepSummary", "sweep_summary"]


@dataclass(frozen=True)
class BestAtK:
    k: int
    best: int  # index of the run with the highest pass@k
    probability_best: list[float]  # per run: share of resamples in which it has the highest pass@k
    margin: float  # best - runner-up (0 with one run)
    margin_low: float | None  # percentile interval of best - runner-up over the resamples
    margin_high: float | None
    envelope: float  # max over runs of pass@k (optimistic: picking the best of several is biased up)
    envelope_low: float
    envelope_high: float


@dataclass(frozen=True)
class SweepSummary:
    intervals: list[list[Interval]]  # [run][k]
    best: list[BestAtK]


def sweep_summary(
    per_run: Sequence[np.ndarray],
    ks: Sequence[int],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    method: Method = "bca",
) -> SweepSummary:
    """per_run: one (problems x len(ks)) array of per-problem pass@k per run, rows the same problems."""
    resamples, confidence, seed, method = validate_options(resamples, confidence, seed, method)
    runs = len(per_run)
    if runs < 1:
        raise ValueError("at least one run is needed")
    width = len(ks)
    stacked = np.hstack([np.asarray(r, dtype=np.float64).reshape(-1, width) for r in per_run])
    intervals = bootstrap_means(stacked, resamples=resamples, confidence=confidence, seed=seed, method=method)
    # The same seed and shape: exactly the resamples the intervals above were read from.
    distribution = resample_means(stacked, resamples=resamples, seed=seed)
    estimates = stacked.mean(axis=0)
    alpha = 1.0 - confidence
    levels = np.array([alpha / 2.0, 1.0 - alpha / 2.0])
    best: list[BestAtK] = []
    for j, k in enumerate(ks):
        columns = [r * width + j for r in range(runs)]
        at_k = distribution[:, columns]  # (resamples, runs)
        point = estimates[columns]
        winner = int(np.argmax(point))
        wins = np.bincount(np.argmax(at_k, axis=1), minlength=runs) / resamples
        envelope = np.sort(at_k.max(axis=1))
        env_low, env_high = (float(v) for v in sorted_quantiles(envelope, levels))
        margin_low = margin_high = None
        margin = 0.0
        if runs > 1:
            others = [c for c in range(runs) if c != winner]
            runner_up = others[int(np.argmax(point[others]))]
            margin = float(point[winner] - point[runner_up])
            spread = np.sort(at_k[:, winner] - at_k[:, runner_up])
            margin_low, margin_high = (float(v) for v in sorted_quantiles(spread, levels))
        best.append(
            BestAtK(
                k=k, best=winner, probability_best=[float(w) for w in wins], margin=margin,
                margin_low=margin_low, margin_high=margin_high, envelope=float(point.max()),
                envelope_low=env_low, envelope_high=env_high,
            )
        )
    return SweepSummary([[intervals[r * width + j] for j in range(width)] for r in range(runs)], best)
