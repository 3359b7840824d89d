"""Every interval passk serves, checked by a small seeded simulation; bench/coverage.py runs the large version.

Each check computes its intervals exactly as the service does, on simulated runs with a known answer
(service/statistics/simulation.py). With 150-300 repetitions the Monte Carlo standard error of a 95 %
coverage is 1.3-1.8 points, so a correct interval lands within 91-98.5 % (the bar of 93-97 % is checked at
2,000 repetitions by the bench). Rows that passk itself serves with a warning (fewer than 30 problems, an
estimate few problems carry, a percentile few samples lie above) are checked for the warning instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from service.statistics.simulation import (
    BIMODAL,
    CHECKS,
    IntervalCoverage,
    coverage,
    draw_counts,
    true_pass_at_k,
    true_pass_hat_k,
)

LOW, HIGH = 0.91, 0.985

REPETITIONS = {"pass": 300, "large-k": 150, "groups": 200, "languages": 150, "operating": 300, "calibration": 120,
               "paired": 200, "sweeps": 150}


def _check(name: str, seed: int = 11) -> dict[str, IntervalCoverage]:
    rows = CHECKS[name](repetitions=REPETITIONS[name], resamples=1000, seed=seed)
    for row in rows:
        print(f"{name}: {row.interval}: coverage {row.rate:.3f} (misses low {row.misses_low}, high {row.misses_high})"
              f"{'  [' + row.served_warning + ']' if row.served_warning else ''}")
    return {row.interval: row for row in rows}


def _holds(row: IntervalCoverage) -> None:
    assert not row.served_warning, row
    assert LOW <= row.rate <= HIGH, row


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


def test_pass_at_k_and_pass_hat_k() -> None:
    for row in _check("pass").values():
        _holds(row)


def test_pass_hat_k_at_large_k_is_warned_about() -> None:
    # pass^100 at n = 200, Beta(0.5, 0.8): about 3.6 problems carry it and no bootstrap can fix that; passk says so.
    row = _check("large-k")["pass^100"]
    assert row.served_warning.startswith("warned: about") and row.rate < 0.95


def test_groups_micro_macro_and_small_groups() -> None:
    rows = _check("groups")
    for name in ("tag of 150", "micro (4/10/150)", "micro (82/82)", "macro (82/82)", "macro (overlapping 100/100)"):
        _holds(rows[name])
    # Groups of 4 and 10 cannot reach 95 % with any bootstrap (their means are of 4 and 10 values); the
    # shrinkage correction brings the group of 10 close, and both are warned about by name.
    assert rows["tag of 10"].served_warning and rows["tag of 10"].rate >= 0.9
    assert rows["tag of 4"].served_warning and rows["macro (4/10/150)"].served_warning


def test_languages_that_are_one_benchmark_translated() -> None:
    for row in _check("languages").values():
        _holds(row)


def test_cost_and_latency_percentiles() -> None:
    rows = _check("operating")
    for name in ("cost per sample", "cost per success", "latency p50, 1 sample", "latency p95, 1 sample",
                 "latency p50, 10 samples", "latency p95, 10 samples"):
        _holds(rows[name])
    # The p95's upper bound (the side a release rule "p95 under 2.5 s" reads) falls short of the truth about
    # 2.5 % of the time, not the 5-8 % of the percentile bootstrap.
    for name in ("latency p95, 1 sample", "latency p95, 10 samples"):
        assert rows[name].misses_low / rows[name].repetitions <= 0.04, rows[name]
    # A p99 with few samples above it is served with a note that its interval is rough.
    assert rows["latency p99, 1 sample"].served_warning


def test_brier_and_ece() -> None:
    for row in _check("calibration").values():
        _holds(row)


def test_paired_differences() -> None:
    for row in _check("paired").values():
        _holds(row)


def test_sweeps_envelope_and_margin() -> None:
    rows = _check("sweeps")
    # The envelope is simultaneous: valid by construction, so at least 95 % (more when the runs are equal).
    for row in rows.values():
        assert not row.served_warning and row.rate >= 0.93, row
