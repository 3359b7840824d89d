"""What a run costs and how long it takes: cost per sample, cost per success, latency percentiles, tokens.

Pure functions over per-sample values grouped by problem. Cost, token and step intervals are a
bootstrap over problems that draws exactly the index matrix pass@k draws for the same seed and
number of problems (`bootstrap.index_chunks` on `default_rng(seed)`), so "cost per success" and
"pass@1" of one response describe the same resampled problem sets. A resampled problem brings all
its samples, with its multiplicity.

Ratios are ratios of sums (total cost / passes), never means of per-problem ratios: seed 004's
"cost per success = cost per request / success rate" is total cost / total passes.

Percentiles use the inverted-CDF definition (the smallest value x with F(x) >= q, numpy's
`method="inverted_cdf"`): a reported p95 latency is a latency that was observed. Their intervals
are Woodruff's (1952), not a bootstrap: the share F(q) of samples at or below the estimate has a
standard error that problems (the clustering unit: a slow problem is slow in all its samples)
give by linearisation, sqrt(m/(m-1) sum_i (a_i - q n_i)^2) / N with a_i of problem i's n_i samples
at or below (a tie at the estimate split so that they add up to q N); the interval is the inverted CDF at
q -/+ t_(m-1) times that standard error. The percentile
bootstrap of a p95 puts its upper bound below the truth two to three times as often as it says
(a resampled tail can only repeat observed latencies); Woodruff's keeps each side near 2.5 %.
Where the upper bound would be the largest latency observed, the truth may lie beyond anything
seen: the bound is left open (None), with a note.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from service.statistics.bootstrap import index_chunks, validate_options
from service.statistics.intervals import column_means, rescaled, sorted_quantiles

__all__ = [
    "CostAtK",
    "CostSummary",
    "Figure",
    "LatencySummary",
    "OperatingSummary",
    "PAIRED_FIGURES",
    "PairedFigure",
    "Percentile",
    "paired_figures",
    "SampleColumns",
    "StepsSummary",
    "TokenSummary",
    "operating_summary",
    "PERCENTILES",
    "bootstrap_distribution",
    "figures_from_distribution",
    "incremental_cost_per_success",
    "problem_sums",
    "multiplicity",
    "ratio_of_sums",
    "woodruff_percentiles",
]

PERCENTILES: tuple[float, ...] = (0.50, 0.95, 0.99)


@dataclass(frozen=True)
class Figure:
    """A point estimate with an interval over problems: a percentile bootstrap (method_used "percentile"), or
    Woodruff's for a latency percentile ("woodruff", resamples 0).

    estimate or bounds are None where the figure is undefined (no pass: no cost per success)
    or unbounded (some resamples have no pass), with `note` saying which.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    resamples: int
    standard_error: float | None  # the bootstrap distribution's standard deviation; Woodruff: half-width / t
    method_used: str = "percentile"
    note: str | None = None


def problem_sums(problem: np.ndarray, values: np.ndarray, problems: int) -> tuple[np.ndarray, np.ndarray]:
    """Per problem: sum of the values that are present (not NaN) and how many are present."""
    problem = np.asarray(problem, dtype=np.intp)
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    sums = np.bincount(problem[present], weights=values[present], minlength=problems)
    counts = np.bincount(problem[present], minlength=problems).astype(np.float64)
    return sums, counts


