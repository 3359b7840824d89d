"""Paired comparison: the 14/5/181 worked vector, sign-flip against scipy, the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.statistics import (
    bootstrap_means,
    mcnemar,
    paired_bootstrap,
    sign_flip_p_value,
)
from service.statistics.paired import correlation, win_loss_tie


def _fourteen_five() -> tuple[np.ndarray, np.ndarray]:
    """200 items, n = 1: the candidate wins 14, loses 5, ties 181 (90 both pass, 91 both fail)."""
    base = np.array([0.0] * 14 + [1.0] * 5 + [1.0] * 90 + [0.0] * 91)
    candidate = np.array([1.0] * 14 + [0.0] * 5 + [1.0] * 90 + [0.0] * 91)
    return base, candidate


def test_mcnemar_worked_vector() -> None:
    result = mcnemar(14, 5)
    assert (result.wins, result.losses) == (14, 5)
    assert round(result.exact_p, 4) == 0.0636
    assert result.exact_p == pytest.approx(2 * sum(stats.binom.pmf(range(14, 20), 19, 0.5)), rel=1e-12)
    assert round(result.chi2, 3) == 4.263 and round(result.chi2_p, 4) == 0.0389
    assert round(result.chi2_corrected, 3) == 3.368 and round(result.chi2_corrected_p, 4) == 0.0665
    # The seed's other split: 15 to 4 gives exact p = 0.019.
    assert round(mcnemar(15, 4).exact_p, 3) == 0.019


def test_mcnemar_without_discordant_pairs() -> None:
    result = mcnemar(0, 0)
    assert result.exact_p == 1.0 and result.chi2 is None and result.chi2_corrected_p is None
    with pytest.raises(ValueError):
        mcnemar(-1, 3)


def test_sign_flip_on_zero_one_outcomes_is_the_exact_sign_test() -> None:
    base, candidate = _fourteen_five()
    p, exact = sign_flip_p_value(candidate - base, permutations=10_000)
    assert exact  # 181 ties dropped, 19 left: all 2^19 sign vectors enumerated
    assert p == pytest.approx(mcnemar(14, 5).exact_p, rel=1e-12)


def test_sign_flip_exact_matches_scipy_permutation_test() -> None:
    d = np.random.default_rng(2).normal(0.3, 1.0, 12)
    ours, exact = sign_flip_p_value(d)
    theirs = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=np.inf, vectorized=True
    ).pvalue
    assert exact and ours == pytest.approx(theirs, rel=1e-12)


def test_sign_flip_monte_carlo_agrees_with_scipy_and_is_reproducible() -> None:
    d = np.random.default_rng(3).normal(0.05, 0.5, 300)
    ours, exact = sign_flip_p_value(d, permutations=20_000, seed=5)
    assert not exact
    theirs = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=20_000,
        vectorized=True, rng=np.random.default_rng(0),
    ).pvalue
    assert ours == pytest.approx(theirs, abs=0.015)  # two Monte Carlo estimates, SE ~ 0.0035 each
    assert sign_flip_p_value(d, permutations=20_000, seed=5) == (ours, False)
    assert sign_flip_p_value(d, permutations=20_000, seed=6)[0] != ours


def test_sign_flip_edge_cases() -> None:
    assert sign_flip_p_value(np.zeros(50)) == (1.0, True)
    # A huge effect: Monte Carlo p is never 0, it counts the observed statistic.
    p, exact = sign_flip_p_value(np.full(100, 0.5), permutations=999)
    assert not exact and p == pytest.approx(1 / 1000)
    for bad in (0, 100_001, 1.5, True):
        with pytest.raises(ValueError):
            sign_flip_p_value(np.ones(3), permutations=bad)  # type: ignore[arg-type]


def test_paired_bootstrap_worked_vector() -> None:
    base, candidate = _fourteen_five()
    [k1] = paired_bootstrap(base[:, None], candidate[:, None], resamples=10_000, seed=0)
    diff = k1.difference
    assert diff.estimate == pytest.approx(0.045)
    # SE of the paired difference: 2.16 points, as in the worked case.
    assert diff.standard_error == pytest.approx(0.0216, abs=5e-5)
    # The paired bootstrap interval: roughly 0.5 to 9.0 points, excluding zero narrowly.
    assert 0.0 < diff.ci_low < 0.01 and 0.08 < diff.ci_high < 0.095
    assert k1.base.estimate == pytest.approx(0.475) and k1.candidate.estimate == pytest.approx(0.52)


def test_paired_bootstrap_uses_the_same_resamples_for_both_runs() -> None:
    rng = np.random.default_rng(1)
    base = rng.random((150, 2))
    candidate = np.clip(base + rng.normal(0.03, 0.05, (150, 2)), 0, 1)
    paired = paired_bootstrap(base, candidate, resamples=3000, seed=4, method="percentile")
    # The difference column's interval is the bootstrap of per-problem differences with the same seed...
    direct = bootstrap_means(np.hstack([base, candidate, candidate - base]), resamples=3000, seed=4,
                             method="percentile", bounded=np.array([True] * 4 + [False] * 2))
    for j in range(2):
        assert paired[j].difference == direct[4 + j]
        assert paired[j].base == direct[j] and paired[j].candidate == direct[2 + j]
        # ...and much narrower than two independent intervals would suggest (high correlation).
        independent = np.hypot(paired[j].base.standard_error, paired[j].candidate.standard_error)
        assert paired[j].difference.standard_error < independent / 3


def test_paired_bootstrap_identical_runs_and_bad_shapes() -> None:
    values = np.random.default_rng(0).random((30, 1))
    [same] = paired_bootstrap(values, values, resamples=100)
    assert (same.difference.estimate, same.difference.ci_low, same.difference.ci_high) == (0.0, None, None)
    assert same.difference.method_used == "none"  # no difference anywhere: no interval to resample
    with pytest.raises(ValueError):
        paired_bootstrap(values, values[:10], resamples=100)


def test_correlation_and_win_loss_tie() -> None:
    base, candidate = _fourteen_five()
    tally = win_loss_tie(base, candidate)
    assert (tally.wins, tally.losses, tally.ties) == (14, 5, 181)
    assert correlation(base, candidate) == pytest.approx(np.corrcoef(base, candidate)[0, 1])
    assert correlation(np.ones(5), np.arange(5.0)) is None
    assert correlation(np.array([1.0]), np.array([0.0])) is None
