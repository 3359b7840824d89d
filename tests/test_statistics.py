"""Tests for service.statistics: exact estimator values and bootstrap behaviour."""

from __future__ import annotations

import pickle
import random
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from service.statistics import (
    Interval,
    KTooLarge,
    bootstrap_means,
    pass_at_k,
    pass_hat_k,
    per_problem_estimates,
    plugin_pass_at_k,
)


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    # math.comb(a, b) is 0 when b > a, which is exactly the "n - c < k" case.
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def exact_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(comb(c, k), comb(n, k))


def close(expected: Fraction | float) -> object:
    # abs=0 so tiny values (pass^k can be ~1e-17) are checked relatively too.
    return pytest.approx(float(expected), rel=1e-12, abs=0)


# --- scalar estimators: worked values ---------------------------------------


@pytest.mark.parametrize(
    ("k", "expected"),
    [(1, Fraction(3, 10)), (3, 1 - Fraction(35, 120)), (5, 1 - Fraction(21, 252))],
)
def test_pass_at_k_worked_example(k: int, expected: Fraction) -> None:
    assert pass_at_k(10, 3, k) == close(expected)
    assert pass_at_k(10, 3, k) == close(exact_pass_at_k(10, 3, k))


def test_pass_at_k_worked_values_as_decimals() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3, rel=1e-12)
    assert pass_at_k(10, 3, 3) == pytest.approx(0.7083333333333334, rel=1e-12)
    assert pass_at_k(10, 3, 5) == pytest.approx(0.9166666666666666, rel=1e-12)


@pytest.mark.parametrize(
    ("k", "expected"),
    [(1, Fraction(3, 10)), (2, Fraction(1, 15)), (3, Fraction(1, 120))],
)
def test_pass_hat_k_worked_example(k: int, expected: Fraction) -> None:
    assert pass_hat_k(10, 3, k) == close(expected)
    assert pass_hat_k(10, 3, k) == close(exact_pass_hat_k(10, 3, k))


def test_single_success_in_200_gives_k_over_n() -> None:
    assert pass_at_k(200, 1, 100) == 0.5


def test_no_successes_gives_zero() -> None:
    for k in (1, 5, 10):
        assert pass_at_k(10, 0, k) == 0.0
        assert pass_hat_k(10, 0, k) == 0.0


def test_all_successes_gives_one() -> None:
    for k in (1, 5, 10):
        assert pass_at_k(10, 10, k) == 1.0
        assert pass_hat_k(10, 10, k) == 1.0


def test_fewer_failures_than_k_gives_exactly_one() -> None:
    # n - c = 2 failures < k = 3: every 3-subset contains a pass.
    assert pass_at_k(10, 8, 3) == 1.0
    assert pass_at_k(5, 4, 2) == 1.0


def test_fewer_successes_than_k_gives_exactly_zero() -> None:
    assert pass_hat_k(10, 2, 3) == 0.0
    assert pass_hat_k(200, 99, 100) == 0.0


def test_k_equals_n() -> None:
    assert pass_at_k(10, 1, 10) == 1.0
    assert pass_at_k(10, 0, 10) == 0.0
    assert pass_hat_k(10, 9, 10) == 0.0
    assert pass_hat_k(10, 10, 10) == 1.0


def test_property_product_form_matches_exact_fraction() -> None:
    rng = random.Random(20240601)
    for _ in range(3000):
        n = rng.randint(1, 60)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        assert pass_at_k(n, c, k) == close(exact_pass_at_k(n, c, k)), (n, c, k)
        assert pass_hat_k(n, c, k) == close(exact_pass_hat_k(n, c, k)), (n, c, k)


def test_large_n_does_not_overflow() -> None:
    # C(5000, 2500) is far beyond float range; the product form is not.
    assert pass_at_k(5000, 10, 2500) == close(exact_pass_at_k(5000, 10, 2500))
    assert pass_hat_k(5000, 4000, 50) == close(exact_pass_hat_k(5000, 4000, 50))


