"""How small a difference a paired comparison can detect, and how many problems a difference needs.

Seed 004: with a paired comparison on n problems and a share d of discordant problems, the
standard error of the difference is about sqrt(d / n), and the minimum detectable difference
at 95 % confidence (two-sided) and 80 % power is (z_0.975 + z_0.80) sqrt(d / n) = 2.80 sqrt(d / n):
15 % discordance gives 10.8 points at n = 100, 4.8 at n = 500, 3.4 at n = 1,000.

For per-problem scores that are not 0/1 (pass@k with n > 1 samples), the per-problem
difference x_i = candidate_i - base_i is a number in [-1, 1]; the "discordance" generalises to
mean(x_i^2), which is exactly the discordant share when every x_i is -1, 0 or 1. Like the
seed, it drops the mean^2 term of the variance (conservative by at most mean^2 / d).

The MDD is a planning figure, not a verdict: when the true difference equals it, a comparison of
this size finds it significant 80 % of the time, but the observed difference reaches the MDD only
about half the time. So `detectable` (observed >= MDD) says whether the observed difference is as
large as what these problems can reliably detect; whether the difference is real is for the paired
interval and the p-value to say.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

__all__ = [
    "PLANNING_LABEL",
    "Detectability",
    "detectability",
    "discordance",
    "minimum_detectable_difference",
    "problems_needed",
]

PLANNING_LABEL = (
    "planning figure: the smallest difference this many problems detect with {power:.0%} power at {confidence:.0%} "
    "confidence, and the problems the observed difference would need; not a test of this comparison (read the "
    "difference's interval and the p-value for that)"
)


def _z_sum(confidence: float, power: float) -> float:
    if not 0.0 < confidence < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("confidence and power must lie strictly between 0 and 1")
    return float(ndtri(1.0 - (1.0 - confidence) / 2.0) + ndtri(power))


def discordance(differences: np.ndarray) -> float:
    """mean(x_i^2) of per-problem differences: the share of discordant problems for 0/1 outcomes."""
    x = np.asarray(differences, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("differences must be a non-empty 1-D array")
    return float(np.mean(x**2))


def minimum_detectable_difference(d: float, n: int, *, confidence: float = 0.95, power: float = 0.80) -> float:
    """(z_(1-alpha/2) + z_power) sqrt(d / n): 2.8016 sqrt(d / n) at 95 % / 80 %."""
    if n < 1:
        raise ValueError("n must be at least 1")
    if d < 0:
        raise ValueError("discordance must be non-negative")
    return _z_sum(confidence, power) * math.sqrt(d / n)


def problems_needed(d: float, difference: float, *, confidence: float = 0.95, power: float = 0.80) -> int | None:
    """Smallest n whose MDD is at most |difference|: ceil(d (z_a + z_b)^2 / difference^2). None if difference = 0."""
    if difference == 0 or d <= 0:
        return None
    # the ulp guard keeps an exact integer (e.g. 368.0000000001 from rounding) from becoming the next one
    raw = d * _z_sum(confidence, power) ** 2 / difference**2
    return max(1, math.ceil(raw - 1e-9 * raw))


@dataclass(frozen=True)
class Detectability:
    problems: int
    discordance: float
    minimum_detectable_difference: float
    observed_difference: float
    standard_error: float  # sqrt((d - mean^2) / n): the normal-approximation SE of the mean difference
    detectable: bool  # |observed| >= MDD: a planning figure (see the module docstring), not a verdict
    problems_needed: int | None  # for the observed difference; None if it is 0
    more_problems_needed: int | None  # problems_needed - problems, at least 0
    confidence: float
    power: float

    @property
    def label(self) -> str:
        return PLANNING_LABEL.format(power=self.power, confidence=self.confidence)


def detectability(differences: np.ndarray, *, confidence: float = 0.95, power: float = 0.80) -> Detectability:
    """MDD of this comparison and how many problems the observed mean difference would need."""
    x = np.asarray(differences, dtype=np.float64)
    d = discordance(x)
    n = int(x.size)
    observed = float(x.mean())
    mdd = minimum_detectable_difference(d, n, confidence=confidence, power=power)
    needed = problems_needed(d, observed, confidence=confidence, power=power)
    return Detectability(
        problems=n,
        discordance=d,
        minimum_detectable_difference=mdd,
        observed_difference=observed,
        standard_error=math.sqrt(max(0.0, d - observed**2) / n),
        detectable=abs(observed) >= mdd and mdd > 0,
        problems_needed=needed,
        more_problems_needed=None if needed is None else max(0, needed - n),
        confidence=confidence,
        power=power,
    )
