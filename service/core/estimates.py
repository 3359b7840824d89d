"""Estimates with their intervals as every surface shows them: the response models of pass@k and pass^k
per k, the histogram, diversity and tag groups, and their conversion from the statistics' dataclasses.

Shared by the API (/metrics, /compare, the multi-run endpoints) and `passk report --json`, which prints
exactly what GET /v1/runs/{id}/metrics returns without a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from service.statistics import Interval
from service.statistics.groups import GroupSummary
from service.statistics.summary import (
    DEFAULT_RESAMPLES,
    PLUGIN_AT_LABEL,
    PLUGIN_HAT_LABEL,
    Histogram,
    KSummary,
)

INTERVAL_EXAMPLE = {
    "estimate": 0.412,
    "ci_low": 0.338,
    "ci_high": 0.488,
    "confidence": 0.95,
    "standard_error": 0.038,
    "method": "bca",
    "method_used": "bca",
    "fallback_reason": None,
    "resamples": 10000,
    "label": "95 % BCa",
    "standard_error_note": None,
    "effective_problems": 151.3,
    "warning": None,
}

class IntervalOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [INTERVAL_EXAMPLE]})

    estimate: float = Field(description="Mean over problems of the unbiased per-problem estimate.")
    ci_low: float | None = Field(description="Null when no interval exists (one problem, or every problem has the same value).")
    ci_high: float | None
    confidence: float
    standard_error: float | None = Field(
        description="CLT standard error: standard deviation over problems / sqrt(problems), which the bootstrap "
        "interval beside it agrees with. Null where no standard error describes the interval (an exact "
        "Clopper-Pearson bound, no interval); for a `widened` macro interval, its half-width over z. "
        "`standard_error_note` says which."
    )
    method: str = Field(description="Interval method asked for: a bootstrap over problems (the sampling unit).")
    method_used: str = Field(
        description="Method that produced ci_low/ci_high: `bca`, `percentile`, `clopper-pearson` (exact bound when "
        "every problem scores 0 or every problem scores 1), `widened` (a macro average with a group that cannot "
        "vary, bounded instead) or `none` (no interval exists, e.g. one problem)."
    )
    fallback_reason: str | None = Field(
        None, description="Why method_used differs from method, if it does; always set when the interval is degenerate."
    )
    resamples: int
    label: str = Field(
        description="What the bracket is, as the CLI and dashboard print it: `95 % BCa`; the resample count is added "
        "where it differs from the default (10,000), `no interval` where none exists."
    )
    standard_error_note: str | None = Field(
        None, description="Why standard_error is null, or how it was made when it is not the CLT one."
    )
    effective_problems: float | None = Field(
        None,
        description="(sum x)^2 / sum x^2 over the per-problem values: how many problems carry the estimate (a "
        "pass^100 that three problems make up rests on about 3, whatever the number of problems). Null where "
        "every problem scores 0, or for a difference.",
    )
    warning: str | None = Field(
        None, description="Set when effective_problems is under 30: the interval is unreliable (likely too narrow)."
    )


class PluginOut(BaseModel):
    estimate: float = Field(description="Mean over problems of the plug-in value.")
    biased: Literal[True] = True
    label: str


class KMetric(BaseModel):
    k: int
    pass_at_k: IntervalOut = Field(description="Chance that at least one of k samples passes.")
    pass_hat_k: IntervalOut = Field(description="pass^k: chance that all of k samples pass.")
    plugin_pass_at_k: PluginOut | None = Field(
        None, description="With plugin=true: the BIASED plug-in 1 - (1 - c/n)^k, to show the gap (it reads low)."
    )
    plugin_pass_hat_k: PluginOut | None = Field(
        None, description="With plugin=true: the BIASED plug-in (c/n)^k (it reads high)."
    )


class HistogramOut(BaseModel):
    bin_edges: list[float] = Field(description="Bin i is [edge_i, edge_i+1); the last bin includes 1.0.")
    counts: list[int] = Field(description="Problems per bin of per-problem pass rate c/n.")
    never_solved: int = Field(description="Problems with c = 0.")
    always_solved: int = Field(description="Problems with c = n.")


class DiversityOut(BaseModel):
    """How many different programs the n samples of a problem contain.

    Identical programs get identical verdicts, so n samples with few distinct programs
    carry less information than n independent draws, and intervals read too narrow.
    """

    mean_distinct_fraction: float = Field(description="Mean over problems of distinct programs / samples.")
    min_distinct_programs: int
    problems_with_duplicates: int = Field(description="Problems where some completion appears more than once.")
    single_program_problems: int = Field(description="Problems whose samples are all the same program.")


class TagMetrics(BaseModel):
    tag: str
    problems: int
    metrics: list[KMetric]


class AverageMetrics(BaseModel):
    label: str
    problems: int = Field(description="Distinct problems that enter this average.")
    groups: int
    metrics: list[KMetric]


class GroupsOut(BaseModel):
    by: Literal["tag"] = "tag"
    tag_prefix: str | None
    untagged_problems: int = Field(description="Problems with no (matching) tag: in no group, micro or macro.")
    overlapping: bool = Field(description="Some problem has two of the grouped tags (it counts in both for macro).")
    groups: list[TagMetrics]
    micro: AverageMetrics | None = Field(description="Mean over the distinct grouped problems: big groups weigh more.")
    macro: AverageMetrics | None = Field(
        description="Unweighted mean of group means, stratified bootstrap: every group weighs the same."
    )
    warnings: list[str] = Field(
        default_factory=list, description="Groups of fewer than 30 problems, by name (also in the run's warnings)."
    )


METHOD_NAMES = {
    "bca": "BCa",
    "percentile": "percentile",
    "clopper-pearson": "Clopper-Pearson (exact)",
    # a macro average whose frozen groups are bounded rather than treated as known (statistics/groups.py)
    "widened": "bootstrap, widened",
}


def interval_label(confidence: float, method_used: str, resamples: int) -> str:
    """What a bracket is, as every surface prints it: "95 % BCa", "90 % percentile, 2,000 resamples".

    The resample count is named only where it differs from the server's default; an exact bound
    has none; "no interval" where none exists (one problem, or all problems equal).
    """
    if method_used == "none":
        return "no interval"
    label = f"{100 * confidence:g} % {METHOD_NAMES.get(method_used, method_used)}"
    if method_used in ("bca", "percentile", "widened") and resamples != DEFAULT_RESAMPLES:
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
        warnings=groups.warnings,
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
