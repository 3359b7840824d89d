"""The simulated populations' truths, checked against independent computations (numerical integration, numpy
on a very large draw, outcomes drawn rather than expected).

tests/test_coverage_simulation.py runs the coverage checks themselves; bench/coverage.py the large version.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from service.statistics.calibration import brier_score, ece
from service.statistics.simulation import (
    BIMODAL,
    LONG_TAIL,
    _confidences,
    calibration_truths,
    draw_operating_run,
    true_cost_per_sample,
    true_cost_per_success,
    true_latency,
    true_pass_at_k_of,
    true_pass_hat_k,
)


def test_operating_truths_match_a_large_draw() -> None:
    row, passed, cost, latency = draw_operating_run(BIMODAL, 400_000, 5, np.random.default_rng(0))
    assert cost.mean() == pytest.approx(true_cost_per_sample(), rel=0.005)
    assert cost.sum() / passed.sum() == pytest.approx(true_cost_per_success(), rel=0.005)
    for level in (0.5, 0.95, 0.99):
        assert np.percentile(latency, 100 * level) == pytest.approx(true_latency(level), rel=0.01)


def test_a_changed_model_on_the_same_problems_by_quadrature() -> None:
    # E[1 - (1 - p^0.8)^10] over the mixture, against scipy's quad per component written out here
    integral = sum(
        w * integrate.quad(lambda p, a=a, b=b: (1 - (1 - p**0.8) ** 10) * stats.beta.pdf(p, a, b), 0, 1, limit=400)[0]
        for w, a, b in zip(BIMODAL.weights, BIMODAL.alphas, BIMODAL.betas, strict=True)
    )
    assert true_pass_at_k_of(BIMODAL, 10, 0.8) == pytest.approx(integral, abs=1e-6)
    assert true_pass_hat_k(LONG_TAIL, 100) == pytest.approx(0.0127, abs=5e-4)  # the long tail's pass^100


def test_calibration_truths_against_drawn_outcomes() -> None:
    rng = np.random.default_rng(7)
    p = BIMODAL.draw(400_000, rng)
    f = _confidences(p, np.arange(p.size), rng, calibrated=False)
    passed = (rng.random(p.size) < p).astype(np.float64)
    brier, ece_truth = calibration_truths()
    assert brier_score(f, passed) == pytest.approx(brier, abs=2e-3)
    # the plug-in's bias is small at 400,000 samples
    assert ece(f, passed) == pytest.approx(ece_truth, abs=3e-3)
