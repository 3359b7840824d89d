"""Coverage simulation: does a 95% interval contain the true pass@k about 95% of the time?

Test vectors check arithmetic; only a simulation checks the claim an interval
makes. We draw per-problem pass rates from a bimodal population (many problems
almost never solved, many almost always, few in between: the shape real
benchmarks show), draw n samples per problem, compute the interval, and count
how often it covers the population pass@k, which for a mixture of Beta
distributions is known in closed form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from dataclasses import dataclass

import numpy as np
from scipy.special import betaln

from service.statistics.bootstrap import bootstrap_means, derive_seed
from service.statistics.estimators import per_problem_estimates
from service.statistics.intervals import Method

__all__ = ["BIMODAL", "BetaMixture", "CoverageTally", "FigureCoverage", "KCoverage", "coverage", "draw_counts", "true_pass_at_k", "true_pass_hat_k"]


@dataclass(frozen=True)
class BetaMixture:
    """Per-problem pass rate p ~ sum_j w_j Beta(a_j, b_j)."""

    weights: tuple[float, ...]
    alphas: tuple[float, ...]
    betas: tuple[float, ...]

    def draw(self, problems: int, rng: np.random.Generator) -> np.ndarray:
        component = rng.choice(len(self.weights), size=problems, p=np.asarray(self.weights))
        return rng.beta(np.asarray(self.alphas)[component], np.asarray(self.betas)[component])


# Hard problems (p near 0), easy ones (p near 1), a few in between.
BIMODAL = BetaMixture(weights=(0.45, 0.35, 0.20), alphas=(0.3, 4.0, 2.0), betas=(4.0, 0.3, 2.0))


def true_pass_at_k(population: BetaMixture, k: int) -> float:
    """Population pass@k = 1 - E[(1 - p)^k]; for Beta(a, b), E[(1-p)^k] = B(a, b + k) / B(a, b)."""
    a, b, w = (np.asarray(x, dtype=np.float64) for x in (population.alphas, population.betas, population.weights))
    return float(1.0 - np.sum(w * np.exp(betaln(a, b + k) - betaln(a, b))))


def true_pass_hat_k(population: BetaMixture, k: int) -> float:
    """Population pass^k = E[p^k] = B(a + k, b) / B(a, b) per component."""
    a, b, w = (np.asarray(x, dtype=np.float64) for x in (population.alphas, population.betas, population.weights))
    return float(np.sum(w * np.exp(betaln(a + k, b) - betaln(a, b))))


def draw_counts(population: BetaMixture, problems: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """c per problem: a pass rate from the population, then `samples` Bernoulli draws."""
    return rng.binomial(samples, population.draw(problems, rng))


@dataclass(frozen=True)
class CoverageTally:
    """How often an interval covered a known truth over `repetitions` simulated runs, and how it missed."""

    truth: float
    covered: int
    repetitions: int
    mean_width: float
    misses_low: int  # interval entirely below the truth
    misses_high: int  # interval entirely above the truth

    @property
    def rate(self) -> float:
        return self.covered / self.repetitions


@dataclass(frozen=True)
class KCoverage(CoverageTally):
    """The pass@k interval's coverage at one k."""

    k: int = 0


class _Tally:
    """Running coverage counts for one interval per column (each with its truth), over repetitions."""

    def __init__(self, truths: Sequence[float]) -> None:
        self.truths = list(truths)
        self.covered = np.zeros(len(self.truths), dtype=np.int64)
        self.low = np.zeros(len(self.truths), dtype=np.int64)
        self.high = np.zeros(len(self.truths), dtype=np.int64)
        self.widths = np.zeros(len(self.truths))

    def add(self, j: int, ci_low: float | None, ci_high: float | None) -> None:
        """One repetition's interval for column j. Without both bounds it is no interval: counted on neither side,
        unless a lower bound alone lies above the truth."""
        truth = self.truths[j]
        if ci_low is None or ci_high is None:
            self.high[j] += ci_low is not None and ci_low > truth
            return
        self.covered[j] += ci_low <= truth <= ci_high
        self.low[j] += ci_high < truth
        self.high[j] += ci_low > truth
        self.widths[j] += ci_high - ci_low

    def result(self, j: int, repetitions: int) -> dict[str, Any]:
        """Column j's CoverageTally fields."""
        return {"truth": self.truths[j], "covered": int(self.covered[j]), "repetitions": repetitions,
                "mean_width": float(self.widths[j] / repetitions), "misses_low": int(self.low[j]),
                "misses_high": int(self.high[j])}


