"""Cost, latency, calibration, detectable difference and release clauses: exact values from the seeds, numpy/scipy checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.statistics.bootstrap import resample_means
from service.statistics.calibration import (
    brier_score,
    calibration_bins,
    ece,
    ece_from_bins,
    equal_count_bins,
    equal_width_bins,
    murphy_decomposition,
)
from service.statistics.operating import (
    PooledValues,
    bootstrap_distribution,
    figures_from_distribution,
    incremental_cost_per_success,
    problem_sums,
    ratio_of_sums,
    weighted_percentiles,
)
from service.statistics.power import detectability, minimum_detectable_difference, problems_needed
from service.statistics.release import Bound, ReleaseVerdict, combine, judge

# --- seed 004: cost -----------------------------------------------------------------------------------


def test_cost_per_success_is_total_cost_over_passes_seed_004() -> None:
    # 50 problems x 2 samples at $0.012 each, 82 of the 100 pass: 0.012 / 0.82 = 0.0146 per success.
    problem = np.repeat(np.arange(50), 2)
    passed = np.zeros(100)
    passed[:82] = 1
    cost = np.full(100, 0.012)
    cost_sum, _ = problem_sums(problem, cost, 50)
    passes, _ = problem_sums(problem, passed, 50)
    estimate, _ = bootstrap_distribution(50, ratio_of_sums(cost_sum, passes), resamples=10, seed=0)
    assert estimate[0] == pytest.approx(0.012 / 0.82, rel=1e-12)
    assert round(float(estimate[0]), 4) == 0.0146


def test_price_of_an_extra_success_seed_004() -> None:
    # A to B: 4 points more success for $0.019 more per request: $0.475 per extra success.
    assert incremental_cost_per_success(0.012, 0.82, 0.031, 0.86) == pytest.approx(0.475, rel=1e-9)
    assert incremental_cost_per_success(0.01, 0.5, 0.02, 0.5) is None


def test_figures_share_the_resampled_problems_of_pass_at_k() -> None:
    # A per-problem mean written as a ratio of sums (sum x / number of problems) must reproduce
    # pass@k's own bootstrap distribution bit for bit: same seed, same index matrix.
    rng = np.random.default_rng(5)
    x = rng.random(37)
    _, ours = bootstrap_distribution(37, ratio_of_sums(x, np.ones(37)), resamples=3000, seed=11)
    theirs = resample_means(x[:, None], resamples=3000, seed=11)
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], rtol=1e-12)


def test_ratio_interval_undefined_without_passes() -> None:
    estimate, dist = bootstrap_distribution(
        4, ratio_of_sums(np.ones(4), np.zeros(4)), resamples=200, seed=0
    )
    (figure,) = figures_from_distribution(estimate, dist, confidence=0.95, undefined="no pass")
    assert figure.estimate is None and figure.ci_low is None and figure.note == "no pass"


def test_ratio_interval_unbounded_when_some_resamples_have_no_pass() -> None:
    # one problem of 5 holds the only pass: ~1/3 of resamples miss it, cost per success is infinite there
    cost = np.ones(5)
    passes = np.array([1.0, 0, 0, 0, 0])
    estimate, dist = bootstrap_distribution(5, ratio_of_sums(cost, passes), resamples=2000, seed=0)
    (figure,) = figures_from_distribution(estimate, dist, confidence=0.95, undefined="no pass")
    assert figure.estimate == 5.0 and figure.ci_high is None and figure.ci_low is not None
    assert "resamples: no pass" in (figure.note or "")


# --- latency percentiles -----------------------------------------------------------------------------


def test_percentiles_match_numpy_inverted_cdf() -> None:
    rng = np.random.default_rng(1)
    latency = rng.lognormal(6, 0.7, 997)
    problem = rng.integers(0, 40, 997)
    pooled = PooledValues.of(problem, latency)
    ours = weighted_percentiles(pooled, np.arange(40)[None, :], 40)[0]
    theirs = np.percentile(latency, [50, 95, 99], method="inverted_cdf")
    np.testing.assert_array_equal(ours, theirs)


def test_percentiles_of_a_resample_weigh_repeated_problems() -> None:
    rng = np.random.default_rng(2)
    latency = rng.exponential(800, 300)
    problem = rng.integers(0, 12, 300)
    pooled = PooledValues.of(problem, latency)
    idx = rng.integers(0, 12, size=(25, 12))
    ours = weighted_percentiles(pooled, idx, 12)
    for row, drawn in zip(ours, idx, strict=True):
        repeated = np.concatenate([latency[problem == p] for p in drawn])
        np.testing.assert_array_equal(row, np.percentile(repeated, [50, 95, 99], method="inverted_cdf"))


def test_percentile_figures_have_intervals_that_cover_the_estimate() -> None:
    rng = np.random.default_rng(3)
    latency = rng.lognormal(6, 0.5, 2000)
    problem = np.repeat(np.arange(200), 10)
    pooled = PooledValues.of(problem, latency)
    estimate, dist = bootstrap_distribution(
        200, lambda idx: weighted_percentiles(pooled, idx, 200), resamples=1000, seed=0
    )
    figures = figures_from_distribution(estimate, dist, confidence=0.95)
    assert [f.estimate for f in figures] == list(np.percentile(latency, [50, 95, 99], method="inverted_cdf"))
    for f in figures:
        assert f.ci_low < f.estimate < f.ci_high and f.standard_error > 0


# --- calibration ---------------------------------------------------------------------------------------


def test_brier_seed_examples() -> None:
    assert brier_score(np.full(8, 0.5), np.array([0, 1] * 4)) == 0.25  # seed 002: always 0.5 scores 0.25
    assert brier_score(np.array([0.99]), np.array([0])) == pytest.approx(0.9801)  # seed 000: ~0.98
    assert brier_score(np.array([1.0, 0.0]), np.array([1, 0])) == 0.0


def test_murphy_terms_add_up_exactly_on_distinct_forecast_values() -> None:
    # seeds 000 (eq. 11) and 002: grouped by forecast value, BS = REL - RES + UNC exactly
    rng = np.random.default_rng(4)
    f = rng.choice([0.1, 0.3, 0.55, 0.8, 0.95], size=5000)
    o = (rng.random(5000) < f**1.3).astype(float)
    m = murphy_decomposition(f, o)
    assert m.within_bin_variance == 0.0 and m.within_bin_covariance == 0.0 and m.groups == 5
    assert m.reliability - m.resolution + m.uncertainty == pytest.approx(brier_score(f, o), abs=1e-14)
    assert m.uncertainty == pytest.approx(o.mean() * (1 - o.mean()), abs=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_murphy_terms_add_up_on_random_data_binned(seed: int) -> None:
    rng = np.random.default_rng(seed)
    f = rng.random(3000)
    o = (rng.random(3000) < f).astype(float)
    m = murphy_decomposition(f, o, equal_width_bins(f, 10))
    assert m.total == pytest.approx(m.brier, abs=1e-14)
    assert m.brier == pytest.approx(np.mean((f - o) ** 2), abs=1e-15)
    assert m.reliability < 0.01  # calibrated by construction
    # scipy: uncertainty is the (population) variance of the outcomes
    assert m.uncertainty == pytest.approx(float(np.var(o)), abs=1e-14)


def test_ece_seed_002_worked_example() -> None:
    assert ece_from_bins([10, 30, 60], [0.55, 0.75, 0.95], [0.4, 0.7, 0.83]) == pytest.approx(0.102, abs=1e-12)
    # The same from samples: 50 / 150 / 300 samples at 0.55 / 0.75 / 0.95 with 20 / 105 / 249 correct.
    f = np.array([0.55] * 50 + [0.75] * 150 + [0.95] * 300)
    o = np.array([1] * 20 + [0] * 30 + [1] * 105 + [0] * 45 + [1] * 249 + [0] * 51, dtype=float)
    assert ece(f, o, bins=10) == pytest.approx(0.102, abs=1e-12)
    # three equal-count bins here are not the seed's bins (sizes 167 each): a different number
    assert ece(f, o, bins=3, binning="equal_count") != pytest.approx(0.102, abs=1e-3)


def test_equal_width_bins_edges_and_equal_count_sizes() -> None:
    f = np.array([0.0, 0.1, 0.2, 0.3, 0.6, 0.7, 0.9, 0.999, 1.0])
    assert equal_width_bins(f, 10).tolist() == [0, 1, 2, 3, 6, 7, 9, 9, 9]
    sizes = np.bincount(equal_count_bins(np.random.default_rng(0).random(103), 10))
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == 103
    table = calibration_bins(f, np.ones(9), bins=10)
    assert [b.count for b in table] == [1, 1, 1, 1, 0, 0, 1, 1, 0, 3]
    assert table[4].mean_confidence is None


def test_calibration_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        brier_score(np.array([1.2]), np.array([1]))
    with pytest.raises(ValueError, match="bins"):
        ece(np.array([0.2]), np.array([1]), bins=0)


# --- minimum detectable difference (seed 004) ------------------------------------------------------------


def test_mdd_seed_004_figures() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.80)
    assert z == pytest.approx(2.8016, abs=1e-4)  # the seed's "2.8"
    at_100 = minimum_detectable_difference(0.15, 100)
    at_500 = minimum_detectable_difference(0.15, 500)
    at_1000 = minimum_detectable_difference(0.15, 1000)
    assert at_100 == pytest.approx(z * np.sqrt(0.15 / 100), rel=1e-12)
    # the seed rounds the multiplier to 2.8: 10.8, 4.8 and 3.4 points
    assert round(2.8 * np.sqrt(0.15 / 100) * 100, 1) == 10.8
    assert round(2.8 * np.sqrt(0.15 / 500) * 100, 1) == 4.8
    assert at_100 * 100 == pytest.approx(10.8, abs=0.06)
    assert at_500 * 100 == pytest.approx(4.8, abs=0.06)
    assert round(at_1000 * 100, 1) == 3.4


def test_fourteen_five_detectability() -> None:
    # 200 problems, 14 wins, 5 losses, 181 ties: +4.5 points, d = 19/200
    x = np.array([1.0] * 14 + [-1.0] * 5 + [0.0] * 181)
    result = detectability(x)
    assert result.discordance == pytest.approx(0.095)
    assert result.observed_difference == pytest.approx(0.045)
    assert round(result.standard_error * 100, 2) == 2.16  # the seed's normal-approximation SE
    low = result.observed_difference - 1.96 * result.standard_error
    high = result.observed_difference + 1.96 * result.standard_error
    assert (round(low * 100, 1), round(high * 100, 1)) == (0.3, 8.7)
    assert round(result.minimum_detectable_difference * 100, 1) == 6.1
    assert not result.detectable
    # (2.8016)^2 * 0.095 / 0.045^2 = 368.2 -> 369 problems, 169 more
    assert result.problems_needed == 369 and result.more_problems_needed == 169
    assert problems_needed(0.095, 0.0) is None


# --- release clauses --------------------------------------------------------------------------------------


def test_release_clause_verdicts() -> None:
    # "pass@1 must not drop by more than 1 point": a LOWER bound of -0.01 on the paired difference
    assert judge(Bound.LOWER, -0.01, -0.005, 0.03) is ReleaseVerdict.PASS
    assert judge(Bound.LOWER, -0.01, -0.08, -0.02) is ReleaseVerdict.FAIL
    assert judge(Bound.LOWER, -0.01, -0.04, 0.02) is ReleaseVerdict.NOT_ENOUGH_DATA
    # "p95 under 2.5 s": an UPPER bound on the candidate's p95
    assert judge(Bound.UPPER, 2500, 1800, 2400) is ReleaseVerdict.PASS
    assert judge(Bound.UPPER, 2500, 2600, 3100) is ReleaseVerdict.FAIL
    assert judge(Bound.UPPER, 2500, 2300, None) is ReleaseVerdict.NOT_ENOUGH_DATA
    assert combine([ReleaseVerdict.PASS, ReleaseVerdict.NOT_ENOUGH_DATA]) is ReleaseVerdict.NOT_ENOUGH_DATA
    assert combine([ReleaseVerdict.NOT_ENOUGH_DATA, ReleaseVerdict.FAIL]) is ReleaseVerdict.FAIL
    assert combine([ReleaseVerdict.PASS] * 3) is ReleaseVerdict.PASS


def test_the_rank_grid_for_large_pools_gives_the_same_percentiles(monkeypatch: pytest.MonkeyPatch) -> None:
    # Large pools go through a grid of ranks and one bracket per row; it must equal the direct walk exactly,
    # ties included, for every percentile level.
    from service.statistics import operating

    rng = np.random.default_rng(6)
    for problems, samples in ((60, 30), (400, 50)):
        row = np.repeat(np.arange(problems), samples)
        latency = rng.integers(0, 300, problems * samples).astype(float)  # many ties
        idx = rng.integers(0, problems, size=(150, problems))
        levels = (0.0001, 0.5, 0.95, 0.99, 1.0)
        monkeypatch.setattr(operating, "_DIRECT_SAMPLES", 10**9)
        direct = weighted_percentiles(PooledValues.of(row, latency), idx, problems, levels)
        monkeypatch.setattr(operating, "_DIRECT_SAMPLES", 0)
        pooled = PooledValues.of(row, latency)
        assert pooled.grid(problems) is not None
        np.testing.assert_array_equal(weighted_percentiles(pooled, idx, problems, levels), direct)
