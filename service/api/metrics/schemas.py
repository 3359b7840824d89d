"""Response bodies for run metrics and per-problem results."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.core.estimates import INTERVAL_EXAMPLE, DiversityOut, GroupsOut, HistogramOut, KMetric
from service.core.flags import FLAGS
from service.api.runs.schemas import Coverage, RewardHacks, VerdictCounts
from service.core.states import RunState

IntervalMethod = Literal["bca", "percentile"]


class FigureOut(BaseModel):
    """A figure with an interval over problems: a percentile bootstrap on pass@k's resampled problems, or for a
    latency percentile Woodruff's interval (the CDF's standard error at the estimate, linearised over problems)."""

    estimate: float | None = Field(description="Null where the figure does not exist (e.g. no pass: no cost per success).")
    ci_low: float | None
    ci_high: float | None = Field(
        description="Null where some resamples make the figure unbounded (no pass in them), or where a percentile's "
        "upper bound lies beyond the largest value observed."
    )
    confidence: float
    standard_error: float | None = Field(
        description="Standard deviation of the bootstrap distribution; for `woodruff`, the interval's half-width "
        "over its t quantile."
    )
    method_used: str = Field(
        description="`percentile` (bootstrap), `woodruff` (latency percentiles), `woodruff, linearised` (a paired "
        "difference of percentiles), `basic bootstrap` (ECE), or `none` when the figure does not exist."
    )
    resamples: int = Field(description="Bootstrap resamples; 0 for an interval that needs none (Woodruff's).")
    note: str | None = None


class CostAtKOut(BaseModel):
    k: int
    per_problem: FigureOut = Field(description="Cost of drawing k samples per problem: k x mean cost per sample.")
    per_solved_problem: FigureOut = Field(description="k x mean cost per sample / pass@k.")


class CostOut(BaseModel):
    currency: str | None
    samples: int = Field(description="Samples with a cost; every cost figure uses only these.")
    passes: int = Field(description="Passes among those samples.")
    total: float
    mean_per_sample: FigureOut = Field(description="total cost / samples")
    per_success: FigureOut = Field(description="total cost / passes (seed 004: 0.012 / 0.82 = 0.0146)")
    at_k: list[CostAtKOut]


class LatencyOut(BaseModel):
    """Inverted-CDF percentiles of the samples' latencies, each with Woodruff's interval over problems."""

    samples: int
    mean_ms: float = Field(description="For reference only: read the percentiles.")
    p50_ms: FigureOut
    p95_ms: FigureOut
    p99_ms: FigureOut


class TokensOut(BaseModel):
    samples: int
    total_input: float
    total_output: float
    mean_input: FigureOut | None
    mean_output: FigureOut | None


class StepsOut(BaseModel):
    samples: int
    mean: FigureOut
    per_success: FigureOut = Field(description="total steps / passes")


class CalibrationBinOut(BaseModel):
    low: float
    high: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


class MurphyOut(BaseModel):
    reliability: float = Field(description="sum n_k (f_k - o_k)^2 / N: 0 when calibrated.")
    resolution: float = Field(description="sum n_k (o_k - o)^2 / N: higher separates outcomes better.")
    uncertainty: float = Field(description="o (1 - o): set by the pass rate, not by the confidences.")
    within_bin_variance: float = Field(description="Of forecasts inside a bin; 0 when each bin holds one value.")
    within_bin_covariance: float
    total: float = Field(description="REL - RES + UNC + WBV - WBC: equals the Brier score.")


class CalibratedBaselineOut(BaseModel):
    expected: float = Field(description="Mean ECE of a perfectly calibrated model with these confidences and samples.")
    high: float = Field(description="Its 95th percentile: an ECE at or below it cannot tell the model from one.")


class EceOut(BaseModel):
    estimate: float = Field(description="ECE over the equal-width bins (the plug-in: biased up).")
    biased: Literal[True] = True
    label: str
    interval: FigureOut = Field(
        description="Bootstrap over problems, reflected about the estimate (2 ECE - quantiles: removes the bias the "
        "resampled ECEs share); lower bound 0 where the ECE is within a calibrated model's 95 % range."
    )
    calibrated: CalibratedBaselineOut = Field(
        description="What sampling noise alone gives: the ECE of a perfectly calibrated model at this N."
    )


class CalibrationOut(BaseModel):
    samples: int = Field(description="Samples with a confidence.")
    bins: int
    brier: FigureOut
    decomposition: MurphyOut = Field(description="Murphy decomposition over the equal-width bins.")
    ece_equal_width: float = Field(description="BIASED plug-in (see `ece`): noise alone makes it positive.")
    ece_equal_count: float = Field(description="BIASED plug-in over equal-count bins.")
    ece: EceOut | None = Field(None, description="The equal-width ECE labelled, with its interval and baseline.")
    reliability_diagram: list[CalibrationBinOut] = Field(description="Equal-width bins: the dashboard's diagram.")
    reliability_diagram_equal_count: list[CalibrationBinOut]


class RewardHacksOut(RewardHacks):
    """The run's reward-hack counts (as in its progress), with what each flag means."""

    descriptions: dict[str, str] = Field(
        default_factory=lambda: dict(FLAGS), description="What a program did to raise each flag, by flag."
    )


