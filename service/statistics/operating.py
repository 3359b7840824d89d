"""What a run costs and how long it takes: cost per sample, cost per success, latency percentiles, tokens.

Pure functions over per-sample values grouped by problem. Every interval is a bootstrap over
problems that draws exactly the index matrix pass@k draws for the same seed and number of
problems (`bootstrap.index_chunks` on `default_rng(seed)`), so "cost per success" and "pass@1"
of one response describe the same resampled problem sets. A resampled problem brings all its
samples, with its multiplicity.

Ratios are ratios of sums (total cost / passes), never means of per-problem ratios: seed 004's
"cost per success = cost per request / success rate" is total cost / total passes.

Percentiles use the inverted-CDF definition (the smallest value x with F(x) >= q, numpy's
`method="inverted_cdf"`): a reported p95 latency is a latency that was observed, and a
resample that repeats a problem's samples weighs them by the repetition.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from service.statistics.bootstrap import index_chunks, validate_options
from service.statistics.intervals import sorted_quantiles

__all__ = [
    "CostAtK",
    "CostSummary",
    "Figure",
    "LatencySummary",
    "OperatingSummary",
    "PAIRED_FIGURES",
    "PairedFigure",
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
    "ratio_of_sums",
    "weighted_percentiles",
    "PooledValues",
]

PERCENTILES: tuple[float, ...] = (0.50, 0.95, 0.99)

# Elements of one (rows x samples) weight block in weighted_percentiles (~8 MB as float64).
_BLOCK_ELEMENTS = 1 << 20
# Up to this many pooled samples, percentiles walk every sample of every resample.
_DIRECT_SAMPLES = 20_000
# Cuts ~ sqrt(factor x samples / problems): a matrix product is far cheaper per element than the
# gathers of a bracket walk, so the balance sits well above the operation-count optimum (3).
_GRID_FACTOR = 1000.0


@dataclass(frozen=True)
class Figure:
    """A point estimate with a percentile bootstrap interval over problems.

    estimate or bounds are None where the figure is undefined (no pass: no cost per success)
    or unbounded (some resamples have no pass), with `note` saying which.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    resamples: int
    standard_error: float | None  # standard deviation of the bootstrap distribution
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