def test_plugin_is_biased_low_against_unbiased() -> None:
    p = Fraction(3, 10)
    assert plugin_pass_at_k(10, 3, 1) == pytest.approx(0.3, rel=1e-12)
    assert plugin_pass_at_k(10, 3, 3) == close(1 - (1 - p) ** 3)
    assert plugin_pass_at_k(10, 3, 3) < pass_at_k(10, 3, 3)


# --- validation -------------------------------------------------------------


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k, plugin_pass_at_k])
@pytest.mark.parametrize(
    ("n", "c", "k"),
    [(0, 0, 1), (-1, 0, 1), (10, -1, 1), (10, 11, 1), (10, 3, 0), (10, 3, -2)],
)
def test_invalid_input_raises_value_error(fn, n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        fn(n, c, k)


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k, plugin_pass_at_k])
def test_k_greater_than_n_raises_instead_of_returning_one(fn) -> None:
    with pytest.raises(KTooLarge) as info:
        fn(10, 9, 11)
    assert info.value.k == 11
    assert info.value.min_n == 10
    assert isinstance(info.value, ValueError)
    assert "choose k <= 10" in str(info.value)


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_non_integer_input_is_rejected(fn) -> None:
    with pytest.raises(TypeError):
        fn(10.0, 3, 1)
    with pytest.raises(TypeError):
        fn(10, True, 1)


def test_numpy_integers_are_accepted() -> None:
    assert pass_at_k(np.int64(10), np.int32(3), np.int64(3)) == close(exact_pass_at_k(10, 3, 3))


# --- per_problem_estimates --------------------------------------------------


def test_per_problem_unequal_n_too_large_k_names_k_n_and_problems() -> None:
    ns = np.array([50, 20, 30, 20])
    cs = np.array([5, 2, 3, 20])
    ids = ["HumanEval/0", "HumanEval/3", "HumanEval/7", "HumanEval/9"]
    with pytest.raises(KTooLarge) as info:
        per_problem_estimates(ns, cs, [1, 25, 100], problem_ids=ids)
    err = info.value
    assert err.k == 100  # the largest offending k
    assert err.min_n == 20
    assert err.problem_ids == ("HumanEval/3", "HumanEval/9")
    message = str(err)
    assert message.startswith(
        "k=100 exceeds the smallest number of samples per problem (n=20, e.g. problem 'HumanEval/3'"
    )
    assert message.endswith("choose k <= 20")


def test_per_problem_too_large_k_without_ids_uses_positions() -> None:
    with pytest.raises(KTooLarge) as info:
        per_problem_estimates(np.array([30, 20]), np.array([1, 1]), [21])
    assert info.value.problem_ids == ("#1",)
    assert info.value.k == 21


def test_k_too_large_exact_message_and_pickling() -> None:
    err = KTooLarge(100, 20, ["HumanEval/3"])
    assert str(err) == (
        "k=100 exceeds the smallest number of samples per problem "
        "(n=20, e.g. problem 'HumanEval/3'); choose k <= 20"
    )
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.k, clone.min_n, clone.problem_ids) == (100, 20, ("HumanEval/3",))
    assert str(clone) == str(err)


def test_per_problem_unequal_n_values_and_mean() -> None:
    ns = np.array([10, 200, 20, 15, 12])
    cs = np.array([3, 1, 0, 15, 11])
    ks = [1, 3, 10]
    at, hat = per_problem_estimates(ns, cs, ks)
    assert at.shape == hat.shape == (5, 3)
    assert at.dtype == hat.dtype == np.float64
    for i, (n, c) in enumerate(zip(ns.tolist(), cs.tolist(), strict=True)):
        for j, k in enumerate(ks):
            assert at[i, j] == close(exact_pass_at_k(n, c, k)), (n, c, k)
            assert hat[i, j] == close(exact_pass_hat_k(n, c, k)), (n, c, k)
    # Hand-computed pass@3 over the five problems:
    # 1 - 35/120, 1 - C(199,3)/C(200,3) = 3/200, 0, 1, 1.
    expected_mean = (1 - Fraction(35, 120) + Fraction(3, 200) + 0 + 1 + 1) / 5
    assert at[:, 1].mean() == close(expected_mean)
    # pass^3: 1/120, 0, 0, 1, C(11,3)/C(12,3) = 165/220.
    expected_hat_mean = (Fraction(1, 120) + 0 + 0 + 1 + Fraction(165, 220)) / 5
    assert hat[:, 1].mean() == close(expected_hat_mean)


