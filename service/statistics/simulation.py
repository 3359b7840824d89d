"""Coverage simulation: does each 95 % interval passk serves contain the truth about 95 % of the time?

Test vectors check arithmetic; only a simulation checks the claim an interval makes. Each check draws
simulated runs from a population whose answer is known (in closed form, by quadrature, or from one very
large draw), computes the interval exactly as the service does, and counts how often it covers the
answer and on which side it misses.

Per-problem pass rates come from a bimodal population (many problems almost never solved, many almost
always, few in between: the shape real benchmarks show). `CHECKS` names every check; `bench/coverage.py`
runs them all with many repetitions and prints one table, the tests run each with few.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
from scipy import integrate
from scipy.special import betaln
from scipy.stats import beta as beta_distribution
from scipy.stats import norm

from service.statistics.bootstrap import bootstrap_means, derive_seed
from service.statistics.calibration import calibration_summary
from service.statistics.estimators import per_problem_estimates
from service.statistics.groups import group_intervals
from service.statistics.intervals import Method
from service.statistics.languages import language_intervals
from service.statistics.operating import SampleColumns, operating_summary, paired_figures
from service.statistics.paired import paired_bootstrap
from service.statistics.sweeps import sweep_summary

__all__ = [
    "BIMODAL",
    "CHECKS",
    "BetaMixture",
    "CoverageTally",
    "IntervalCoverage",
    "KCoverage",
    "coverage",
    "draw_counts",
    "draw_operating_run",
    "true_pass_at_k",
    "true_pass_hat_k",
]


@dataclass(frozen=True)
class BetaMixture:
    """Per-problem pass rate p ~ sum_j w_j Beta(a_j, b_j)."""

    weights: tuple[float, ...]
    alphas: tuple[float, ...]
    betas: tuple[float, ...]

    def draw(self, problems: int, rng: np.random.Generator) -> np.ndarray:
        component = rng.choice(len(self.weights), size=problems, p=np.asarray(self.weights))
        return rng.beta(np.asarray(self.alphas)[component], np.asarray(self.betas)[component])

    def expect(self, function: Callable[[float], float]) -> float:
        """E[function(p)] by quadrature, per component (the Beta densities are singular at 0 and 1)."""
        total = 0.0
        for w, a, b in zip(self.weights, self.alphas, self.betas, strict=True):
            density = beta_distribution(a, b).pdf
            total += w * integrate.quad(lambda p: function(p) * density(p), 0.0, 1.0, limit=400, points=[0.5])[0]
        return total


# Hard problems (p near 0), easy ones (p near 1), a few in between.
BIMODAL = BetaMixture(weights=(0.45, 0.35, 0.20), alphas=(0.3, 4.0, 2.0), betas=(4.0, 0.3, 2.0))
# Mostly hard, a long tail of easy problems: pass^100 at n = 200 rests on about 3.6 problems.
LONG_TAIL = BetaMixture(weights=(1.0,), alphas=(0.5,), betas=(0.8,))


def true_pass_at_k(population: BetaMixture, k: int) -> float:
    """Population pass@k = 1 - E[(1 - p)^k]; for Beta(a, b), E[(1-p)^k] = B(a, b + k) / B(a, b)."""
    a, b, w = (np.asarray(x, dtype=np.float64) for x in (population.alphas, population.betas, population.weights))
    return float(1.0 - np.sum(w * np.exp(betaln(a, b + k) - betaln(a, b))))


def true_pass_hat_k(population: BetaMixture, k: int) -> float:
    """Population pass^k = E[p^k] = B(a + k, b) / B(a, b) per component."""
    a, b, w = (np.asarray(x, dtype=np.float64) for x in (population.alphas, population.betas, population.weights))
    return float(np.sum(w * np.exp(betaln(a + k, b) - betaln(a, b))))


def true_pass_at_k_of(population: BetaMixture, k: int, power: float) -> float:
    """pass@k when a problem's pass rate is p^power (a model better or worse on the same problems)."""
    return population.expect(lambda p: 1.0 - (1.0 - p**power) ** k)


