"""A checkpoint against the one before it: the compare page's paired figures, and Holm over the series."""

from __future__ import annotations

import numpy as np
import pytest

from service.statistics.bootstrap import derive_seed
from service.statistics.checkpoints import holm, versus_previous
from service.statistics.paired import paired_bootstrap, sign_flip_p_value


def test_eight_problems_gained_of_ten_is_significantly_better() -> None:
    previous = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=np.float64)
    current = np.ones(10)
    change = versus_previous(previous, current, k=1, resamples=2000)
    # Eight non-tied problems, all +1: of the 2^8 sign vectors only all-plus and all-minus reach |sum| = 8.
    assert change.p_value == 2 / 2**8 == 0.0078125 and change.p_value_exact
    assert change.difference.estimate == pytest.approx(0.8)
    assert change.problems == 10 and change.significant and change.direction == "better"
    reverse = versus_previous(current, previous, k=1, resamples=2000)
    assert reverse.p_value == 0.0078125 and reverse.direction == "worse" and reverse.significant


def test_six_gained_one_lost_is_not_significant() -> None:
    previous = np.array([0, 0, 0, 0, 0, 0, 1, 1, 0], dtype=np.float64)
    current = np.array([1, 1, 1, 1, 1, 1, 0, 1, 0], dtype=np.float64)
    change = versus_previous(previous, current, k=1, resamples=2000)
    # Seven non-tied problems: |sum| >= 5 for 0, 1, 6 or 7 plus signs: (1 + 7 + 7 + 1) / 128.
    assert change.p_value == 16 / 128 == 0.125
    assert change.difference.estimate == pytest.approx(5 / 9)
    assert change.direction == "better" and not change.significant


def test_the_same_figures_as_the_compare_page() -> None:
    rng = np.random.default_rng(5)
    previous = rng.integers(0, 6, 60) / 5
    current = np.clip(previous + rng.integers(-1, 3, 60) / 5, 0, 1)
    change = versus_previous(previous, current, k=3, resamples=3000, seed=11, permutations=4000)
    paired = paired_bootstrap(previous[:, None], current[:, None], resamples=3000, seed=11)[0]
    p_value, exact = sign_flip_p_value(current - previous, permutations=4000, seed=derive_seed(11, "sign-flip:3"))
    assert change.difference == paired.difference
    assert (change.p_value, change.p_value_exact) == (p_value, exact) and not exact


def test_no_change_has_no_interval_and_p_one() -> None:
    same = np.array([0.2, 0.4, 1.0, 0.0])
    change = versus_previous(same, same, k=1, resamples=500)
    assert change.p_value == 1.0 and change.direction == "equal" and not change.significant
    assert change.difference.ci_low is None and change.difference.method_used == "none"


def test_significance_at_the_asked_confidence() -> None:
    previous = np.zeros(6)
    current = np.array([1, 1, 1, 1, 1, 0], dtype=np.float64)
    # Five non-tied problems, all +1: p = 2 / 32 = 0.0625: significant at 90 %, not at 95 %.
    assert versus_previous(previous, current, k=1, resamples=500, confidence=0.90).significant
    assert not versus_previous(previous, current, k=1, resamples=500, confidence=0.95).significant


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([0.04, 0.03]) == pytest.approx([0.06, 0.06])  # monotone: never below a smaller p's adjusted value
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_refuses_unpaired_input() -> None:
    with pytest.raises(ValueError):
        versus_previous(np.zeros(3), np.zeros(4), k=1)
    with pytest.raises(ValueError):
        versus_previous(np.zeros(0), np.zeros(0), k=1)
