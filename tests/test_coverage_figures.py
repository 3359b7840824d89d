"""Cost per success and p95 latency intervals: the simulated population's truths, and a quick coverage check.

bench/coverage.py --figures runs the 2,000-repetition version.
"""

from __future__ import annotations

import numpy as np
import pytest

from service.statistics.simulation import (
    BIMODAL,
    draw_operating_run,
    figure_coverage,
    true_cost_per_success,
    true_latency_p95,
)


def test_closed_form_truths_match_a_large_draw() -> None:
    row, passed, cost, latency = draw_operating_run(BIMODAL, 400_000, 5, np.random.default_rng(0))
    assert cost.sum() / passed.sum() == pytest.approx(true_cost_per_success(), rel=0.005)
    assert np.percentile(latency, 95) == pytest.approx(true_latency_p95(), rel=0.005)


def test_intervals_cover_about_95_percent() -> None:
    # 150 repetitions: the Monte Carlo SE of a 95 % coverage is ~1.8 points.
    for result in figure_coverage(repetitions=150, resamples=1000, seed=5):
        print(f"{result.figure}: coverage {result.rate:.3f} (truth {result.truth:.4g})")
        assert 0.89 <= result.rate <= 0.995, result
