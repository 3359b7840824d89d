"""Small, fast, seeded coverage check; bench/coverage.py runs the full 2,000-repetition version."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from service.statistics.simulation import (
    BIMODAL,
    coverage,
    draw_counts,
    true_pass_at_k,
    true_pass_hat_k,
)


def test_population_truth_matches_numerical_integration() -> None:
    for k in (1, 10):
        integral = sum(
            w * integrate.quad(lambda p, a=a, b=b: (1 - (1 - p) ** k) * stats.beta.pdf(p, a, b), 0, 1, limit=200)[0]
            for w, a, b in zip(BIMODAL.weights, BIMODAL.alphas, BIMODAL.betas, strict=True)
        )
        assert true_pass_at_k(BIMODAL, k) == pytest.approx(integral, abs=1e-6)
    assert true_pass_hat_k(BIMODAL, 1) == pytest.approx(true_pass_at_k(BIMODAL, 1))


def test_simulated_pass_rates_are_bimodal() -> None:
    cs = draw_counts(BIMODAL, 5000, 20, np.random.default_rng(0))
    histogram = np.bincount(cs, minlength=21)
    assert histogram[0] > histogram[5:16].mean() * 5 and histogram[20] > histogram[5:16].mean() * 5


def test_interval_covers_the_true_pass_at_k_about_95_percent() -> None:
    # 400 repetitions: the Monte Carlo SE of a 95% coverage is ~1.1 points, so a correct
    # interval lands in [0.92, 0.98] essentially always; 93-97% at 2,000 is in bench/coverage.py.
    results = coverage(problems=164, samples=20, ks=(1, 10), repetitions=400, resamples=1000, seed=11)
    for result in results:
        print(f"k={result.k}: coverage {result.rate:.3f} (truth {result.truth:.4f}, mean width {result.mean_width:.4f})")
        assert 0.92 <= result.rate <= 0.98, result
        # Misses on both sides: not an interval that is shifted.
        assert result.misses_low > 0 and result.misses_high > 0


def test_coverage_is_reproducible() -> None:
    a = coverage(problems=50, samples=10, ks=(1,), repetitions=20, resamples=200, seed=3)
    assert a == coverage(problems=50, samples=10, ks=(1,), repetitions=20, resamples=200, seed=3)
