"""A model's checkpoints over training: each checkpoint against the one before it, paired on shared problems.

Each checkpoint's own pass@k and interval is the run's (service.statistics.summary, as on the run page). What is
new here is the step from one checkpoint to the next: the same paired comparison as GET /v1/compare (a paired
bootstrap interval of the difference and the sign-flip permutation test, with the same seeds), so a checkpoint
marked better here is the one the compare page calls better. Pairing matters for the same reason as there:
consecutive checkpoints of one model succeed and fail on mostly the same problems, so their difference is far
more precise than two separate intervals suggest.

Each step is tested on its own at 1 - confidence. Over many steps some marks are expected by chance alone (one in
twenty at 95 %), so the series also carries Holm-adjusted p-values, which hold for the whole series at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from service.statistics.bootstrap import derive_seed
from service.statistics.intervals import Interval, Method
from service.statistics.paired import paired_bootstrap, sign_flip_p_value

__all__ = ["Change", "Direction", "holm", "versus_previous"]

Direction = Literal["better", "worse", "equal"]


@dataclass(frozen=True)
class Change:
    """current - previous on the problems both checkpoints finished."""

    problems: int  # problems paired: finished in both runs
    difference: Interval  # paired bootstrap (each resample draws the same problems for both)
    p_value: float  # two-sided sign-flip permutation test of no difference
    p_value_exact: bool  # every sign vector enumerated (few non-tied problems) rather than Monte Carlo
    significant: bool  # p_value < 1 - confidence
    direction: Direction  # the sign of the estimated difference, whether significant or not


def versus_previous(
    previous: np.ndarray,
    current: np.ndarray,
    *,
    k: int,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    method: Method = "bca",
    permutations: int = 10_000,
) -> Change:
    """previous, current: per-problem pass@k of two runs, the same problems in the same rows (at least one).

    The seeds are GET /v1/compare's (base = previous, candidate = current, the same problem order), so the
    figures are the compare page's to the last bit.
    """
    before = np.asarray(previous, dtype=np.float64).reshape(-1)
    after = np.asarray(current, dtype=np.float64).reshape(-1)
    if before.shape != after.shape or before.size == 0:
        raise ValueError(f"previous and current must be the same problems (at least one), got {before.size} and {after.size}")
    paired = paired_bootstrap(
        before[:, None], after[:, None], resamples=resamples, confidence=confidence, seed=seed, method=method
    )[0]
    p_value, exact = sign_flip_p_value(after - before, permutations=permutations, seed=derive_seed(seed, f"sign-flip:{k}"))
    estimate = paired.difference.estimate
    direction: Direction = "better" if estimate > 0 else "worse" if estimate < 0 else "equal"
    return Change(
        problems=int(before.size), difference=paired.difference, p_value=p_value, p_value_exact=exact,
        significant=p_value < 1.0 - confidence, direction=direction,
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: p-values that hold for the whole series at once (family-wise error).

    [0.01, 0.04, 0.03] -> [0.03, 0.06, 0.06]: sorted ascending, the i-th smallest (from 0) is multiplied by
    m - i, and each adjusted value is at least the one before it, capped at 1.
    """
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
