"""Statistics dataclasses -> response models; shared by /metrics and /compare (the per-k estimates' own
conversion is service/core/estimates.py, which `passk report --json` shares)."""

from __future__ import annotations

from collections.abc import Sequence

from service.api.metrics.schemas import (
    CalibratedBaselineOut,
    CalibrationBinOut,
    CalibrationOut,
    CostAtKOut,
    CostOut,
    EceOut,
    FigureOut,
    LatencyOut,
    MurphyOut,
    StepsOut,
    TokensOut,
)
from service.statistics.calibration import CalibrationBin, CalibrationSummary
from service.statistics.operating import Figure, OperatingSummary


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