class RunMetrics(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "run_id": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b",
                    "dataset_id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
                    "model": "my-model-7b",
                    "sampling": {"temperature": 0.8},
                    "status": "completed",
                    "partial": False,
                    "problems": 164,
                    "problems_finished": 164,
                    "problems_total": 164,
                    "dataset_name": "HumanEval",
                    "dataset_problems": 164,
                    "coverage": {"problems": 164, "dataset_problems": 164, "subset": False, "text": "all 164 problems"},
                    "samples": 32796,
                    "excluded_sandbox_errors": 4,
                    "n_min": 198,
                    "n_max": 200,
                    "k_max_allowed": 198,
                    "k_max_bounding_problems": ["HumanEval/32", "HumanEval/140"],
                    "k_max_bounding_count": 2,
                    "seed": 0,
                    "method": "bca",
                    "confidence": 0.95,
                    "resamples": 10000,
                    "metrics": [
                        {
                            "k": 1,
                            "pass_at_k": INTERVAL_EXAMPLE,
                            "pass_hat_k": INTERVAL_EXAMPLE,
                            "plugin_pass_at_k": None,
                            "plugin_pass_hat_k": None,
                        }
                    ],
                    "histogram": {
                        "bin_edges": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
                        "counts": [70, 6, 4, 3, 2, 3, 4, 5, 8, 59],
                        "never_solved": 61,
                        "always_solved": 48,
                    },
                    "diversity": {
                        "mean_distinct_fraction": 0.71,
                        "min_distinct_programs": 1,
                        "problems_with_duplicates": 120,
                        "single_program_problems": 9,
                    },
                    "groups": None,
                    "reward_hacks": {"samples": 0, "passed": 0, "by_flag": dict.fromkeys(FLAGS, 0),
                                     "descriptions": dict(FLAGS)},
                    "warnings": [],
                    "note": None,
                }
            ]
        }
    )

    run_id: uuid.UUID
    dataset_id: uuid.UUID
    model: str
    sampling: dict[str, Any]
    status: RunState
    partial: bool = Field(description="True while some problems have samples that have not finished.")
    problems: int = Field(description="Problems the metrics are computed over (finished ones).")
    problems_finished: int
    problems_total: int = Field(description="Problems the run has samples for.")
    dataset_name: str = ""
    dataset_problems: int = Field(0, description="Problems in the run's dataset.")
    coverage: Coverage | None = Field(
        None, description='What the figures cover: "40 of 164 problems" and `subset: true` when part of the dataset.'
    )
    samples: int = Field(description="Sum of n over those problems (sandbox errors excluded).")
    excluded_sandbox_errors: int = Field(description="Samples of those problems that failed for infrastructure reasons.")
    n_min: int | None
    n_max: int | None
    k_max_allowed: int | None = Field(description="Largest k every problem supports: the smallest n.")
    k_max_bounding_problems: list[str] = Field(description="Problems whose n sets k_max_allowed (at most 20 listed).")
    k_max_bounding_count: int = Field(description="How many problems have n = k_max_allowed.")
    seed: int
    method: IntervalMethod
    confidence: float
    resamples: int
    metrics: list[KMetric] = Field(
        description="Per k; model and sampling above apply to every figure (runs are never pooled)."
    )
    histogram: HistogramOut | None = Field(description="Per-problem pass rates c/n: usually bimodal.")
    diversity: DiversityOut | None = Field(None, description="With diversity=true.")
    groups: GroupsOut | None = Field(None, description="With group_by=tag: per-tag metrics, micro and macro.")
    cost: CostOut | None = Field(None, description="Where samples carry a cost.")
    latency: LatencyOut | None = Field(None, description="Where samples carry latency_ms.")
    tokens: TokensOut | None = Field(None, description="Where samples carry token counts.")
    steps: StepsOut | None = Field(None, description="Where samples carry steps.")
    calibration: CalibrationOut | None = Field(None, description="Where samples carry a confidence.")
    reward_hacks: RewardHacksOut = Field(
        default_factory=RewardHacksOut,
        description="Samples of the run (all recorded ones, not only finished problems') whose program did what only "
        "a forger does, per flag with its meaning; any makes the first warning. Their verdicts stand in the figures "
        "above: a flagged pass is a pass.",
    )
    warnings: list[str] = Field(default_factory=list)
    note: str | None = None


