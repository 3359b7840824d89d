"""Everything reported about one run, from per-problem counts: the API and `passk report` share it.

Pure: (problem ids, n, c[, tags]) in, dataclasses out. The API adds what only
the database knows (run metadata, progress, distinct programs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.statistics.bootstrap import bootstrap_means, validate_options
from service.statistics.estimators import (
    KTooLarge,
    per_problem_estimates,
    plugin_estimates,
)
from service.statistics.groups import GroupSummary, group_intervals
from service.statistics.intervals import FEW_PROBLEMS, Interval, Method

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_METHOD",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "HISTOGRAM_BINS",
    "FEW_PROBLEMS",
    "Histogram",
    "KBound",
    "KSummary",
    "Options",
    "RunEstimates",
    "pass_rate_histogram",
    "summarize",
]

HISTOGRAM_BINS = 10
# The server's default interval: every surface (API, CLI, dashboard, `passk report`) asks for this one,
# so the same run shows the same bracket everywhere.
DEFAULT_METHOD: Method = "bca"
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
# Problem ids listed as the ones bounding k; the count is always given in full.
MAX_LISTED_IDS = 20

PLUGIN_AT_LABEL = "BIASED plug-in 1 - (1 - c/n)^k: underestimates pass@k (concave in c/n, Jensen); for comparison only"
PLUGIN_HAT_LABEL = "BIASED plug-in (c/n)^k: overestimates pass^k (convex in c/n, Jensen); for comparison only"


@dataclass(frozen=True)
class Options:
    ks: Sequence[int]
    method: Method = DEFAULT_METHOD
    confidence: float = DEFAULT_CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    plugin: bool = False
    group_by_tag: bool = False
    tag_prefix: str | None = None


@dataclass(frozen=True)
class KSummary:
    k: int
    pass_at_k: Interval
    pass_hat_k: Interval
    plugin_pass_at_k: float | None = None
    plugin_pass_hat_k: float | None = None


@dataclass(frozen=True)
class Histogram:
    """Problems by pass rate c/n; usually bimodal (many never solved, many always solved)."""

    bin_edges: list[float]
    counts: list[int]  # bin i is [edge_i, edge_i+1); the last bin includes 1.0
    never_solved: int  # c = 0
    always_solved: int  # c = n


@dataclass(frozen=True)
class KBound:
    """The largest k every problem supports, and the problems (smallest n) that set it."""

    k_max_allowed: int
    problem_ids: list[str]  # at most MAX_LISTED_IDS
    problems: int  # how many problems have n = k_max_allowed


@dataclass(frozen=True)
class RunEstimates:
    problems: int
    samples: int
    n_min: int
    n_max: int
    k_bound: KBound
    metrics: list[KSummary]
    histogram: Histogram
    groups: GroupSummary | None = None
    warnings: list[str] = field(default_factory=list)


def pass_rate_histogram(ns: np.ndarray, cs: np.ndarray, bins: int = HISTOGRAM_BINS) -> Histogram:
    # Bin floor(bins * c / n) in integers: with float edges 3/10 would land below the 0.3 edge.
    index = np.minimum((cs * bins) // ns, bins - 1)
    counts = np.bincount(index, minlength=bins)
    return Histogram(
        bin_edges=[i / bins for i in range(bins + 1)],
        counts=[int(c) for c in counts],
        never_solved=int(np.count_nonzero(cs == 0)),
        always_solved=int(np.count_nonzero(cs == ns)),
    )


def k_bound(ids: Sequence[str], ns: np.ndarray) -> KBound:
    n_min = int(ns.min())
    rows = np.flatnonzero(ns == n_min)
    return KBound(n_min, [ids[i] for i in rows[:MAX_LISTED_IDS]], int(rows.size))


def effective_problem_warnings(metrics: Sequence[KSummary], problems: int) -> list[str]:
    """One warning per pass@k / pass^k whose estimate rests on fewer than FEW_PROBLEMS problems (effectively).

    Left out below FEW_PROBLEMS problems in all, where the run's own warning already says it (each interval's
    `warning` still does).
    """
    if problems < FEW_PROBLEMS:
        return []
    out: list[str] = []
    for m in metrics:
        for name, interval in ((f"pass@{m.k}", m.pass_at_k), (f"pass^{m.k}", m.pass_hat_k)):
            if interval.warning is not None:
                out.append(f"{name}: {interval.warning}")
    return out


def _warnings(ns: np.ndarray, options: Options) -> list[str]:
    out: list[str] = []
    problems = int(ns.size)
    if problems < FEW_PROBLEMS:
        out.append(
            f"only {problems} problem{'s' if problems != 1 else ''}: intervals over so few problems "
            "are unreliable (bootstrap intervals tend to be too narrow)"
        )
    if int(ns.min()) != int(ns.max()):
        out.append(
            f"unequal n per problem ({int(ns.min())} to {int(ns.max())}): every problem weighs the same in the "
            "mean; problems with fewer samples have noisier per-problem estimates"
        )
    return out


def canonical_order(ids: Sequence[str]) -> list[int]:
    """Positions of ids sorted by id (code point order): the order problems are resampled in.

    The bootstrap draws row indices, so the same problems in another order give another
    interval. Sorting first makes the interval a function of the (id, n, c) set alone: the
    API (dataset order) and `passk report` (file order, possibly shuffled) agree exactly.
    """
    return sorted(range(len(ids)), key=lambda i: ids[i])


def summarize(
    ids: Sequence[str],
    ns: np.ndarray,
    cs: np.ndarray,
    options: Options,
    tags: Sequence[Sequence[str]] | None = None,
) -> RunEstimates:
    """The full per-run report. Raises KTooLarge if a k exceeds the smallest n (n = 0 included).

    Independent of the order of the problems (see canonical_order).
    """
    resamples, confidence, seed, method = validate_options(
        options.resamples, options.confidence, options.seed, options.method
    )
    order = canonical_order(ids)
    ids = [ids[i] for i in order]
    ns_arr = np.asarray(ns, dtype=np.int64)[order] if order else np.asarray(ns, dtype=np.int64)
    cs_arr = np.asarray(cs, dtype=np.int64)[order] if order else np.asarray(cs, dtype=np.int64)
    if tags is not None:
        tags = [tags[i] for i in order]
    ks = list(options.ks)
    if ns_arr.size and ns_arr.min() == 0:
        # Every sample of these problems ended in sandbox_error: for the client that is k > n.
        raise KTooLarge(max(ks), 0, [ids[i] for i in np.flatnonzero(ns_arr == 0)])
    pass_at, pass_hat = per_problem_estimates(ns_arr, cs_arr, ks, ids)
    # One bootstrap over every column: both metrics and every k share the resampled problems.
    columns = np.hstack([pass_at, pass_hat])
    intervals = bootstrap_means(columns, resamples=resamples, confidence=confidence, seed=seed, method=method)
    plugin_at = plugin_hat = None
    if options.plugin:
        plugin_at, plugin_hat = plugin_estimates(ns_arr, cs_arr, ks)
    metrics = [
        KSummary(
            k,
            intervals[j],
            intervals[len(ks) + j],
            None if plugin_at is None else float(plugin_at[:, j].mean()),
            None if plugin_hat is None else float(plugin_hat[:, j].mean()),
        )
        for j, k in enumerate(ks)
    ]
    groups = None
    if options.group_by_tag:
        groups = group_intervals(
            columns, tags if tags is not None else [[] for _ in ids], tag_prefix=options.tag_prefix,
            resamples=resamples, confidence=confidence, seed=seed, method=method,
        )
    warnings = _warnings(ns_arr, options) + effective_problem_warnings(metrics, int(ns_arr.size))
    if groups is not None:
        warnings += groups.warnings
    return RunEstimates(
        problems=int(ns_arr.size),
        samples=int(ns_arr.sum()),
        n_min=int(ns_arr.min()),
        n_max=int(ns_arr.max()),
        k_bound=k_bound(ids, ns_arr),
        metrics=metrics,
        histogram=pass_rate_histogram(ns_arr, cs_arr),
        groups=groups,
        warnings=warnings,
    )