@dataclass(frozen=True)
class PooledValues:
    """Per-sample values of one run pooled over problems, sorted once for percentiles."""

    values: np.ndarray  # ascending
    problem: np.ndarray  # the problem (row) of each sorted value
    _grids: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, problem: np.ndarray, values: np.ndarray) -> PooledValues:
        values = np.asarray(values, dtype=np.float64)
        problem = np.asarray(problem, dtype=np.intp)
        present = ~np.isnan(values)
        order = np.argsort(values[present], kind="stable")
        return cls(values[present][order], problem[present][order])

    @property
    def size(self) -> int:
        return int(self.values.size)

    def grid(self, problems: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(cut ranks, per-problem counts below each cut) for large pools; None where walking every sample is cheap.

        About sqrt(_GRID_FACTOR x samples / problems) cuts balance the matrix product (problems x cuts
        per row) against the walk inside a bracket (samples / cuts per row, per percentile).
        """
        if self.size <= _DIRECT_SAMPLES:
            return None
        cached = self._grids.get(problems)
        if cached is None:
            count = int(np.clip(round(math.sqrt(_GRID_FACTOR * self.size / problems)), 2, 4096))
            cuts = np.unique(np.linspace(0, self.size, count + 1).round().astype(np.intp))
            before = np.zeros((problems, cuts.size))
            for g, cut in enumerate(cuts):
                before[:, g] = np.bincount(self.problem[:cut], minlength=problems)
            cached = self._grids[problems] = (cuts, before)
        return cached


def _multiplicity(block: np.ndarray, problems: int) -> np.ndarray:
    """How many times each problem was drawn in each row of a block of resampled indices, (rows, problems)."""
    size = block.shape[0]
    offsets = block + (np.arange(size, dtype=np.intp) * problems)[:, None]
    return np.bincount(offsets.ravel(), minlength=size * problems).reshape(size, problems)


def _targets(total: np.ndarray, level: float) -> np.ndarray:
    # The inverted CDF's rank: the first cumulative weight reaching q * total (integers, exact up to 2^53).
    return np.maximum(np.ceil(level * total - 1e-9 * total), 1.0)


def _direct(pooled: PooledValues, multiplicity: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cumulative weights over every sorted sample: O(rows x samples)."""
    cumulative = np.cumsum(multiplicity[:, pooled.problem], axis=1, dtype=np.float64)
    total = cumulative[:, -1]
    out = np.empty((multiplicity.shape[0], q.size))
    for j, level in enumerate(q):
        position = np.argmax(cumulative >= _targets(total, level)[:, None], axis=1)
        out[:, j] = np.where(total > 0, pooled.values[position], np.nan)
    return out


def _bracketed(pooled: PooledValues, multiplicity: np.ndarray, q: np.ndarray, cuts: np.ndarray,
               before: np.ndarray) -> np.ndarray:
    """The same answer from a coarse grid of ranks, then exact weights inside one bracket per row.

    before[p, g] counts problem p's samples of rank < cuts[g], so multiplicity @ before is every
    row's cumulative weight at each cut (one matrix product); only the bracket that holds the
    target rank is then walked sample by sample: O(rows x (problems x cuts + samples / cuts)).
    """
    rows = multiplicity.shape[0]
    weight = multiplicity.astype(np.float64)
    at_cut = weight @ before  # (rows, cuts)
    total = at_cut[:, -1]
    width = int(np.max(np.diff(cuts)))
    steps = np.arange(width, dtype=np.intp)
    row_index = np.arange(rows)[:, None]
    out = np.empty((rows, q.size))
    for j, level in enumerate(q):
        target = _targets(total, level)
        bracket = np.clip(np.sum(at_cut < target[:, None], axis=1) - 1, 0, cuts.size - 2)
        start = cuts[bracket]
        position = np.minimum(start[:, None] + steps, pooled.size - 1)
        inside = (start[:, None] + steps) < cuts[bracket + 1][:, None]
        cumulative = at_cut[np.arange(rows), bracket][:, None] + np.cumsum(
            np.where(inside, weight[row_index, pooled.problem[position]], 0.0), axis=1
        )
        offset = np.argmax(cumulative >= target[:, None], axis=1)
        out[:, j] = np.where(total > 0, pooled.values[position[np.arange(rows), offset]], np.nan)
    return out


def weighted_percentiles(
    pooled: PooledValues, idx: np.ndarray, problems: int, quantiles: Sequence[float] = PERCENTILES
) -> np.ndarray:
    """Inverted-CDF percentiles of the samples of each row's resampled problems, shape (rows, len(quantiles)).

    A problem drawn m times counts each of its samples m times. NaN for a row with no sample.
    Small runs walk every sample; large ones (1,000 problems x 200 samples) use a grid of
    ranks first, so 10,000 resamples stay around a second instead of minutes.
    """
    rows = idx.shape[0]
    q = np.asarray(quantiles, dtype=np.float64)
    out = np.full((rows, q.size), np.nan)
    if pooled.size == 0:
        return out
    grid = pooled.grid(problems)
    per_row = problems + (pooled.size if grid is None else int(np.max(np.diff(grid[0]))))
    step = max(1, _BLOCK_ELEMENTS // per_row)
    for start in range(0, rows, step):
        multiplicity = _multiplicity(idx[start : start + step], problems)
        block = _direct(pooled, multiplicity, q) if grid is None else _bracketed(pooled, multiplicity, q, *grid)
        out[start : start + block.shape[0]] = block
    return out


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

        def cost_columns(idx: np.ndarray) -> np.ndarray:
            mean = mean_cost(idx)
            per_success = ratio_of_sums(cost_sum, cost_pass)(idx)
            pass_means = np.stack([np.take(at_k[:, j], idx).mean(axis=1) for j in range(len(ks))], axis=1)
            k_arr = np.asarray(ks, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                per_problem = mean[:, None] * k_arr
                per_solved = per_problem / pass_means
            return np.column_stack([mean, per_success, per_problem, per_solved])

        parts.append(("cost", cost_columns, 2 + 2 * len(ks)))
    if has["latency_ms"]:
        pooled = PooledValues.of(columns.problem, columns.latency_ms)
        parts.append(("latency", lambda idx: weighted_percentiles(pooled, idx, problems), len(PERCENTILES)))
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
    if not parts:
        return OperatingSummary(None, None, None, None)

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

    cost = latency = tokens = steps = None
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
    if "latency" in by_name:
        p50, p95, p99 = by_name["latency"]
        values = columns.latency_ms[~np.isnan(columns.latency_ms)]
        latency = LatencySummary(has["latency_ms"], float(values.mean()), p50, p95, p99)
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
    if columns.present("latency_ms"):
        pooled = PooledValues.of(columns.problem, columns.latency_ms)
        out["latency_p95_ms"] = lambda idx: weighted_percentiles(pooled, idx, problems, (0.95,))[:, 0]
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
    """Paired bootstrap of cost and latency figures; rows of both runs are the same problems.

    Only figures both runs carry are compared. Each resample draws one set of problems for both
    runs (pass@k's own index matrix for this seed), so the difference is paired.
    """
    resamples, confidence, seed = validate(resamples, confidence, seed)
    stats_b = _figure_statistics(base, problems)
    stats_c = _figure_statistics(candidate, problems)
    names = [name for name in PAIRED_FIGURES if name in stats_b and name in stats_c]
    if not names:
        return {}

    def statistic(idx: np.ndarray) -> np.ndarray:
        blocks = []
        for name in names:
            b = stats_b[name](idx)
            c = stats_c[name](idx)
            with np.errstate(divide="ignore", invalid="ignore"):
                blocks.append(np.column_stack([b, c, c - b, c / b - 1.0]))
        return np.hstack(blocks)

    estimate, distribution = bootstrap_distribution(problems, statistic, resamples=resamples, seed=seed)
    out: dict[str, PairedFigure] = {}
    for i, name in enumerate(names):
        undefined = "no pass" if name == "cost_per_success" else "no value"
        figures = figures_from_distribution(
            estimate[4 * i : 4 * i + 4], distribution[:, 4 * i : 4 * i + 4], confidence=confidence,
            undefined=undefined,
        )
        out[name] = PairedFigure(*figures)
    return out
