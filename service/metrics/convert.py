"""Statistics dataclasses -> response models; shared by /metrics, /compare and `passk report --json`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.metrics.schemas import (
    AverageMetrics,
    CalibratedBaselineOut,
    CalibrationBinOut,
    CalibrationOut,
    CostAtKOut,
    CostOut,
    DiversityOut,
    EceOut,
    FigureOut,
    LatencyOut,
    MurphyOut,
    StepsOut,
    TokensOut,
    GroupsOut,
    HistogramOut,
    IntervalOut,
    KMetric,
    PluginOut,
    TagMetrics,
)
from service.statistics import Interval
from service.statistics.calibration import CalibrationBin, CalibrationSummary
from service.statistics.operating import Figure, OperatingSummary
from service.statistics.groups import GroupSummary
from service.statistics.summary import (
    DEFAULT_RESAMPLES,
    PLUGIN_AT_LABEL,
    PLUGIN_HAT_LABEL,
    Histogram,
    KSummary,
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


def figure_out(figure: Figure) -> FigureOut:
    return FigureOut(**{f: getattr(figure, f) for f in FigureOut.model_fields})


def operating_out(summary: OperatingSummary, currency: str | None) -> dict[str, object]:
    """The cost, latency, tokens and steps fields of a response (None where no sample carries them)."""
    out: dict[str, object] = {"cost": None, "latency": None, "tokens": None, "steps": None}
    if (c := summary.cost) is not None:
        out["cost"] = CostOut(
            currency=currency, samples=c.samples, passes=c.passes, total=c.total,
            mean_per_sample=figure_out(c.mean_per_sample), per_success=figure_out(c.per_success),
            at_k=[CostAtKOut(k=a.k, per_problem=figure_out(a.per_problem),
                             per_solved_problem=figure_out(a.per_solved_problem)) for a in c.at_k],
        )
    if (lat := summary.latency) is not None:
        out["latency"] = LatencyOut(
            samples=lat.samples, mean_ms=lat.mean, p50_ms=figure_out(lat.p50), p95_ms=figure_out(lat.p95),
            p99_ms=figure_out(lat.p99),
        )
    if (t := summary.tokens) is not None:
        out["tokens"] = TokensOut(
            samples=t.samples, total_input=t.total_input, total_output=t.total_output,
            mean_input=None if t.mean_input is None else figure_out(t.mean_input),
            mean_output=None if t.mean_output is None else figure_out(t.mean_output),
        )
    if (st := summary.steps) is not None:
        out["steps"] = StepsOut(samples=st.samples, mean=figure_out(st.mean), per_success=figure_out(st.per_success))
    return out


def _bins_out(bins: Sequence[CalibrationBin]) -> list[CalibrationBinOut]:
    return [CalibrationBinOut(**vars(b)) for b in bins]


def calibration_out(summary: CalibrationSummary | None) -> CalibrationOut | None:
    if summary is None:
        return None
    d = summary.decomposition
    return CalibrationOut(
        samples=summary.samples, bins=summary.bins, brier=figure_out(summary.brier),
        decomposition=MurphyOut(
            reliability=d.reliability, resolution=d.resolution, uncertainty=d.uncertainty,
            within_bin_variance=d.within_bin_variance, within_bin_covariance=d.within_bin_covariance, total=d.total,
        ),
        ece_equal_width=summary.ece_equal_width, ece_equal_count=summary.ece_equal_count,
        ece=None if summary.ece is None else EceOut(
            estimate=summary.ece.estimate, label=summary.ece.label, interval=figure_out(summary.ece.interval),
            calibrated=CalibratedBaselineOut(expected=summary.ece.calibrated.expected, high=summary.ece.calibrated.high),
        ),
        reliability_diagram=_bins_out(summary.diagram),
        reliability_diagram_equal_count=_bins_out(summary.diagram_equal_count),
    )