def test_per_problem_boundaries_are_exact() -> None:
    at, hat = per_problem_estimates(np.array([10, 10, 10]), np.array([0, 10, 8]), [3, 10])
    assert at[0].tolist() == [0.0, 0.0]
    assert hat[0].tolist() == [0.0, 0.0]
    assert at[1].tolist() == [1.0, 1.0]
    assert hat[1].tolist() == [1.0, 1.0]
    assert at[2].tolist() == [1.0, 1.0]  # n - c = 2 < k
    assert hat[2, 1] == 0.0  # c = 8 < k = 10
    # One pass in 200 gives exactly k/n: the shorter (c-factor, Codex) product is used.
    at_half, hat_half = per_problem_estimates(np.array([200, 200]), np.array([1, 199]), [100])
    assert at_half[0, 0] == 0.5
    assert hat_half[1, 0] == 0.5  # C(199, 100)/C(200, 100) = 100/200, by the mirrored form


def test_per_problem_matches_scalar_functions_on_random_input() -> None:
    rng = np.random.default_rng(7)
    ns = rng.integers(5, 61, size=300)
    cs = np.array([rng.integers(0, n + 1) for n in ns])
    ks = [1, 2, 5]
    at, hat = per_problem_estimates(ns, cs, ks)
    for i, (n, c) in enumerate(zip(ns.tolist(), cs.tolist(), strict=True)):
        for j, k in enumerate(ks):
            assert at[i, j] == close(exact_pass_at_k(n, c, k))
            assert at[i, j] == close(pass_at_k(n, c, k))
            assert hat[i, j] == close(exact_pass_hat_k(n, c, k))
            assert hat[i, j] == pass_hat_k(n, c, k)  # same factor order


def test_per_problem_large_k_chunks_correctly() -> None:
    # kmax large enough that rows are processed in several chunks.
    ns = np.full(40, 5000)
    cs = np.arange(0, 4000, 100)
    at, hat = per_problem_estimates(ns, cs, [1, 4000])
    for i, c in enumerate(cs.tolist()):
        assert at[i, 0] == close(Fraction(c, 5000))
        assert at[i, 1] == close(exact_pass_at_k(5000, c, 4000))
        assert hat[i, 0] == close(Fraction(c, 5000))


def test_per_problem_accepts_integral_floats_and_lists() -> None:
    at, _ = per_problem_estimates([10.0, 20.0], [3.0, 4.0], (1,))
    assert at[:, 0] == pytest.approx([0.3, 0.2], rel=1e-12)


@pytest.mark.parametrize(
    ("ns", "cs", "ks", "ids"),
    [
        ([], [], [1], None),
        ([10, 10], [1], [1], None),
        ([10], [11], [1], None),
        ([10], [-1], [1], None),
        ([0], [0], [1], None),
        ([10], [3], [], None),
        ([10], [3], [0], None),
        ([10.5], [3], [1], None),
        ([[10]], [[3]], [1], None),
        ([10, 10], [1, 2], [1], ["only-one"]),
    ],
)
def test_per_problem_invalid_input(ns, cs, ks, ids) -> None:
    with pytest.raises(ValueError):
        per_problem_estimates(np.asarray(ns), np.asarray(cs), ks, problem_ids=ids)


# --- bootstrap --------------------------------------------------------------


@pytest.fixture
def curve() -> np.ndarray:
    rng = np.random.default_rng(3)
    ns = np.full(400, 20)
    cs = rng.binomial(20, rng.beta(0.5, 1.5, size=400))
    at, _ = per_problem_estimates(ns, cs, [1, 5, 10])
    return at


