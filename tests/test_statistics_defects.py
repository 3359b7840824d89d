"""Statistical defects found in review: each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from service.statistics import bootstrap_means
from service.statistics.groups import group_intervals


def _groups(values: np.ndarray, tags: list[list[str]], **kwargs: object):  # type: ignore[no-untyped-def]
    options = {"resamples": 4000, "confidence": 0.95, "seed": 0, "method": "bca", **kwargs}
    return group_intervals(values, tags, **options)  # type: ignore[arg-type]


def test_overlapping_groups_resample_problems_jointly() -> None:
    # Every problem carries both tags: the two groups are the same problems, the macro mean is that
    # group's mean, and its interval must be as wide as the group's (not 1/sqrt(2) of it, which
    # treating the groups as independent strata gives).
    values = np.random.default_rng(0).random((200, 1))
    result = _groups(values, [["a", "b"]] * 200)
    assert result.overlapping
    group = result.groups[0].intervals[0]
    macro = result.macro[0]
    assert macro.estimate == pytest.approx(group.estimate)
    ratio = (macro.ci_high - macro.ci_low) / (group.ci_high - group.ci_low)
    assert ratio == pytest.approx(1.0, abs=0.06)
    assert macro.standard_error == pytest.approx(group.standard_error, rel=0.06)


def test_partly_overlapping_groups_match_a_joint_reference() -> None:
    # Half the problems are in both groups: the macro SE is the SD of the per-problem influence
    # sum_g 1[i in g] (x_i - mean_g) / (G m_g), summed over problems (the delta method).
    rng = np.random.default_rng(1)
    values = rng.random((300, 1))
    tags = [["a", "b"] if i < 150 else (["a"] if i % 2 else ["b"]) for i in range(300)]
    result = _groups(values, tags)
    x = values[:, 0]
    in_a = np.array(["a" in t for t in tags])
    in_b = np.array(["b" in t for t in tags])
    influence = np.zeros(300)
    for member in (in_a, in_b):
        influence[member] += (x[member] - x[member].mean()) / (2 * member.sum())
    reference = np.sqrt(np.sum(influence**2))
    assert result.macro[0].standard_error == pytest.approx(reference, rel=0.08)


def test_a_group_that_cannot_vary_widens_the_macro_interval_and_says_so() -> None:
    # Group "a": 60 problems that vary. Group "b": one problem at 0.5. The bootstrap cannot move b,
    # so calling the macro interval plain "bca" claims b's mean is known exactly.
    rng = np.random.default_rng(2)
    values = np.vstack([rng.random((60, 1)), [[0.5]]])
    result = _groups(values, [["a"]] * 60 + [["b"]])
    macro = result.macro[0]
    assert macro.method_used != "bca"
    assert "b" in (macro.fallback_reason or "") and "one problem" in (macro.fallback_reason or "")
    # honest: b's mean could be anywhere in [0, 1], so the macro interval spans at least +-0.25 around a's part
    a = result.groups[0].intervals[0]
    assert macro.ci_low <= (a.ci_low + 0.0) / 2 + 1e-12
    assert macro.ci_high >= (a.ci_high + 1.0) / 2 - 1e-12


def test_a_group_of_identical_zeros_gets_its_exact_bound_in_the_macro() -> None:
    rng = np.random.default_rng(3)
    values = np.vstack([rng.random((50, 1)), np.zeros((20, 1))])
    result = _groups(values, [["a"]] * 50 + [["z"]] * 20)
    macro = result.macro[0]
    assert macro.method_used != "bca" and "z" in (macro.fallback_reason or "")
    # z contributes its Clopper-Pearson upper bound (level alpha / 2 groups) to the upper end
    z_high = 1 - (0.0125) ** (1 / 20)
    a = result.groups[0].intervals[0]
    assert macro.ci_high >= (a.ci_high + z_high) / 2 - 1e-9


def test_constant_column_that_is_not_zero_or_one_has_no_interval() -> None:
    (interval,) = bootstrap_means(np.full((40, 1), 0.3), resamples=200)
    assert interval.estimate == 0.3
    assert interval.ci_low is None and interval.ci_high is None
    assert interval.method_used == "none" and "same value" in (interval.fallback_reason or "")
    (single,) = bootstrap_means(np.array([[0.4]]), resamples=200)
    assert single.ci_low is None and single.ci_high is None and "single problem" in (single.fallback_reason or "")
