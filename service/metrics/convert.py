"""Statistics dataclasses -> response models; shared by /metrics, /compare and `passk report --json`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.metrics.schemas import (
    AverageMetrics,
    DiversityOut,
    GroupsOut,
    HistogramOut,
    IntervalOut,
    KMetric,
    PluginOut,
    TagMetrics,
)
from service.statistics import Interval
from service.statistics.groups import GroupSummary
from service.statistics.summary import (
    DEFAULT_RESAMPLES,
    PLUGIN_AT_LABEL,
    PLUGIN_HAT_LABEL,
    Histogram,
    KSummary,
)


METHOD_NAMES = {"bca": "BCa", "percentile": "percentile", "clopper-pearson": "Clopper-Pearson (exact)"}


def interval_label(confidence: float, method_used: str, resamples: int) -> str:
    """What a bracket is, as every surface prints it: "95 % BCa", "90 % percentile, 2,000 resamples".

    The resample count is named only where it differs from the server's default; an exact bound
    has none; "no interval" where none exists (one problem, or all problems equal).
    """
    if method_used == "none":
        return "no interval"
    label = f"{100 * confidence:g} % {METHOD_NAMES.get(method_used, method_used)}"
    if method_used in ("bca", "percentile") and resamples != DEFAULT_RESAMPLES:
        label += f", {resamples:,} resamples"
    return label


def interval_out(interval: Interval) -> IntervalOut:
    fields = {f: getattr(interval, f) for f in IntervalOut.model_fields if f != "label"}
    return IntervalOut(**fields, label=interval_label(interval.confidence, interval.method_used, interval.resamples))


def k_metrics(ks: Sequence[int], intervals: Sequence[Interval]) -> list[KMetric]:
    """Columns are [pass@k for each k, pass^k for each k], as summarize stacks them."""
    return [
        KMetric(k=k, pass_at_k=interval_out(intervals[j]), pass_hat_k=interval_out(intervals[len(ks) + j]))
        for j, k in enumerate(ks)
    ]


def metric_out(summary: KSummary) -> KMetric:
    def plugin(value: float | None, label: str) -> PluginOut | None:
        return None if value is None else PluginOut(estimate=value, label=label)

    return KMetric(
        k=summary.k,
        pass_at_k=interval_out(summary.pass_at_k),
        pass_hat_k=interval_out(summary.pass_hat_k),
        plugin_pass_at_k=plugin(summary.plugin_pass_at_k, PLUGIN_AT_LABEL),
        plugin_pass_hat_k=plugin(summary.plugin_pass_hat_k, PLUGIN_HAT_LABEL),
    )


def histogram_out(histogram: Histogram) -> HistogramOut:
    return HistogramOut(
        bin_edges=histogram.bin_edges,
        counts=histogram.counts,
        never_solved=histogram.never_solved,
        always_solved=histogram.always_solved,
    )


def groups_out(groups: GroupSummary, ks: Sequence[int]) -> GroupsOut:
    micro = macro = None
    if groups.groups:
        micro = AverageMetrics(
            label=groups.micro_label, problems=groups.micro_problems, groups=len(groups.groups),
            metrics=k_metrics(ks, groups.micro),
        )
        macro = AverageMetrics(
            label=groups.macro_label, problems=groups.micro_problems, groups=len(groups.groups),
            metrics=k_metrics(ks, groups.macro),
        )
    return GroupsOut(
        tag_prefix=groups.tag_prefix,
        untagged_problems=groups.untagged_problems,
        overlapping=groups.overlapping,
        groups=[TagMetrics(tag=g.tag, problems=g.problems, metrics=k_metrics(ks, g.intervals)) for g in groups.groups],
        micro=micro,
        macro=macro,
    )


def diversity_out(known: Sequence[tuple[int, int]]) -> DiversityOut | None:
    """Summary of (distinct programs, samples) per problem."""
    if not known:
        return None
    return DiversityOut(
        mean_distinct_fraction=float(np.mean([d / t for d, t in known])),
        min_distinct_programs=min(d for d, _ in known),
        problems_with_duplicates=sum(1 for d, t in known if d < t),
        single_program_problems=sum(1 for d, t in known if d == 1 and t > 1),
    )
