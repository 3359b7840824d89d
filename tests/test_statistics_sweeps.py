"""Temperature sweeps: the best run per k (ties split, order of runs irrelevant) and the simultaneous envelope."""

from __future__ import annotations

import numpy as np
import pytest

from service.statistics import bootstrap_means
from service.statistics.sweeps import sweep_summary


def _curve(seed: int = 0, problems: int = 164) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.binomial(10, rng.beta(0.5, 0.5, problems))[:, None] / 10.0 * np.ones((1, 2))


def test_two_identical_runs_tie_and_split_the_resamples() -> None:
    x = _curve()
    summary = sweep_summary([x, x], [1, 10], resamples=2000)
    for best in summary.best:
        assert best.probability_best == [0.5, 0.5]
        assert best.tie and best.tied == [0, 1]
        assert best.margin == 0.0 and (best.margin_low, best.margin_high) == (0.0, 0.0)


def test_the_order_of_the_runs_does_not_change_the_answer() -> None:
    # Run b is better on one problem of 164: the resamples that miss that problem tie. Handing ties to whichever
    # run comes first would turn 0.382 / 0.618 into 1 / 0 when the runs are swapped.
    rng = np.random.default_rng(1)
    a = (rng.binomial(10, rng.beta(0.5, 0.5, 164)) / 10.0)[:, None]
    b = a.copy()
    b[17] = min(1.0, b[17, 0] + 0.1) if a[17, 0] < 1.0 else b[17]
    forward = sweep_summary([a, b], [1], resamples=4000, seed=3).best[0]
    backward = sweep_summary([b, a], [1], resamples=4000, seed=3).best[0]
    assert forward.probability_best == pytest.approx(backward.probability_best[::-1], abs=1e-12)
    # resamples that drop problem 17 (a share (1 - 1/164)^164 = 0.366) are ties, split in half
    assert forward.probability_best[0] == pytest.approx(0.366 / 2, abs=0.015)
    assert (forward.best, backward.best) == (1, 0) and not forward.tie


def test_envelope_is_the_largest_bonferroni_lower_bound_to_the_largest_upper_bound() -> None:
    rng = np.random.default_rng(2)
    p = rng.beta(0.6, 0.6, 120)
    runs = [(rng.binomial(10, p ** power) / 10.0)[:, None] for power in (0.9, 1.0, 1.1)]
    summary = sweep_summary(runs, [1], resamples=3000, seed=4)
    stacked = np.hstack(runs)
    plain = bootstrap_means(stacked, resamples=3000, seed=4)
    simultaneous = bootstrap_means(stacked, resamples=3000, seed=4, confidence=1 - 0.05 / 3)
    best = summary.best[0]
    assert best.envelope == pytest.approx(stacked.mean(axis=0).max())
    assert best.envelope_low == max(iv.ci_low for iv in simultaneous)
    assert best.envelope_high == max(iv.ci_high for iv in plain)
    assert best.envelope_low <= best.envelope <= best.envelope_high


def test_envelope_has_no_interval_where_a_run_has_none() -> None:
    flat = np.full((30, 1), 0.5)
    summary = sweep_summary([flat, _curve(3, 30)[:, :1]], [1], resamples=500)
    assert summary.best[0].envelope_low is None and summary.best[0].envelope_high is None


def test_the_margin_holds_for_whichever_pair_is_picked() -> None:
    # best - runner-up +- c x its standard error, with c the 95th percentile over the resamples of the largest
    # studentised deviation of any pair of runs: written out here from the resampled means themselves.
    from service.statistics import resample_means
    from service.statistics.intervals import rescaled

    rng = np.random.default_rng(5)
    p = rng.beta(0.6, 0.6, 100)
    runs = [(rng.binomial(10, p**power) / 10.0)[:, None] for power in (0.8, 1.0, 1.2, 1.4)]
    summary = sweep_summary(runs, [1], resamples=3000, seed=6)
    stacked = np.hstack(runs)
    estimates = stacked.mean(axis=0)
    dist = rescaled(resample_means(stacked, resamples=3000, seed=6), estimates, 100)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    studentised = np.column_stack([
        np.abs(dist[:, i] - dist[:, j] - (estimates[i] - estimates[j])) / np.std(dist[:, i] - dist[:, j], ddof=1)
        for i, j in pairs
    ])
    critical = np.quantile(studentised.max(axis=1), 0.95)
    best = summary.best[0]
    winner, runner_up = np.argsort(estimates)[::-1][:2]
    assert best.best == winner
    error = np.std(dist[:, winner] - dist[:, runner_up], ddof=1)
    assert best.margin == pytest.approx(estimates[winner] - estimates[runner_up], rel=1e-12)
    assert best.margin_low == pytest.approx(best.margin - critical * error, rel=1e-9)
    assert best.margin_high == pytest.approx(best.margin + critical * error, rel=1e-9)
    assert critical > 1.96 * 1.1  # wider than one pair's own interval: the pair was picked
