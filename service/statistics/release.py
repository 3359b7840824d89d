"""A release rule's clause against an interval: pass, fail, or not enough data.

Seed 004: "success must not drop by more than 1 point (paired, lower bound of the interval),
cost per success must not rise more than 10 percent, p95 must stay under 2.5 seconds", written
before the run. Each clause bounds one figure (a paired difference, a relative change, or the
candidate's own value) on one side. A clause passes when the whole interval is on the allowed
side of the threshold, fails when the whole interval is beyond it, and otherwise the data cannot
tell: not enough data. A rule passes when every clause passes and fails when any clause fails.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

__all__ = ["Bound", "ReleaseVerdict", "combine", "judge"]


class ReleaseVerdict(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_ENOUGH_DATA = "not_enough_data"


class Bound(enum.StrEnum):
    """Which side a clause bounds. UPPER: the figure must stay at or below the threshold."""

    UPPER = "upper"
    LOWER = "lower"


def judge(bound: Bound, threshold: float, ci_low: float | None, ci_high: float | None) -> ReleaseVerdict:
    """UPPER: pass if ci_high <= threshold, fail if ci_low > threshold. LOWER: mirrored.

    A missing bound (the figure is undefined or unbounded in some resamples) cannot pass on
    that side, and cannot fail on the other.
    """
    if bound is Bound.UPPER:
        if ci_high is not None and ci_high <= threshold:
            return ReleaseVerdict.PASS
        if ci_low is not None and ci_low > threshold:
            return ReleaseVerdict.FAIL
        return ReleaseVerdict.NOT_ENOUGH_DATA
    if ci_low is not None and ci_low >= threshold:
        return ReleaseVerdict.PASS
    if ci_high is not None and ci_high < threshold:
        return ReleaseVerdict.FAIL
    return ReleaseVerdict.NOT_ENOUGH_DATA


def combine(verdicts: Iterable[ReleaseVerdict]) -> ReleaseVerdict:
    """Fail if any clause fails, else not enough data if any clause cannot tell, else pass."""
    seen = set(verdicts)
    if ReleaseVerdict.FAIL in seen:
        return ReleaseVerdict.FAIL
    if ReleaseVerdict.NOT_ENOUGH_DATA in seen or not seen:
        return ReleaseVerdict.NOT_ENOUGH_DATA
    return ReleaseVerdict.PASS