def test_bootstrap_same_seed_is_reproducible(curve: np.ndarray) -> None:
    first = bootstrap_means(curve, resamples=2000, seed=11)
    assert first == bootstrap_means(curve, resamples=2000, seed=11)


def test_bootstrap_different_seed_differs(curve: np.ndarray) -> None:
    a = bootstrap_means(curve, resamples=2000, seed=1)
    b = bootstrap_means(curve, resamples=2000, seed=2)
    assert [i.ci_low for i in a] != [i.ci_low for i in b]
    assert [i.estimate for i in a] == [i.estimate for i in b]


def test_bootstrap_fields(curve: np.ndarray) -> None:
    intervals = bootstrap_means(curve, resamples=3000, confidence=0.9, seed=0)
    assert len(intervals) == 3
    for j, iv in enumerate(intervals):
        assert isinstance(iv, Interval)
        assert iv.estimate == pytest.approx(curve[:, j].mean(), rel=1e-12)
        assert iv.ci_low <= iv.estimate <= iv.ci_high
        assert iv.ci_low < iv.ci_high
        assert iv.confidence == 0.9
        assert iv.method == iv.method_used == "bca"  # the default, defined here
        assert iv.fallback_reason is None
        assert iv.resamples == 3000
        assert iv.standard_error == pytest.approx(curve[:, j].std(ddof=1) / np.sqrt(400), rel=1e-12)
    # pass@k is increasing in k per problem, so the curve's estimates are too.
    assert intervals[0].estimate < intervals[1].estimate < intervals[2].estimate


def test_bootstrap_interval_is_frozen(curve: np.ndarray) -> None:
    iv = bootstrap_means(curve, resamples=10)[0]
    with pytest.raises(AttributeError):
        iv.estimate = 1.0  # type: ignore[misc]


def test_bootstrap_width_close_to_normal_approximation() -> None:
    # For a mean over many problems the percentile interval should be close
    # to estimate +- 1.96 * SE; a wrong resampling unit would break this.
    values = np.random.default_rng(5).binomial(1, 0.3, size=(2000, 1)).astype(float)
    iv = bootstrap_means(values, resamples=5000, seed=0)[0]
    half_width = (iv.ci_high - iv.ci_low) / 2
    assert half_width == pytest.approx(1.959964 * iv.standard_error, rel=0.08)


def test_bootstrap_single_problem_has_no_interval_but_says_so() -> None:
    intervals = bootstrap_means(np.array([[0.25, 0.7, 1.0]]), resamples=500)
    for iv, value in zip(intervals[:2], [0.25, 0.7], strict=True):
        assert iv.estimate == value and iv.ci_low is None and iv.ci_high is None  # no bounds, not zero width
        # no interval, no standard error: a 0 would claim the mean is known exactly
        assert iv.standard_error is None and "no interval" in (iv.standard_error_note or "")
        assert iv.method_used == "none" and "single problem" in (iv.fallback_reason or "")
    # A single problem scoring 1 still bounds the population mean: (alpha/2)^(1/1).
    solved = intervals[2]
    assert (solved.estimate, solved.ci_high, solved.method_used) == (1.0, 1.0, "clopper-pearson")
    assert solved.ci_low == pytest.approx(0.025, rel=1e-12)


def test_bootstrap_constant_columns_fall_back() -> None:
    values = np.column_stack([np.ones(300), np.full(300, 0.1), np.zeros(300)])
    for method in ("bca", "percentile"):
        ones, tenths, zeros = bootstrap_means(values, resamples=1000, method=method)
        # All solved / none solved: resampling cannot move the mean; exact bound (alpha/2)^(1/m).
        bound = 0.025 ** (1 / 300)
        assert (ones.estimate, ones.ci_high, ones.standard_error) == (1.0, 1.0, None)
        assert "exact bound" in (ones.standard_error_note or "")
        assert ones.ci_low == pytest.approx(bound, rel=1e-12) and ones.ci_low == pytest.approx(0.98778, abs=1e-5)
        assert (zeros.estimate, zeros.ci_low) == (0.0, 0.0)
        assert zeros.ci_high == pytest.approx(1 - bound, rel=1e-12)
        assert ones.method_used == zeros.method_used == "clopper-pearson"
        assert ones.method == method and "every problem scores 1" in (ones.fallback_reason or "")
        # An interior constant has no honest bootstrap interval: no bounds (not a zero-width one), labelled.
        assert (tenths.ci_low, tenths.estimate, tenths.ci_high) == (None, 0.1, None)
        assert tenths.method_used == "none" and "same value" in (tenths.fallback_reason or "")


