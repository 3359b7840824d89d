"""Cost, latency, calibration, detectable difference and release clauses: exact values from the seeds, numpy/scipy checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from service.statistics.bootstrap import resample_means
from service.statistics.calibration import (
    brier_score,
    calibrated_baseline,
    calibration_bins,
    calibration_summary,
    ece,
    ece_from_bins,
    equal_count_bins,
    equal_width_bins,
    murphy_decomposition,
)
from service.statistics.operating import (
    SampleColumns,
    bootstrap_distribution,
    figures_from_distribution,
    incremental_cost_per_success,
    paired_figures,
    problem_sums,
    ratio_of_sums,
    woodruff_percentiles,
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
    latency[::50] = np.nan  # not sent
    problem = rng.integers(0, 40, 997)
    ours = [q.figure.estimate for q in woodruff_percentiles(problem, latency, 40, (0.5, 0.95, 0.99), confidence=0.95)]
    theirs = np.percentile(latency[~np.isnan(latency)], [50, 95, 99], method="inverted_cdf")
    np.testing.assert_array_equal(ours, theirs)


def _woodruff_by_hand(problem: np.ndarray, latency: np.ndarray, level: float) -> tuple[float, float, float]:
    """Woodruff's interval written out: per problem, its samples at or below the estimate, the linearised
    standard error of that share over problems, scipy's t quantile, numpy's inverted CDF at the shifted levels."""
    estimate = np.quantile(latency, level, method="inverted_cdf")
    problems = np.unique(problem)
    m, total = problems.size, latency.size
    # continuous values: the estimate is one sample; its problem counts the part of it that makes level x N
    part = level * total - np.sum(latency < estimate)
    deviations = [
        np.sum(latency[problem == p] < estimate) + part * np.sum(latency[problem == p] == estimate)
        - level * np.sum(problem == p)
        for p in problems
    ]
    se = np.sqrt(m / (m - 1) * np.sum(np.square(deviations))) / total
    t = stats.t.ppf(0.975, m - 1)
    low = np.quantile(latency, level - t * se, method="inverted_cdf")
    high = np.quantile(latency, level + t * se, method="inverted_cdf")
    return float(estimate), float(low), float(high)


@pytest.mark.parametrize("samples", [1, 10])
def test_woodruff_interval_against_a_computation_by_hand(samples: int) -> None:
    rng = np.random.default_rng(7)
    problem = np.repeat(np.arange(164), samples)
    latency = np.exp(0.6 * rng.standard_normal(164)[problem] + 0.4 * rng.standard_normal(problem.size))
    for q in woodruff_percentiles(problem, latency, 164, (0.5, 0.95), confidence=0.95):
        estimate, low, high = _woodruff_by_hand(problem, latency, q.level)
        assert (q.figure.estimate, q.figure.ci_low, q.figure.ci_high) == (estimate, low, high)
        assert q.figure.method_used == "woodruff" and q.figure.resamples == 0
        assert q.figure.standard_error == pytest.approx((high - low) / (2 * stats.t.ppf(0.975, 163)), rel=1e-12)


def test_woodruff_with_one_sample_per_problem_is_the_binomial_standard_error() -> None:
    # independent samples, the median of 400 (200 below it): the linearised variance of the share below is
    # sum (a_i - 1/2)^2 / N^2 = 1/4 / N, the binomial's, times m / (m - 1)
    rng = np.random.default_rng(8)
    latency = rng.exponential(500.0, 400)
    problem = np.arange(400)
    (q,) = woodruff_percentiles(problem, latency, 400, (0.5,), confidence=0.95)
    t = stats.t.ppf(0.975, 399)
    se = np.sqrt(0.5 * 0.5 / 400 * 400 / 399)
    assert q.figure.ci_low == np.quantile(latency, 0.5 - t * se, method="inverted_cdf")
    assert q.figure.ci_high == np.quantile(latency, 0.5 + t * se, method="inverted_cdf")


def test_woodruff_upper_bound_is_open_at_the_largest_value() -> None:
    # 40 problems x 1 sample: the p99 is the largest latency; the truth may lie beyond anything observed
    latency = np.random.default_rng(9).lognormal(6, 0.5, 40)
    (q,) = woodruff_percentiles(np.arange(40), latency, 40, (0.99,), confidence=0.95)
    assert q.figure.estimate == latency.max()
    assert q.figure.ci_high is None and q.figure.standard_error is None
    assert "beyond the largest value" in (q.figure.note or "") and "rough" in (q.figure.note or "")


def test_woodruff_without_samples_or_with_one_problem() -> None:
    (none,) = woodruff_percentiles(np.arange(3), np.full(3, np.nan), 3, (0.95,), confidence=0.95)
    assert none.figure.estimate is None and none.figure.note == "no sample"
    (one,) = woodruff_percentiles(np.zeros(5, dtype=np.intp), np.arange(5.0), 1, (0.5,), confidence=0.95)
    assert one.figure.estimate == 2.0 and one.figure.ci_low is None and "one problem" in (one.figure.note or "")


def _latency_columns(problem: np.ndarray, latency: np.ndarray) -> SampleColumns:
    nan = np.full(problem.size, np.nan)
    return SampleColumns(problem, np.zeros(problem.size), nan, latency, nan, nan, nan, nan)


def test_paired_p95_of_a_run_one_tenth_slower_everywhere() -> None:
    # Every latency 10 % longer: the ratio is exactly 1.1 on every problem, so its linearised interval has no
    # width, and the difference's standard error is 0.1 of the base's own.
    rng = np.random.default_rng(10)
    problem = np.repeat(np.arange(120), 5)
    latency = np.exp(0.6 * rng.standard_normal(120)[problem] + 0.4 * rng.standard_normal(problem.size))
    figures = paired_figures(_latency_columns(problem, latency), _latency_columns(problem, 1.1 * latency), 120)
    p95 = figures["latency_p95_ms"]
    assert p95.candidate.estimate == pytest.approx(1.1 * p95.base.estimate, rel=1e-12)
    assert p95.relative_difference.estimate == pytest.approx(0.1, rel=1e-12)
    assert p95.relative_difference.ci_low == pytest.approx(0.1, rel=1e-9)
    assert p95.relative_difference.ci_high == pytest.approx(0.1, rel=1e-9)
    assert p95.difference.method_used == "woodruff, linearised"
    assert p95.difference.standard_error == pytest.approx(0.1 * p95.base.standard_error, rel=1e-9)


def test_paired_p95_difference_is_narrower_than_two_separate_intervals() -> None:
    # A candidate that shares the problems' slowness: the shared part cancels in the difference.
    rng = np.random.default_rng(11)
    problem = np.repeat(np.arange(164), 10)
    level = 0.6 * rng.standard_normal(164)[problem]
    base = np.exp(level + 0.4 * rng.standard_normal(problem.size))
    candidate = np.exp(level + 0.1 + 0.4 * rng.standard_normal(problem.size))
    p95 = paired_figures(_latency_columns(problem, base), _latency_columns(problem, candidate), 164)["latency_p95_ms"]
    separate = np.hypot(p95.base.standard_error, p95.candidate.standard_error)
    assert p95.difference.standard_error < 0.8 * separate
    assert p95.difference.ci_low < p95.difference.estimate < p95.difference.ci_high


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


@pytest.mark.parametrize(("samples", "expected"), [(164, 0.078), (1640, 0.025)])
def test_a_perfectly_calibrated_model_shows_a_positive_ece(samples: int, expected: float) -> None:
    # Outcomes drawn as Bernoulli(f) from uniform confidences: the plug-in ECE is about 0.078 at N = 164 and
    # 0.025 at N = 1,640, though the truth is 0. The baseline passk serves beside it says the same, without drawing.
    rng = np.random.default_rng(samples)
    f = rng.random(samples)
    drawn = [ece(f, (rng.random(samples) < f).astype(float)) for _ in range(2000)]
    baseline = calibrated_baseline(f)
    assert np.mean(drawn) == pytest.approx(expected, abs=0.006)
    assert baseline.expected == pytest.approx(np.mean(drawn), rel=0.06)
    assert baseline.high == pytest.approx(np.quantile(drawn, 0.95), rel=0.08)


def test_ece_is_labelled_biased_with_an_interval_over_problems() -> None:
    rng = np.random.default_rng(13)
    row = np.repeat(np.arange(164), 10)
    p = rng.beta(0.5, 0.5, 164)
    passed = (rng.random(row.size) < p[row]).astype(float)
    overconfident = np.clip(p[row] * 1.6, 0, 1)
    summary = calibration_summary(row, overconfident, passed, 164, resamples=2000)
    assert summary is not None and summary.ece is not None
    e = summary.ece
    assert e.estimate == summary.ece_equal_width and "BIASED" in e.label
    assert e.interval.method_used == "basic bootstrap" and e.interval.resamples == 2000
    assert 0 < e.interval.ci_low < e.estimate < e.interval.ci_high
    assert e.estimate > e.calibrated.high  # far from what noise alone gives
    # A calibrated model: its ECE is within the noise, so the interval reaches down to 0 and says why.
    honest = calibration_summary(row, p[row], passed, 164, resamples=2000)
    assert honest is not None and honest.ece is not None
    assert honest.ece.interval.ci_low == 0.0 and "perfectly calibrated" in (honest.ece.interval.note or "")


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
    assert result.label.startswith("planning figure") and "not a test" in result.label and "80%" in result.label
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