def ratio_of_sums(numerator: np.ndarray, denominator: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Statistic over a block of resampled problem indices: sum(num[idx]) / sum(den[idx]) per row (inf/NaN if 0)."""

    def statistic(idx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.take(numerator, idx).sum(axis=1) / np.take(denominator, idx).sum(axis=1)

    return statistic


def multiplicity(block: np.ndarray, problems: int) -> np.ndarray:
    """How many times each problem was drawn in each row of a block of resampled indices, (rows, problems)."""
    size = block.shape[0]
    offsets = block + (np.arange(size, dtype=np.intp) * problems)[:, None]
    return np.bincount(offsets.ravel(), minlength=size * problems).reshape(size, problems)


# Below this effective number of problems holding the samples above a percentile, its interval is rough: the
# p99 of 164 problems x 10 samples rests on about 6 and covers about 92 %; the p95 of 164 x 1 rests on 8 and
# covers 95 %.
THIN_TAIL_PROBLEMS = 8


@dataclass(frozen=True)
class Percentile:
    """One percentile's Woodruff interval, and its linearisation for a paired difference."""

    level: float
    figure: Figure
    # per problem: (a_i - q n_i) / (N f), the problem's share of q_hat - q to first order (f: the CDF's slope near
    # the estimate, read from the interval); None where the interval is open on a side
    influence: np.ndarray | None


def woodruff_percentiles(
    problem: np.ndarray, values: np.ndarray, problems: int, levels: Sequence[float], *, confidence: float
) -> list[Percentile]:
    """Inverted-CDF percentiles of the present (not NaN) values, each with Woodruff's interval over problems."""
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    rows = np.asarray(problem, dtype=np.intp)[present]
    y = np.sort(values[present], kind="stable")
    x = values[present]
    total = y.size
    counts = np.bincount(rows, minlength=problems).astype(np.float64)
    m = int(np.count_nonzero(counts))
    out: list[Percentile] = []
    if total == 0:
        return [Percentile(q, Figure(None, None, None, confidence, 0, None, "none", "no sample"), None) for q in levels]
    crit = float(student_t.ppf(1.0 - (1.0 - confidence) / 2.0, m - 1)) if m > 1 else math.inf
    for level in levels:
        rank = max(int(math.ceil(level * total - 1e-9 * total)), 1)
        estimate = float(y[rank - 1])
        # Per problem, its samples below the estimate, plus its share of the samples at it that brings the total
        # to exactly level x N: the CDF at the true percentile is the level, not the step's top. (At a p99 that
        # is the largest value, counting that sample whole leaves no spread at all.)
        strictly = np.bincount(rows[x < estimate], minlength=problems).astype(np.float64)
        at = np.bincount(rows[x == estimate], minlength=problems).astype(np.float64)
        below = strictly + at * ((level * total - strictly.sum()) / at.sum())
        deviation = below - level * counts
        se = math.sqrt(m / (m - 1) * float(np.sum(deviation**2))) / total if m > 1 else 0.0
        above = counts - strictly - at
        notes: list[str] = []
        if se == 0.0:
            reason = "one problem" if m < 2 else "no spread over problems at this percentile"
            figure = Figure(estimate, None, None, confidence, 0, None, "none", f"no interval: {reason}")
            out.append(Percentile(level, figure, None))
            continue
        low_rank = int(math.ceil((level - crit * se) * total - 1e-9 * total))
        high_rank = int(math.ceil((level + crit * se) * total - 1e-9 * total))
        low = float(y[low_rank - 1]) if low_rank >= 1 else None
        high = float(y[high_rank - 1]) if high_rank < total else None
        if low is None:
            notes.append("the lower bound lies below the smallest value observed (open)")
        if high is None:
            notes.append("the upper bound lies beyond the largest value observed (open)")
        tail = float(above.sum() ** 2 / np.sum(above**2)) if above.sum() > 0 else 0.0
        if tail < THIN_TAIL_PROBLEMS:
            notes.append(
                f"only {int(above.sum())} samples from about {tail:.1f} problems lie above it: the interval is rough"
            )
        influence = None
        standard_error = None
        if low is not None and high is not None:
            standard_error = (high - low) / (2.0 * crit)
            if high > low:
                slope = 2.0 * crit * se / (high - low)
                influence = deviation / (total * slope)
        figure = Figure(estimate, low, high, confidence, 0, standard_error, "woodruff", "; ".join(notes) or None)
        out.append(Percentile(level, figure, influence))
    return out


def _paired_percentile(base: Percentile, candidate: Percentile, m: int, confidence: float) -> list[Figure]:
    """candidate - base and candidate / base - 1 of one percentile, linearised over the m shared problems."""
    b, c = base.figure, candidate.figure
    if b.estimate is None or c.estimate is None:
        return [Figure(None, None, None, confidence, 0, None, "none", "no value")] * 2
    difference, relative = c.estimate - b.estimate, (c.estimate / b.estimate - 1.0 if b.estimate > 0 else math.nan)
    if base.influence is None or candidate.influence is None or b.estimate <= 0 or c.estimate <= 0:
        note = "no interval: a run's own interval of this percentile is open or missing"
        return [Figure(difference, None, None, confidence, 0, None, "none", note),
                Figure(_finite(relative), None, None, confidence, 0, None, "none", note)]
    m = max(m, 2)
    crit = float(student_t.ppf(1.0 - (1.0 - confidence) / 2.0, m - 1))
    factor = m / (m - 1)
    se_difference = math.sqrt(factor * float(np.sum((candidate.influence - base.influence) ** 2)))
    # the ratio on the log scale, where it is symmetric
    se_log = math.sqrt(factor * float(np.sum((candidate.influence / c.estimate - base.influence / b.estimate) ** 2)))
    log_ratio = math.log(c.estimate / b.estimate)
    low_r, high_r = math.expm1(log_ratio - crit * se_log), math.expm1(log_ratio + crit * se_log)
    return [
        Figure(difference, difference - crit * se_difference, difference + crit * se_difference, confidence, 0,
               se_difference, "woodruff, linearised"),
        Figure(relative, low_r, high_r, confidence, 0, (high_r - low_r) / (2.0 * crit), "woodruff, linearised"),
    ]


def bootstrap_distribution(
    problems: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(point estimate, bootstrap distribution) of a statistic of resampled problems.

    statistic maps a (rows x problems) block of problem indices to (rows,) or (rows, m)
    values. The blocks are exactly those pass@k's bootstrap draws for this seed and number of
    problems, so the figures share its resampled problems.
    """
    if problems < 1:
        raise ValueError("at least one problem is needed")
    estimate = np.atleast_1d(np.asarray(statistic(np.arange(problems, dtype=np.intp)[None, :]), dtype=np.float64))
    estimate = estimate.reshape(-1)
    parts: list[np.ndarray] = []
    for idx in index_chunks(np.random.default_rng(seed), problems, resamples):
        part = np.asarray(statistic(idx), dtype=np.float64)
        parts.append(part.reshape(idx.shape[0], -1))
    return estimate, np.vstack(parts)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def figures_from_distribution(
    estimate: np.ndarray, distribution: np.ndarray, *, confidence: float, undefined: str = "undefined"
) -> list[Figure]:
    """Percentile interval per column. A NaN or infinite resample (e.g. no pass) makes a bound unbounded.

    NaN (0/0) sorts as +infinity here: a resample where the figure does not exist cannot
    vouch for either bound, so the bound it could reach is reported as missing (None).
    """
    resamples = distribution.shape[0]
    alpha = 1.0 - confidence
    out: list[Figure] = []
    for j in range(distribution.shape[1]):
        value = float(estimate[j])
        column = np.where(np.isnan(distribution[:, j]), np.inf, distribution[:, j])
        ordered = np.sort(column)
        finite = ordered[np.isfinite(ordered)]
        bad = resamples - finite.size
        if not math.isfinite(value):
            out.append(Figure(None, None, None, confidence, resamples, None, "none", undefined))
            continue
        # the same interpolated quantiles as pass@k's percentile interval; infinities sort to the top
        with np.errstate(invalid="ignore"):
            low, high = (float(v) for v in sorted_quantiles(ordered, np.array([alpha / 2, 1 - alpha / 2])))
        note = None
        if bad:
            note = f"{bad} of {resamples} resamples: {undefined}; the bound they reach is unbounded"
        spread = float(np.std(finite, ddof=1)) if finite.size > 1 else None
        out.append(
            Figure(value, _finite(low), _finite(high), confidence, resamples, spread if not bad else None, note=note)
        )
    return out


def incremental_cost_per_success(
    base_cost: float, base_rate: float, candidate_cost: float, candidate_rate: float
) -> float | None:
    """What each extra success of the candidate costs: (cost_b - cost_a) / (rate_b - rate_a), per request.

    Seed 004: 4 more points of success for $0.019 more per request is 0.019 / 0.04 = $0.475 per extra
    success. None when the success rates are equal (no extra success to price).
    """
    gain = candidate_rate - base_rate
    if gain == 0:
        return None
    return (candidate_cost - base_cost) / gain


def validate(resamples: int, confidence: float, seed: int) -> tuple[int, float, int]:
    resamples_, confidence_, seed_, _ = validate_options(resamples, confidence, seed)
    return resamples_, confidence_, seed_


# ---- one run's operating figures ----------------------------------------------------------------------


@dataclass(frozen=True)
class SampleColumns:
    """Per-sample values of one run's finished samples (sandbox errors excluded); NaN where not sent."""

    problem: np.ndarray  # row (0..problems-1) of the sample's problem, as in the pass@k columns
    passed: np.ndarray  # 1.0 passed, 0.0 any other model verdict
    cost: np.ndarray
    latency_ms: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    confidence: np.ndarray
    steps: np.ndarray

    @classmethod
    def empty(cls) -> SampleColumns:
        e = np.empty(0)
        return cls(np.empty(0, dtype=np.intp), e, e, e, e, e, e, e)

    def present(self, name: str) -> int:
        return int(np.count_nonzero(~np.isnan(getattr(self, name))))


@dataclass(frozen=True)
class CostAtK:
    k: int
    per_problem: Figure  # k samples per problem: k x mean cost per sample
    per_solved_problem: Figure  # k x mean cost / pass@k


@dataclass(frozen=True)
class CostSummary:
    samples: int  # samples that carry a cost (the figures use only these)
    passes: int  # passes among them
    total: float
    mean_per_sample: Figure
    per_success: Figure  # total cost / passes
    at_k: list[CostAtK]


@dataclass(frozen=True)
class LatencySummary:
    samples: int
    mean: float
    p50: Figure
    p95: Figure
    p99: Figure


@dataclass(frozen=True)
class TokenSummary:
    samples: int
    total_input: float
    total_output: float
    mean_input: Figure | None  # None if no sample sent input_tokens
    mean_output: Figure | None


@dataclass(frozen=True)
class StepsSummary:
    samples: int
    mean: Figure
    per_success: Figure  # total steps / passes


@dataclass(frozen=True)
class OperatingSummary:
    cost: CostSummary | None
    latency: LatencySummary | None
    tokens: TokenSummary | None
    steps: StepsSummary | None


def operating_summary(
    columns: SampleColumns,
    problems: int,
    pass_at_k: np.ndarray,
    ks: Sequence[int],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> OperatingSummary:
    """Cost, latency, token and step figures with intervals on pass@k's resampled problems.

    pass_at_k: (problems x len(ks)) per-problem pass@k, the columns pass@k's bootstrap resamples.
    """
    resamples, confidence, seed = validate(resamples, confidence, seed)
    at_k = np.asarray(pass_at_k, dtype=np.float64).reshape(problems, len(ks))
    parts: list[tuple[str, Callable[[np.ndarray], np.ndarray], int]] = []
    has = {name: columns.present(name) for name in ("cost", "latency_ms", "input_tokens", "output_tokens", "steps")}

    if has["cost"]:
        cost_sum, cost_n = problem_sums(columns.problem, columns.cost, problems)
        with_cost = np.where(np.isnan(columns.cost), np.nan, columns.passed)
        cost_pass, _ = problem_sums(columns.problem, with_cost, problems)
        mean_cost = ratio_of_sums(cost_sum, cost_n)

        pass_estimates = column_means(at_k)

        def cost_columns(idx: np.ndarray) -> np.ndarray:
            mean = mean_cost(idx)
            per_success = ratio_of_sums(cost_sum, cost_pass)(idx)
            # pass@k's own resampled means, stretched as its interval's are, so that a constant cost per sample
            # gives cost per solved problem exactly the bounds cost / pass@k's bounds
            pass_means = rescaled(
                np.stack([np.take(at_k[:, j], idx).mean(axis=1) for j in range(len(ks))], axis=1),
                pass_estimates, problems,
            )
            k_arr = np.asarray(ks, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                per_problem = mean[:, None] * k_arr
                per_solved = per_problem / pass_means
            return np.column_stack([mean, per_success, per_problem, per_solved])

        parts.append(("cost", cost_columns, 2 + 2 * len(ks)))
    token_names = [n for n in ("input_tokens", "output_tokens") if has[n]]
    for name in token_names:
        sums, counts = problem_sums(columns.problem, getattr(columns, name), problems)
        parts.append((name, ratio_of_sums(sums, counts), 1))
    if has["steps"]:
        step_sum, step_n = problem_sums(columns.problem, columns.steps, problems)
        with_steps = np.where(np.isnan(columns.steps), np.nan, columns.passed)
        step_pass, _ = problem_sums(columns.problem, with_steps, problems)

        def steps_columns(idx: np.ndarray) -> np.ndarray:
            return np.column_stack([ratio_of_sums(step_sum, step_n)(idx), ratio_of_sums(step_sum, step_pass)(idx)])

        parts.append(("steps", steps_columns, 2))
    latency = None
    if has["latency_ms"]:
        p50, p95, p99 = (
            q.figure for q in woodruff_percentiles(
                columns.problem, columns.latency_ms, problems, PERCENTILES, confidence=confidence
            )
        )
        values = columns.latency_ms[~np.isnan(columns.latency_ms)]
        latency = LatencySummary(has["latency_ms"], float(values.mean()), p50, p95, p99)
    if not parts:
        return OperatingSummary(None, latency, None, None)

    def statistic(idx: np.ndarray) -> np.ndarray:
        return np.column_stack([np.asarray(f(idx), dtype=np.float64).reshape(idx.shape[0], -1) for _, f, _ in parts])

    estimate, distribution = bootstrap_distribution(problems, statistic, resamples=resamples, seed=seed)
    by_name: dict[str, list[Figure]] = {}
    start = 0
    for name, _, width in parts:
        undefined = {"cost": "no pass (or pass@k = 0)", "steps": "no pass"}.get(name, "no sample")
        by_name[name] = figures_from_distribution(
            estimate[start : start + width], distribution[:, start : start + width],
            confidence=confidence, undefined=undefined,
        )
        start += width

    cost = tokens = steps = None
    if "cost" in by_name:
        f = by_name["cost"]
        present = ~np.isnan(columns.cost)
        cost = CostSummary(
            samples=has["cost"],
            passes=int(columns.passed[present].sum()),
            total=float(columns.cost[present].sum()),
            mean_per_sample=f[0],
            per_success=f[1],
            at_k=[CostAtK(k, f[2 + j], f[2 + len(ks) + j]) for j, k in enumerate(ks)],
        )
    if token_names:
        total = {n: float(np.nansum(getattr(columns, n))) for n in token_names}
        tokens = TokenSummary(
            samples=max(has["input_tokens"], has["output_tokens"]),
            total_input=total.get("input_tokens", 0.0),
            total_output=total.get("output_tokens", 0.0),
            mean_input=by_name["input_tokens"][0] if "input_tokens" in by_name else None,
            mean_output=by_name["output_tokens"][0] if "output_tokens" in by_name else None,
        )
    if "steps" in by_name:
        steps = StepsSummary(has["steps"], by_name["steps"][0], by_name["steps"][1])
    return OperatingSummary(cost, latency, tokens, steps)


# ---- two runs on the same problems ------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedFigure:
    """One figure for both runs and candidate - base, candidate / base - 1, all on the same resampled problems."""

    base: Figure
    candidate: Figure
    difference: Figure
    relative_difference: Figure


PAIRED_FIGURES: tuple[str, ...] = ("mean_cost_per_sample", "cost_per_success", "latency_p95_ms", "brier")


def _figure_statistics(columns: SampleColumns, problems: int) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    out: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
    if columns.present("cost"):
        cost_sum, cost_n = problem_sums(columns.problem, columns.cost, problems)
        cost_pass, _ = problem_sums(columns.problem, np.where(np.isnan(columns.cost), np.nan, columns.passed), problems)
        out["mean_cost_per_sample"] = ratio_of_sums(cost_sum, cost_n)
        out["cost_per_success"] = ratio_of_sums(cost_sum, cost_pass)
    if columns.present("confidence"):
        squared = np.where(np.isnan(columns.confidence), np.nan, (columns.confidence - columns.passed) ** 2)
        sums, counts = problem_sums(columns.problem, squared, problems)
        out["brier"] = ratio_of_sums(sums, counts)
    return out


def paired_figures(
    base: SampleColumns,
    candidate: SampleColumns,
    problems: int,
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, PairedFigure]:
    """Paired cost, latency and calibration figures; rows of both runs are the same problems.

    Only figures both runs carry are compared. Ratios of sums: a paired bootstrap, each resample drawing one
    set of problems for both runs (pass@k's own index matrix for this seed). The p95 latency: each run's
    Woodruff interval, and the difference (and the ratio, on the log scale) linearised over the shared problems.
    """
    resamples, confidence, seed = validate(resamples, confidence, seed)
    stats_b = _figure_statistics(base, problems)
    stats_c = _figure_statistics(candidate, problems)
    names = [name for name in PAIRED_FIGURES if name in stats_b and name in stats_c]
    out: dict[str, PairedFigure] = {}
    if base.present("latency_ms") and candidate.present("latency_ms"):
        (b,) = woodruff_percentiles(base.problem, base.latency_ms, problems, (0.95,), confidence=confidence)
        (c,) = woodruff_percentiles(candidate.problem, candidate.latency_ms, problems, (0.95,), confidence=confidence)
        shared = np.union1d(base.problem[~np.isnan(base.latency_ms)], candidate.problem[~np.isnan(candidate.latency_ms)])
        out["latency_p95_ms"] = PairedFigure(b.figure, c.figure, *_paired_percentile(b, c, shared.size, confidence))
    if not names:
        return _in_order(out)

    def statistic(idx: np.ndarray) -> np.ndarray:
        blocks = []
        for name in names:
            b = stats_b[name](idx)
            c = stats_c[name](idx)
            with np.errstate(divide="ignore", invalid="ignore"):
                blocks.append(np.column_stack([b, c, c - b, c / b - 1.0]))
        return np.hstack(blocks)

    estimate, distribution = bootstrap_distribution(problems, statistic, resamples=resamples, seed=seed)
    for i, name in enumerate(names):
        undefined = "no pass" if name == "cost_per_success" else "no value"
        figures = figures_from_distribution(
            estimate[4 * i : 4 * i + 4], distribution[:, 4 * i : 4 * i + 4], confidence=confidence,
            undefined=undefined,
        )
        out[name] = PairedFigure(*figures)
    return _in_order(out)


def _in_order(figures: dict[str, PairedFigure]) -> dict[str, PairedFigure]:
    return {name: figures[name] for name in PAIRED_FIGURES if name in figures}