def coverage(
    *,
    population: BetaMixture = BIMODAL,
    problems: int = 164,
    samples: int = 20,
    ks: Sequence[int] = (1, 10),
    repetitions: int = 1000,
    resamples: int = 2000,
    confidence: float = 0.95,
    method: Method = "bca",
    seed: int = 0,
) -> list[KCoverage]:
    """Measured coverage of the pass@k interval for each k, over `repetitions` simulated runs."""
    rng = np.random.default_rng(seed)
    tally = _Tally([true_pass_at_k(population, k) for k in ks])
    ns = np.full(problems, samples)
    for repetition in range(repetitions):
        cs = draw_counts(population, problems, samples, rng)
        pass_at, _ = per_problem_estimates(ns, cs, ks)
        intervals = bootstrap_means(
            pass_at, resamples=resamples, confidence=confidence, method=method,
            seed=derive_seed(seed, f"repetition:{repetition}"),
        )
        # No interval (every problem scored alike) counts as a miss on neither side.
        for j, interval in enumerate(intervals):
            tally.add(j, interval.ci_low, interval.ci_high)
    return [KCoverage(k=k, **tally.result(j, repetitions)) for j, k in enumerate(ks)]


# ---- cost per success and p95 latency ----------------------------------------------------------------------
#
# A population with known answers: per problem a pass rate p_i from the bimodal mixture, a cost level
# 0.01 * exp(0.5 z_i) * (1.5 - p_i) (hard problems cost more) and a latency level 800 ms * exp(0.4 z'_i);
# per sample a pass ~ Bernoulli(p_i), cost = level * lognormal(-0.02, 0.2) (mean 1) and
# latency = level * exp(0.3 e). Then cost per success = E[cost] / E[pass]
# = 0.01 e^0.125 (1.5 - E p) / E p, and the pooled latency is lognormal with sigma 0.5, so the
# true p95 is 800 exp(0.5 z_0.95).

FIGURES = ("cost_per_success", "latency_p95_ms")


def true_cost_per_success(population: BetaMixture = BIMODAL) -> float:
    mean_p = true_pass_at_k(population, 1)
    return float(0.01 * np.exp(0.125) * (1.5 - mean_p) / mean_p)


def true_latency_p95() -> float:
    from scipy.stats import norm

    return float(800.0 * np.exp(0.5 * norm.ppf(0.95)))


def draw_operating_run(
    population: BetaMixture, problems: int, samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(problem row, passed, cost, latency_ms) per sample of one simulated run."""
    p = population.draw(problems, rng)
    cost_level = 0.01 * np.exp(0.5 * rng.standard_normal(problems)) * (1.5 - p)
    latency_level = 800.0 * np.exp(0.4 * rng.standard_normal(problems))
    row = np.repeat(np.arange(problems), samples)
    passed = (rng.random(problems * samples) < p[row]).astype(np.float64)
    cost = cost_level[row] * np.exp(0.2 * rng.standard_normal(row.size) - 0.02)
    latency = latency_level[row] * np.exp(0.3 * rng.standard_normal(row.size))
    return row, passed, cost, latency


@dataclass(frozen=True)
class FigureCoverage(CoverageTally):
    """A figure's interval coverage (cost per success, p95 latency)."""

    figure: str = ""


def figure_coverage(
    *,
    population: BetaMixture = BIMODAL,
    problems: int = 164,
    samples: int = 10,
    repetitions: int = 1000,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[FigureCoverage]:
    """Measured coverage of the cost-per-success and p95-latency intervals (as GET /metrics computes them)."""
    from service.statistics.operating import (
        PooledValues,
        bootstrap_distribution,
        figures_from_distribution,
        problem_sums,
        ratio_of_sums,
        weighted_percentiles,
    )

    rng = np.random.default_rng(seed)
    tally = _Tally([true_cost_per_success(population), true_latency_p95()])
    for repetition in range(repetitions):
        row, passed, cost, latency = draw_operating_run(population, problems, samples, rng)
        cost_sum, _ = problem_sums(row, cost, problems)
        passes, _ = problem_sums(row, passed, problems)
        pooled = PooledValues.of(row, latency)
        per_success = ratio_of_sums(cost_sum, passes)

        def statistic(idx: np.ndarray) -> np.ndarray:
            return np.column_stack([per_success(idx), weighted_percentiles(pooled, idx, problems, (0.95,))[:, 0]])

        estimate, distribution = bootstrap_distribution(
            problems, statistic, resamples=resamples, seed=derive_seed(seed, f"figures:{repetition}")
        )
        for j, figure in enumerate(figures_from_distribution(estimate, distribution, confidence=confidence)):
            tally.add(j, figure.ci_low, figure.ci_high)
    return [FigureCoverage(figure=name, **tally.result(j, repetitions)) for j, name in enumerate(FIGURES)]