def draw_counts(population: BetaMixture, problems: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """c per problem: a pass rate from the population, then `samples` Bernoulli draws."""
    return rng.binomial(samples, population.draw(problems, rng))


# ---- counting -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CoverageTally:
    """How often an interval covered a known truth over `repetitions` simulated runs, and how it missed."""

    truth: float
    covered: int
    repetitions: int
    mean_width: float  # over the repetitions whose interval had both bounds (NaN: none had)
    misses_low: int  # interval entirely below the truth
    misses_high: int  # interval entirely above the truth

    @property
    def rate(self) -> float:
        return self.covered / self.repetitions

    @property
    def monte_carlo_error(self) -> float:
        """Standard error of the coverage from the number of repetitions alone."""
        return float(np.sqrt(self.rate * (1.0 - self.rate) / self.repetitions))


@dataclass(frozen=True)
class KCoverage(CoverageTally):
    """The pass@k interval's coverage at one k."""

    k: int = 0


@dataclass(frozen=True)
class IntervalCoverage(CoverageTally):
    """One interval passk serves, in one simulated setting."""

    interval: str = ""
    setting: str = ""
    # Where passk itself says the interval is unreliable (a warning or note it serves): why.
    served_warning: str = ""


class _Tally:
    """Running coverage counts for one interval per column (each with its truth), over repetitions."""

    def __init__(self, truths: Sequence[float]) -> None:
        self.truths = list(truths)
        self.covered = np.zeros(len(self.truths), dtype=np.int64)
        self.low = np.zeros(len(self.truths), dtype=np.int64)
        self.high = np.zeros(len(self.truths), dtype=np.int64)
        self.widths = np.zeros(len(self.truths))
        self.bounded = np.zeros(len(self.truths), dtype=np.int64)
        self.varying = np.zeros(len(self.truths), dtype=bool)

    def add(self, j: int, ci_low: float | None, ci_high: float | None, *, open_bounds: bool = False,
            truth: float | None = None) -> None:
        """One repetition's interval for column j, with the truth `truths[j]`, or `truth` where it depends on the
        repetition (the true margin between the two runs this repetition picked).

        A missing bound is, for a figure (open_bounds), an open side: the interval reaches to infinity there.
        For pass@k it means there is no interval: counted on neither side, unless a lower bound alone lies
        above the truth.
        """
        if truth is None:
            truth = self.truths[j]
        else:
            self.varying[j] = True
        if open_bounds:
            low = -np.inf if ci_low is None else ci_low
            high = np.inf if ci_high is None else ci_high
        elif ci_low is None or ci_high is None:
            self.high[j] += ci_low is not None and ci_low > truth
            return
        else:
            low, high = ci_low, ci_high
        self.covered[j] += low <= truth <= high
        self.low[j] += high < truth
        self.high[j] += low > truth
        if np.isfinite(low) and np.isfinite(high):
            self.widths[j] += high - low
            self.bounded[j] += 1

    def result(self, j: int, repetitions: int) -> dict[str, Any]:
        """Column j's CoverageTally fields."""
        return {"truth": float("nan") if self.varying[j] else self.truths[j], "covered": int(self.covered[j]),
                "repetitions": repetitions,
                "mean_width": float(self.widths[j] / self.bounded[j]) if self.bounded[j] else float("nan"),
                "misses_low": int(self.low[j]),
                "misses_high": int(self.high[j])}

    def rows(self, names: Sequence[str], setting: str, repetitions: int,
             warnings: dict[str, str] | None = None) -> list[IntervalCoverage]:
        return [
            IntervalCoverage(interval=name, setting=setting, served_warning=(warnings or {}).get(name, ""),
                             **self.result(j, repetitions))
            for j, name in enumerate(names)
        ]


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


# ---- the checks: every interval passk serves ---------------------------------------------------------------

PROBLEMS = 164  # HumanEval's size


def pass_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """pass@1, pass@10 and pass^10 of one run: 164 problems x 20 samples, the bimodal population."""
    ks = (1, 10)
    rng = np.random.default_rng(seed)
    tally = _Tally([true_pass_at_k(BIMODAL, 1), true_pass_at_k(BIMODAL, 10), true_pass_hat_k(BIMODAL, 10)])
    ns = np.full(PROBLEMS, 20)
    for repetition in range(repetitions):
        pass_at, pass_hat = per_problem_estimates(ns, draw_counts(BIMODAL, PROBLEMS, 20, rng), ks)
        intervals = bootstrap_means(np.hstack([pass_at, pass_hat[:, 1:]]), resamples=resamples,
                                    seed=derive_seed(seed, f"pass:{repetition}"))
        for j, interval in enumerate(intervals):
            tally.add(j, interval.ci_low, interval.ci_high)
    return tally.rows(["pass@1", "pass@10", "pass^10"], f"{PROBLEMS} problems x 20 samples", repetitions)


def large_k_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """pass^100 at n = 200 when a long tail of easy problems carries it (about 3.6 effective problems)."""
    rng = np.random.default_rng(seed)
    tally = _Tally([true_pass_hat_k(LONG_TAIL, 100)])
    ns = np.full(PROBLEMS, 200)
    effective: list[float] = []
    for repetition in range(repetitions):
        _, pass_hat = per_problem_estimates(ns, draw_counts(LONG_TAIL, PROBLEMS, 200, rng), (100,))
        (interval,) = bootstrap_means(pass_hat, resamples=resamples, seed=derive_seed(seed, f"large-k:{repetition}"))
        tally.add(0, interval.ci_low, interval.ci_high)
        if interval.effective_problems is not None:
            effective.append(interval.effective_problems)
    warned = f"warned: about {np.mean(effective):.1f} effective problems" if effective else ""
    return tally.rows(["pass^100"], f"{PROBLEMS} problems x 200 samples, Beta(0.5, 0.8)", repetitions,
                      {"pass^100": warned})


def group_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """Per-tag, micro and macro pass@1: tags of 4, 10 and 150 problems; two of 82; two overlapping tags of 100."""
    rng = np.random.default_rng(seed)
    truth = true_pass_at_k(BIMODAL, 1)
    names = ["tag of 4", "tag of 10", "tag of 150", "micro (4/10/150)", "macro (4/10/150)",
             "micro (82/82)", "macro (82/82)", "macro (overlapping 100/100)"]
    tally = _Tally([truth] * len(names))
    ns = np.full(PROBLEMS, 10)
    for repetition in range(repetitions):
        values, _ = per_problem_estimates(ns, draw_counts(BIMODAL, PROBLEMS, 10, rng), (1,))
        order = rng.permutation(PROBLEMS)
        sized = [[]] * PROBLEMS
        for position, row in enumerate(order):
            sized[row] = ["a"] if position < 4 else (["b"] if position < 14 else ["c"])
        halves = [["x"] if position < 82 else ["y"] for position in np.argsort(order)]
        overlapping = [(["x"] if position < 100 else []) + (["y"] if position >= 64 else [])
                       for position in np.argsort(order)]
        common = {"resamples": resamples, "confidence": 0.95, "method": "bca",
                  "seed": derive_seed(seed, f"groups:{repetition}")}
        small = group_intervals(values, sized, **common)
        even = group_intervals(values, halves, **common)
        shared = group_intervals(values, overlapping, **common)
        found = [*(g.intervals[0] for g in small.groups), small.micro[0], small.macro[0], even.micro[0],
                 even.macro[0], shared.macro[0]]
        for j, interval in enumerate(found):
            tally.add(j, interval.ci_low, interval.ci_high)
    warned = "warned: fewer than 30 problems"
    return tally.rows(names, f"{PROBLEMS} problems x 10 samples", repetitions,
                      {"tag of 4": warned, "tag of 10": warned, "macro (4/10/150)": warned})


LANGUAGE_POWERS = {"cpp": 1.0, "go": 1.4, "rust": 0.7}  # each language's pass rate p^power of the shared p


def language_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """Micro and macro pass@1 and pass@10 over three languages that are the same 164 problems translated."""
    rng = np.random.default_rng(seed)
    ks = (1, 10)
    truths = {k: np.mean([true_pass_at_k_of(BIMODAL, k, power) for power in LANGUAGE_POWERS.values()]) for k in ks}
    names = [f"{average} pass@{k}" for average in ("micro", "macro") for k in ks]
    tally = _Tally([truths[k] for _ in ("micro", "macro") for k in ks])
    ns = np.full(PROBLEMS, 10)
    keys = [f"HumanEval/{i}" for i in range(PROBLEMS)]
    for repetition in range(repetitions):
        p = BIMODAL.draw(PROBLEMS, rng)
        values = {language: per_problem_estimates(ns, rng.binomial(10, p**power), ks)[0]
                  for language, power in LANGUAGE_POWERS.items()}
        summary = language_intervals(
            values, resamples=resamples, confidence=0.95, seed=derive_seed(seed, f"languages:{repetition}"),
            method="bca", keys_by_language=dict.fromkeys(values, keys),
        )
        for j, interval in enumerate([*summary.micro, *summary.macro]):
            tally.add(j, interval.ci_low, interval.ci_high)
    return tally.rows(names, f"3 languages x {PROBLEMS} shared problems x 10 samples", repetitions)


# Latencies: a problem's level exp(0.6 z) (a slow problem is slow in all its samples), a sample's exp(0.4 e).
LATENCY_PROBLEM_SIGMA, LATENCY_SAMPLE_SIGMA, LATENCY_SCALE = 0.6, 0.4, 800.0


def true_latency(level: float) -> float:
    """The pooled latency is lognormal with sigma sqrt(0.6^2 + 0.4^2) when every problem has as many samples."""
    return float(LATENCY_SCALE * np.exp(norm.ppf(level) * np.hypot(LATENCY_PROBLEM_SIGMA, LATENCY_SAMPLE_SIGMA)))


def true_cost_per_sample(population: BetaMixture = BIMODAL) -> float:
    return float(0.01 * np.exp(0.125) * (1.5 - true_pass_at_k(population, 1)))


def true_cost_per_success(population: BetaMixture = BIMODAL) -> float:
    return true_cost_per_sample(population) / true_pass_at_k(population, 1)


def draw_operating_run(
    population: BetaMixture, problems: int, samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(problem row, passed, cost, latency_ms) per sample of one simulated run.

    Per problem a pass rate p, a cost level 0.01 exp(0.5 z) (1.5 - p) (hard problems cost more) and a latency
    level; per sample a pass ~ Bernoulli(p), cost = level x lognormal(-0.02, 0.2) (mean 1), latency = level x
    exp(0.4 e). So cost per sample = 0.01 e^0.125 (1.5 - E p), cost per success that / E p.
    """
    p = population.draw(problems, rng)
    cost_level = 0.01 * np.exp(0.5 * rng.standard_normal(problems)) * (1.5 - p)
    latency_level = LATENCY_SCALE * np.exp(LATENCY_PROBLEM_SIGMA * rng.standard_normal(problems))
    row = np.repeat(np.arange(problems), samples)
    passed = (rng.random(problems * samples) < p[row]).astype(np.float64)
    cost = cost_level[row] * np.exp(0.2 * rng.standard_normal(row.size) - 0.02)
    latency = latency_level[row] * np.exp(LATENCY_SAMPLE_SIGMA * rng.standard_normal(row.size))
    return row, passed, cost, latency


def _columns(row: np.ndarray, passed: np.ndarray, cost: np.ndarray, latency: np.ndarray,
             confidence: np.ndarray | None = None) -> SampleColumns:
    nan = np.full(row.size, np.nan)
    return SampleColumns(row, passed, cost, latency, nan, nan, nan if confidence is None else confidence, nan)


def operating_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """Cost per sample and per success (bootstrap), latency p50 / p95 / p99 (Woodruff) at 1 and 10 samples."""
    rng = np.random.default_rng(seed)
    names = ["cost per sample", "cost per success"] + [
        f"latency p{int(100 * q)}, {n} sample{'s' if n > 1 else ''}" for n in (1, 10) for q in (0.5, 0.95, 0.99)
    ]
    truths = [true_cost_per_sample(), true_cost_per_success()] + [true_latency(q) for _ in (1, 10)
                                                                   for q in (0.5, 0.95, 0.99)]
    tally = _Tally(truths)
    notes: dict[str, list[str]] = {}
    for repetition in range(repetitions):
        for samples in (1, 10):
            row, passed, cost, latency = draw_operating_run(BIMODAL, PROBLEMS, samples, rng)
            summary = operating_summary(
                _columns(row, passed, cost, latency), PROBLEMS, np.zeros((PROBLEMS, 1)), [1], resamples=resamples,
                seed=derive_seed(seed, f"operating:{repetition}:{samples}"),
            )
            offset = 2 if samples == 1 else 5
            if samples == 10:
                assert summary.cost is not None
                tally.add(0, summary.cost.mean_per_sample.ci_low, summary.cost.mean_per_sample.ci_high,
                          open_bounds=True)
                tally.add(1, summary.cost.per_success.ci_low, summary.cost.per_success.ci_high, open_bounds=True)
            assert summary.latency is not None
            for j, figure in enumerate((summary.latency.p50, summary.latency.p95, summary.latency.p99)):
                tally.add(offset + j, figure.ci_low, figure.ci_high, open_bounds=True)
                if figure.note and "rough" in figure.note:
                    notes.setdefault(names[offset + j], []).append(figure.note)
    warned = {name: "noted in most runs: few samples above it, the interval is rough"
              for name, found in notes.items() if len(found) > repetitions / 2}
    rows = tally.rows(names, "", repetitions, warned)
    settings = [f"{PROBLEMS} problems x 10 samples"] * 2 + [
        f"{PROBLEMS} problems x {n} sample{'s' if n > 1 else ''}, lognormal" for n in (1, 10) for _ in range(3)
    ]
    return [replace(row, setting=setting) for row, setting in zip(rows, settings, strict=True)]


def _confidences(p: np.ndarray, row: np.ndarray, rng: np.random.Generator, calibrated: bool) -> np.ndarray:
    """A model's stated confidence per sample: the problem's pass rate itself (perfectly calibrated), or an
    overconfident, noisy function of it (logit scaled by 1.6, shifted by 0.3, noise 0.3)."""
    if calibrated:
        return p[row]
    q = np.clip(p, 1e-6, 1.0 - 1e-6)[row]
    logit = 1.6 * np.log(q / (1.0 - q)) + 0.3 + 0.3 * rng.standard_normal(row.size)
    return 1.0 / (1.0 + np.exp(-logit))


@cache
def calibration_truths(bins: int = 10) -> tuple[float, float]:
    """(Brier, ECE over equal-width bins) of the overconfident model, from 4 million samples: E[(f - p)^2] +
    E[p (1 - p)], and sum_m |E[(p - f) 1(f in bin m)]|. Their Monte Carlo error is below 1e-4."""
    rng = np.random.default_rng(20_240)
    squared = gap_total = 0.0
    gaps = np.zeros(bins)
    count = 0
    for _ in range(10):
        p = BIMODAL.draw(400_000, rng)
        row = np.arange(p.size)
        f = _confidences(p, row, rng, calibrated=False)
        squared += float(np.sum((f - p) ** 2 + p * (1.0 - p)))
        index = np.searchsorted(np.arange(1, bins) / bins, f, side="right")
        gaps += np.bincount(index, weights=p - f, minlength=bins)
        count += p.size
    gap_total = float(np.abs(gaps).sum())
    return squared / count, gap_total / count


def calibration_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """Brier and ECE of an overconfident model, and ECE of a perfectly calibrated one (truth 0): 164 x 10."""
    rng = np.random.default_rng(seed)
    brier_truth, ece_truth = calibration_truths()
    names = ["Brier", "ECE (overconfident)", "ECE (calibrated, truth 0)"]
    tally = _Tally([brier_truth, ece_truth, 0.0])
    row = np.repeat(np.arange(PROBLEMS), 10)
    for repetition in range(repetitions):
        for calibrated in (False, True):
            p = BIMODAL.draw(PROBLEMS, rng)
            f = _confidences(p, row, rng, calibrated)
            passed = (rng.random(row.size) < p[row]).astype(np.float64)
            summary = calibration_summary(row, f, passed, PROBLEMS, resamples=resamples,
                                          seed=derive_seed(seed, f"calibration:{repetition}:{calibrated}"))
            assert summary is not None and summary.ece is not None
            if calibrated:
                tally.add(2, summary.ece.interval.ci_low, summary.ece.interval.ci_high, open_bounds=True)
            else:
                tally.add(0, summary.brier.ci_low, summary.brier.ci_high, open_bounds=True)
                tally.add(1, summary.ece.interval.ci_low, summary.ece.interval.ci_high, open_bounds=True)
    return tally.rows(names, f"{PROBLEMS} problems x 10 samples", repetitions)


CANDIDATE_POWER = 0.8  # the candidate's pass rate p^0.8 on the base's problems: better, same difficulty
CANDIDATE_SLOWER = 0.1  # its latencies e^0.1 times the base's level
CANDIDATE_COSTLIER = 1.2


def paired_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """Candidate - base: pass@1 and pass@10 (paired bootstrap), p95 latency (Woodruff, linearised) and
    its ratio, cost per success (paired bootstrap); two runs on the same 164 problems x 10 samples."""
    rng = np.random.default_rng(seed)
    ks = (1, 10)
    mean_p, mean_p_candidate = true_pass_at_k(BIMODAL, 1), true_pass_at_k_of(BIMODAL, 1, CANDIDATE_POWER)
    base_cost = true_cost_per_sample()
    names = ["pass@1 difference", "pass@10 difference", "latency p95 difference", "latency p95 ratio - 1",
             "cost per success difference"]
    tally = _Tally([
        true_pass_at_k_of(BIMODAL, 1, CANDIDATE_POWER) - mean_p,
        true_pass_at_k_of(BIMODAL, 10, CANDIDATE_POWER) - true_pass_at_k(BIMODAL, 10),
        (np.exp(CANDIDATE_SLOWER) - 1.0) * true_latency(0.95),
        np.exp(CANDIDATE_SLOWER) - 1.0,
        CANDIDATE_COSTLIER * base_cost / mean_p_candidate - base_cost / mean_p,
    ])
    ns = np.full(PROBLEMS, 10)
    for repetition in range(repetitions):
        p = BIMODAL.draw(PROBLEMS, rng)
        cost_level = 0.01 * np.exp(0.5 * rng.standard_normal(PROBLEMS)) * (1.5 - p)
        latency_level = LATENCY_SCALE * np.exp(LATENCY_PROBLEM_SIGMA * rng.standard_normal(PROBLEMS))
        row = np.repeat(np.arange(PROBLEMS), 10)
        runs = []
        for power, slower, costlier in ((1.0, 0.0, 1.0), (CANDIDATE_POWER, CANDIDATE_SLOWER, CANDIDATE_COSTLIER)):
            passed = (rng.random(row.size) < p[row] ** power).astype(np.float64)
            cost = costlier * cost_level[row] * np.exp(0.2 * rng.standard_normal(row.size) - 0.02)
            latency = latency_level[row] * np.exp(slower + LATENCY_SAMPLE_SIGMA * rng.standard_normal(row.size))
            runs.append((_columns(row, passed, cost, latency), np.bincount(row, weights=passed).astype(np.int64)))
        common = {"resamples": resamples, "seed": derive_seed(seed, f"paired:{repetition}")}
        pairs = paired_bootstrap(per_problem_estimates(ns, runs[0][1], ks)[0],
                                 per_problem_estimates(ns, runs[1][1], ks)[0], **common)
        figures = paired_figures(runs[0][0], runs[1][0], PROBLEMS, **common)
        found = [pairs[0].difference, pairs[1].difference, figures["latency_p95_ms"].difference,
                 figures["latency_p95_ms"].relative_difference, figures["cost_per_success"].difference]
        for j, interval in enumerate(found):
            tally.add(j, interval.ci_low, interval.ci_high, open_bounds=j >= 2)
    return tally.rows(names, f"2 runs x {PROBLEMS} problems x 10 samples", repetitions)


SWEEP_RUNS = 5


def sweep_coverage(*, repetitions: int, resamples: int, seed: int) -> list[IntervalCoverage]:
    """The envelope (best pass@k over runs) and the best run's margin over the runner-up, for five runs of one
    model: all equal (the hardest case for a maximum), and with pass rates p^0.8 ... p^1.2."""
    rng = np.random.default_rng(seed)
    ks = (1, 10)
    powers = {"equal": [1.0] * SWEEP_RUNS, "unequal": list(np.linspace(0.8, 1.2, SWEEP_RUNS))}
    truths = {(name, k): [true_pass_at_k_of(BIMODAL, k, power) for power in ps] for name, ps in powers.items()
              for k in ks}
    names = [f"{what} pass@{k}, {name} runs" for name in powers for what in ("envelope", "best's margin") for k in ks]
    tally = _Tally([max(truths[(name, k)]) if what == "envelope" else float("nan")
                    for name in powers for what in ("envelope", "margin") for k in ks])
    ns = np.full(PROBLEMS, 10)
    for repetition in range(repetitions):
        j = 0
        for name, ps in powers.items():
            p = BIMODAL.draw(PROBLEMS, rng)
            per_run = [per_problem_estimates(ns, rng.binomial(10, p**power), ks)[0] for power in ps]
            summary = sweep_summary(per_run, ks, resamples=resamples,
                                    seed=derive_seed(seed, f"sweep:{repetition}:{name}"))
            for i, k in enumerate(ks):
                best = summary.best[i]
                tally.add(j + i, best.envelope_low, best.envelope_high)
                # the margin's truth: between the two runs this repetition picked as best and runner-up
                others = [r for r in range(SWEEP_RUNS) if r != best.best]
                runner_up = others[int(np.argmax([summary.intervals[r][i].estimate for r in others]))]
                true = truths[(name, k)]
                tally.add(j + len(ks) + i, best.margin_low, best.margin_high, truth=true[best.best] - true[runner_up])
            j += 2 * len(ks)
    return tally.rows(names, f"{SWEEP_RUNS} runs x {PROBLEMS} problems x 10 samples", repetitions)


# Every check, by name: what bench/coverage.py tabulates and the tests run small.
CHECKS: dict[str, Callable[..., list[IntervalCoverage]]] = {
    "pass": pass_coverage,
    "large-k": large_k_coverage,
    "groups": group_coverage,
    "languages": language_coverage,
    "operating": operating_coverage,
    "calibration": calibration_coverage,
    "paired": paired_coverage,
    "sweeps": sweep_coverage,
}

