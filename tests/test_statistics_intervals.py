"""Interval methods: BCa against scipy, percentile, the fallbacks, Wilson."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from service.statistics import (
    bootstrap_means,
    per_problem_estimates,
    resample_means,
    wilson_interval,
)
from service.statistics.intervals import (
    exact_boundary_interval,
    mean_accelerations,
    sorted_quantiles,
)


def _scipy_interval(column: np.ndarray, distribution: np.ndarray, method: str, confidence: float) -> tuple[float, float]:
    """scipy.stats.bootstrap on our own bootstrap distribution (n_resamples=0 reuses it), then stretched about the
    mean by sqrt(m / (m - 1)): the bootstrap distribution of a mean of m values is that much narrower than the
    standard error s / sqrt(m). BCa's levels do not change under that stretch (it keeps every resample on its side
    of the estimate, and the acceleration comes from the data), so the bounds stretch with it."""
    result = stats.bootstrap(
        (column,), np.mean, n_resamples=0, bootstrap_result=SimpleNamespace(bootstrap_distribution=distribution),
        method=method, confidence_level=confidence,
    )
    mean, factor = column.mean(), np.sqrt(column.size / (column.size - 1))
    low, high = result.confidence_interval.low, result.confidence_interval.high
    return float(mean + factor * (low - mean)), float(mean + factor * (high - mean))


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_bca_matches_scipy_on_the_same_resamples(confidence: float) -> None:
    rng = np.random.default_rng(3)
    # Continuous, skewed columns (no ties with the estimate): scipy's BCa and ours must agree.
    values = np.column_stack([rng.beta(0.5, 1.5, 164), rng.random(164) ** 3, rng.beta(0.3, 0.3, 164)])
    ours = bootstrap_means(values, resamples=4000, seed=1, confidence=confidence)
    distribution = resample_means(values, resamples=4000, seed=1)
    for j, interval in enumerate(ours):
        low, high = _scipy_interval(values[:, j], distribution[:, j], "BCa", confidence)
        assert interval.method_used == "bca"
        assert interval.ci_low == pytest.approx(low, rel=1e-12, abs=1e-15)
        assert interval.ci_high == pytest.approx(high, rel=1e-12, abs=1e-15)


def test_percentile_matches_scipy_on_the_same_resamples() -> None:
    values = np.random.default_rng(4).random((100, 2))
    ours = bootstrap_means(values, resamples=3000, seed=2, method="percentile")
    distribution = resample_means(values, resamples=3000, seed=2)
    for j, interval in enumerate(ours):
        low, high = _scipy_interval(values[:, j], distribution[:, j], "percentile", 0.95)
        assert (interval.ci_low, interval.ci_high) == pytest.approx((low, high), rel=1e-12)


def test_analytic_jackknife_acceleration_equals_the_full_jackknife() -> None:
    values = np.random.default_rng(5).beta(0.4, 2.0, (50, 1))
    x = values[:, 0]
    leave_one_out = np.array([np.delete(x, i).mean() for i in range(x.size)])
    u = leave_one_out.mean() - leave_one_out
    expected = np.sum(u**3) / (6 * np.sum(u**2) ** 1.5)
    assert mean_accelerations(values)[0] == pytest.approx(expected, rel=1e-10)


def test_bca_shifts_a_skewed_interval_the_way_skew_demands() -> None:
    # pass@k of a hard benchmark: most problems 0, a few high. Right skew pulls BCa up.
    values = np.zeros((200, 1))
    values[:12, 0] = np.linspace(0.3, 1.0, 12)
    bca = bootstrap_means(values, resamples=5000, seed=0)[0]
    pct = bootstrap_means(values, resamples=5000, seed=0, method="percentile")[0]
    assert bca.ci_low > pct.ci_low and bca.ci_high > pct.ci_high


def test_ties_with_the_estimate_do_not_depend_on_rounding() -> None:
    # k = 1 values on a c/n grid: many resampled means equal the estimate in exact arithmetic.
    rng = np.random.default_rng(3)
    ns = np.full(164, 20)
    pass_at, _ = per_problem_estimates(ns, rng.binomial(20, rng.beta(0.5, 1.5, 164)), [1])
    alone = bootstrap_means(pass_at, resamples=5000, seed=1)[0]
    permuted = bootstrap_means(pass_at[::-1].copy(), resamples=5000, seed=1)[0]
    # Different row order = different resamples, but the estimate is the same and both are BCa.
    assert alone.estimate == pytest.approx(permuted.estimate, rel=1e-14)
    assert alone.method_used == permuted.method_used == "bca"


def test_same_seed_same_interval_different_seed_different_interval() -> None:
    values = np.random.default_rng(9).random((80, 3))
    first = bootstrap_means(values, resamples=2000, seed=123)
    assert first == bootstrap_means(values, resamples=2000, seed=123)
    assert first != bootstrap_means(values, resamples=2000, seed=124)


def test_two_problems_every_method_gives_a_defined_interval() -> None:
    for method in ("bca", "percentile"):
        [interval] = bootstrap_means(np.array([[0.0], [1.0]]), resamples=500, method=method)  # type: ignore[arg-type]
        assert interval.estimate == 0.5
        assert 0.0 <= interval.ci_low <= interval.ci_high <= 1.0
        assert interval.method_used in ("bca", "percentile")


def test_bca_falls_back_to_percentile_when_undefined_and_says_why() -> None:
    # One resample: the single bootstrap mean lies on one side of (or at) the estimate, z0 is infinite.
    [interval] = bootstrap_means(np.array([[0.0], [0.2], [1.0]]), resamples=1, seed=3)
    assert interval.method == "bca"
    assert interval.method_used == "percentile"
    assert "BCa undefined" in (interval.fallback_reason or "")


@pytest.mark.parametrize(("problems", "expected_low"), [(1, 0.025), (164, 0.977758), (300, 0.987779)])
def test_exact_bound_when_all_solved(problems: int, expected_low: float) -> None:
    low, high = exact_boundary_interval(1.0, problems, 0.95)
    assert high == 1.0 and low == pytest.approx(expected_low, abs=1e-6)
    # It is the Clopper-Pearson interval of problems successes out of problems trials.
    ci = stats.binomtest(problems, problems).proportion_ci(0.95, method="exact")
    assert low == pytest.approx(ci.low, rel=1e-9)
    low0, high0 = exact_boundary_interval(0.0, problems, 0.95)
    assert (low0, high0) == (0.0, pytest.approx(1 - expected_low, abs=1e-6))


def test_all_solved_none_solved_and_single_problem_fall_back() -> None:
    solved = bootstrap_means(np.ones((40, 2)), resamples=200)
    none = bootstrap_means(np.zeros((40, 1)), resamples=200)
    single = bootstrap_means(np.array([[0.4]]), resamples=200)
    for interval in solved:
        assert (interval.estimate, interval.ci_high, interval.method_used) == (1.0, 1.0, "clopper-pearson")
        assert interval.ci_low == pytest.approx(0.025 ** (1 / 40))
    assert (none[0].ci_low, none[0].method_used) == (0.0, "clopper-pearson")
    assert none[0].ci_high == pytest.approx(1 - 0.025 ** (1 / 40))
    # no bounds at all rather than a zero-width "interval"
    assert (single[0].estimate, single[0].ci_low, single[0].ci_high, single[0].method_used) == (0.4, None, None, "none")
    assert "single problem" in (single[0].fallback_reason or "")


def test_sorted_quantiles_is_numpys_linear_quantile() -> None:
    x = np.sort(np.random.default_rng(1).random(1001))
    probabilities = np.array([0.0, 0.025, 0.5, 0.975, 1.0, 0.0001])
    assert sorted_quantiles(x, probabilities) == pytest.approx(np.quantile(x, probabilities), rel=1e-15)


def test_wilson_interval_worked_vector() -> None:
    low, high = wilson_interval(48, 60, 0.95)
    assert (round(low, 3), round(high, 3)) == (0.682, 0.882)
    # The seed's formula, by hand.
    z, p, n = 1.959963984540054, 0.8, 60
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (low, high) == pytest.approx((centre - half, centre + half), rel=1e-12)


def test_effective_problems_exact_values_and_warning() -> None:
    # (sum x)^2 / sum x^2: 164 equal scores -> 164; four problems at 1 and 160 at 0 -> 4; 1, 1/2, 1/2 -> 16/6.
    values = np.zeros((164, 3))
    values[:, 0] = 0.4
    values[:4, 1] = 1.0
    values[:3, 2] = [1.0, 0.5, 0.5]
    values[3:, 2] = 0.0
    spread, four, three = bootstrap_means(values, resamples=500)
    assert spread.effective_problems == pytest.approx(164.0, rel=1e-12) and spread.warning is None
    assert four.effective_problems == pytest.approx(4.0, rel=1e-12)
    assert three.effective_problems == pytest.approx(16 / 6, rel=1e-12)
    assert "about 4.0 problems" in (four.warning or "") and "under 30" in (four.warning or "")
    (none,) = bootstrap_means(np.zeros((50, 1)), resamples=100)  # nobody solves anything: no such number
    assert none.effective_problems is None and none.warning is None
    # a paired difference is not a score: no effective number
    (difference,) = bootstrap_means(np.linspace(-0.5, 0.5, 60)[:, None], resamples=100, bounded=False)
    assert difference.effective_problems is None


def test_pass_hat_100_of_a_long_tailed_run_is_warned_about() -> None:
    # pass^100 at n = 200 with Beta(0.5, 0.8) difficulties: a handful of problems carry it.
    rng = np.random.default_rng(12)
    ns = np.full(164, 200)
    _, hat = per_problem_estimates(ns, rng.binomial(200, rng.beta(0.5, 0.8, 164)), [100])
    (interval,) = bootstrap_means(hat, resamples=1000)
    assert interval.effective_problems < 10 and interval.warning


def test_exact_bounds_and_no_interval_carry_no_standard_error() -> None:
    ones, flat = bootstrap_means(np.column_stack([np.ones(40), np.full(40, 0.5)]), resamples=100)
    assert ones.method_used == "clopper-pearson" and ones.standard_error is None and ones.standard_error_note
    assert flat.method_used == "none" and flat.standard_error is None and flat.standard_error_note