def test_bootstrap_unbounded_constant_column_gets_no_exact_bound() -> None:
    # A paired difference of 1.0 everywhere is not a [0, 1] score: no Clopper-Pearson.
    [iv] = bootstrap_means(np.ones((50, 1)), resamples=100, bounded=False)
    assert (iv.estimate, iv.ci_low, iv.ci_high, iv.method_used) == (1.0, None, None, "none")


def test_bootstrap_identical_columns_get_identical_intervals(curve: np.ndarray) -> None:
    col = curve[:, 0]
    a, b = bootstrap_means(np.column_stack([col, col]), resamples=2000, seed=4)
    assert a == b


def test_bootstrap_uses_same_indices_for_every_column(curve: np.ndarray) -> None:
    col = curve[:, 1]
    scale, shift = 3.0, 2.0
    base, affine, flipped = bootstrap_means(
        np.column_stack([col, scale * col + shift, -col]), resamples=2000, seed=9, method="percentile",
        bounded=np.array([True, False, False]),
    )
    # Linear-interpolated percentiles commute with increasing affine maps only
    # when the resampled rows are shared across columns.
    assert affine.estimate == pytest.approx(scale * base.estimate + shift, rel=1e-12)
    assert affine.ci_low == pytest.approx(scale * base.ci_low + shift, rel=1e-12)
    assert affine.ci_high == pytest.approx(scale * base.ci_high + shift, rel=1e-12)
    assert affine.standard_error == pytest.approx(scale * base.standard_error, rel=1e-12)
    # A decreasing map swaps the bounds.
    assert flipped.ci_low == pytest.approx(-base.ci_high, rel=1e-12)
    assert flipped.ci_high == pytest.approx(-base.ci_low, rel=1e-12)


def test_bootstrap_column_interval_does_not_depend_on_other_columns(curve: np.ndarray) -> None:
    alone = bootstrap_means(curve[:, :1], resamples=3000, seed=5)[0]
    together = bootstrap_means(curve, resamples=3000, seed=5)[0]
    assert alone == together


def test_bootstrap_chunked_resampling_is_consistent() -> None:
    # Enough problems that resamples are split over several chunks.
    values = np.random.default_rng(2).random((5000, 2))
    a = bootstrap_means(values, resamples=1000, seed=3)
    b = bootstrap_means(values, resamples=1000, seed=3)
    assert a == b
    for iv in a:
        assert iv.ci_low < iv.estimate < iv.ci_high