class ProblemResult(BaseModel):
    problem_id: str
    n: int = Field(description="Finished samples, sandbox errors excluded.")
    c: int = Field(description="Passed samples.")
    done: bool = Field(description="All of the problem's samples have finished (or were cancelled).")
    total: int
    pending: int
    by_verdict: VerdictCounts
    distinct_programs: int = Field(description="Distinct completions among the problem's samples (by md5).")
    tags: list[str]
    pass_at_k: dict[str, float | None] = Field(description="Keyed by k; null where k > n.")
    pass_hat_k: dict[str, float | None] = Field(description="Keyed by k; null where k > n.")


class CurvesOut(BaseModel):
    n_min: int = Field(description="Smallest n over the finished problems: the curves run k = 1 .. n_min.")
    problems: int = Field(description="Finished problems with n > 0, over which the curves are means.")
    pass_at_k: list[float] = Field(description="Mean pass@k over those problems, for k = 1 .. n_min (index k - 1).")
    pass_hat_k: list[float] = Field(description="Mean pass^k over those problems, for k = 1 .. n_min (index k - 1).")


class ProblemResults(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "run_id": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b",
                    "ks": [1, 10],
                    "problems": [
                        {
                            "problem_id": "HumanEval/0",
                            "n": 10,
                            "c": 3,
                            "done": True,
                            "total": 10,
                            "pending": 0,
                            "by_verdict": {**VerdictCounts().model_dump(), "passed": 3, "failed": 7},
                            "distinct_programs": 8,
                            "tags": ["difficulty:easy"],
                            "pass_at_k": {"1": 0.3, "10": 1.0},
                            "pass_hat_k": {"1": 0.3, "10": 0.0},
                        }
                    ],
                }
            ]
        }
    )

    run_id: uuid.UUID
    ks: list[int]
    problems: list[ProblemResult]
    curves: CurvesOut | None = Field(
        None,
        description="Point estimates of pass@k and pass^k for every k = 1 .. n_min over the finished problems "
        "(no intervals); null until one problem has finished.",
    )