@pytest.mark.parametrize(
    "kwargs",
    [
        {"resamples": 0},
        {"resamples": 100_001},
        {"resamples": 10.0},
        {"resamples": True},
        {"confidence": 0.0},
        {"confidence": 1.0},
        {"confidence": 1.5},
        {"confidence": -0.1},
        {"confidence": float("nan")},
        {"confidence": "0.95"},
        {"seed": 1.5},
    ],
)
def test_bootstrap_invalid_options(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        bootstrap_means(np.ones((3, 1)), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "values",
    [
        np.empty((0, 3)),
        np.empty((3, 0)),
        np.ones(5),
        np.ones((2, 2, 2)),
        np.array([[0.5], [np.nan]]),
        np.array([[0.5], [np.inf]]),
    ],
)
def test_bootstrap_invalid_values(values: np.ndarray) -> None:
    with pytest.raises(ValueError):
        bootstrap_means(values, resamples=10)


def test_bootstrap_resample_bounds_are_inclusive() -> None:
    assert bootstrap_means(np.array([[0.0], [1.0]]), resamples=1)[0].resamples == 1


# --- exactness of the shorter product form -----------------------------------


@pytest.mark.parametrize(("n", "k"), [(200, 100), (200, 1), (200, 37), (10, 5), (1000, 999), (5000, 2500)])
def test_one_pass_gives_exactly_k_over_n(n: int, k: int) -> None:
    at, _ = per_problem_estimates(np.array([n]), np.array([1]), [k])
    assert at[0, 0] == k / n == pass_at_k(n, 1, k)
    # and pass^k with one failure is (n - k)/n exactly
    _, hat = per_problem_estimates(np.array([n]), np.array([n - 1]), [k])
    assert hat[0, 0] == (n - k) / n == pass_hat_k(n, n - 1, k)


def test_per_problem_is_bit_identical_to_scalars_on_random_input() -> None:
    rng = np.random.default_rng(11)
    ns = rng.integers(1, 300, size=400)
    cs = np.array([rng.integers(0, n + 1) for n in ns])
    ks = [1, 2, 7, 50]
    ok = ns >= max(ks)
    at, hat = per_problem_estimates(ns[ok], cs[ok], ks)
    for i, (n, c) in enumerate(zip(ns[ok].tolist(), cs[ok].tolist(), strict=True)):
        for j, k in enumerate(ks):
            assert at[i, j] == pass_at_k(n, c, k)
            assert hat[i, j] == pass_hat_k(n, c, k)
            assert at[i, j] == close(exact_pass_at_k(n, c, k))
            assert hat[i, j] == close(exact_pass_hat_k(n, c, k)) if exact_pass_hat_k(n, c, k) else hat[i, j] == 0.0


def test_plugin_estimates_are_biased_in_the_documented_directions() -> None:
    from service.statistics import plugin_estimates

    ns, cs = np.array([10, 10]), np.array([3, 3])
    at, hat = plugin_estimates(ns, cs, [1, 3])
    # Seed worked example: n = 10, c = 3 -> plug-in 0.657 vs unbiased 0.708 (pass@3),
    # plug-in 0.027 vs unbiased 1/120 = 0.008 (pass^3).
    assert at[0].tolist() == pytest.approx([0.3, 0.657], abs=1e-12)
    assert hat[0].tolist() == pytest.approx([0.3, 0.027], abs=1e-12)
    assert at[0, 1] < pass_at_k(10, 3, 3) == pytest.approx(0.7083333333333334)
    assert hat[0, 1] > pass_hat_k(10, 3, 3) == pytest.approx(1 / 120)


def test_plugin_is_biased_low_on_average_and_unbiased_estimator_is_not() -> None:
    # Monte Carlo over c ~ Binomial(n, p): the unbiased estimator averages to 1 - (1-p)^k.
    rng = np.random.default_rng(0)
    n, p, k = 20, 0.1, 20
    cs = rng.binomial(n, p, size=200_000)
    at, _ = per_problem_estimates(np.full(cs.size, n), cs, [k])
    from service.statistics import plugin_estimates

    plug, _ = plugin_estimates(np.full(cs.size, n), cs, [k])
    truth = 1 - (1 - p) ** k
    assert at[:, 0].mean() == pytest.approx(truth, abs=3e-3)
    assert plug[:, 0].mean() < truth - 0.05


def test_bootstrap_default_is_bca_and_percentile_is_selectable(curve: np.ndarray) -> None:
    bca = bootstrap_means(curve, resamples=2000, seed=3)
    pct = bootstrap_means(curve, resamples=2000, seed=3, method="percentile")
    assert [iv.method_used for iv in bca] == ["bca"] * 3
    assert [iv.method_used for iv in pct] == ["percentile"] * 3
    assert [iv.estimate for iv in bca] == [iv.estimate for iv in pct]
    assert [iv.ci_low for iv in bca] != [iv.ci_low for iv in pct]


def test_bootstrap_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="method"):
        bootstrap_means(np.ones((3, 1)), method="basic")  # type: ignore[arg-type]
