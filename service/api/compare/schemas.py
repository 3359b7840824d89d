"""Response body for comparing two runs."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.api.metrics.schemas import FigureOut, IntervalMethod
from service.core.estimates import IntervalOut
from service.api.release.schemas import ReleaseEvaluation
from service.core.states import RunState


class RunSide(BaseModel):
    run_id: uuid.UUID
    dataset_id: uuid.UUID
    model: str
    sampling: dict[str, Any] = Field(description="Sampling metadata of this run; the two runs are never pooled.")
    status: RunState
    problems: int = Field(description="Problems of this run whose samples have all finished.")
    excluded_sandbox_errors: int = Field(description="Samples of the compared problems excluded from n.")
    n_min: int | None = Field(description="Smallest n over the compared problems.")
    n_max: int | None


class DetectabilityOut(BaseModel):
    """A planning figure, not a verdict. Seed 004: MDD = (z_0.975 + z_0.80) sqrt(d / n) = 2.8 sqrt(d / n); 15 %
    discordance, n = 100: 10.8 points. When the true difference equals the MDD, the comparison's test finds it 80 %
    of the time, but the observed difference reaches the MDD only about half the time: read `p_value` and the
    difference's interval for whether there is a difference."""

    label: str = Field(description="What these figures are, in words, for every surface that shows them.")
    discordance: float = Field(
        description="mean((candidate_i - base_i)^2) over problems: the share of discordant problems for 0/1 outcomes."
    )
    minimum_detectable_difference: float = Field(
        description="Smallest true difference this comparison detects with the stated confidence and power."
    )
    observed_difference: float
    standard_error: float = Field(description="Normal approximation sqrt((d - diff^2) / n).")
    detectable: bool = Field(
        description="Planning figure: |observed difference| >= MDD, i.e. the observed difference is at least what "
        "this many problems detect with the stated power. Not a verdict on this comparison: a real difference "
        "equal to the MDD shows `detectable` only about half the time."
    )
    problems_needed: int | None = Field(description="Problems for the observed difference to be detectable; null if 0.")
    more_problems_needed: int | None = Field(description="problems_needed - problems compared, at least 0.")
    confidence: float
    power: float


class PairedFigureOut(BaseModel):
    base: FigureOut
    candidate: FigureOut
    difference: FigureOut = Field(description="candidate - base, every resample drawing the same problems for both.")
    relative_difference: FigureOut = Field(description="candidate / base - 1 (0.10 = 10 % higher).")


class CompareMetric(BaseModel):
    k: int
    base: IntervalOut = Field(description="Base run's pass@k on the compared problems.")
    candidate: IntervalOut
    difference: IntervalOut = Field(
        description="candidate - base, paired: every bootstrap resample draws the same problems for both runs."
    )
    p_value: float = Field(description="Two-sided p-value for no difference.")
    p_value_method: Literal["sign-flip permutation"] = "sign-flip permutation"
    p_value_exact: bool = Field(description="All sign vectors enumerated (few non-tied problems) or Monte Carlo.")
    permutations: int = Field(description="Sign vectors drawn when not exact.")
    correlation: float | None = Field(
        description="Pearson correlation of the runs' per-problem pass@k; null if either is constant. "
        "High correlation is what makes the paired interval narrower than two separate ones."
    )
    detectability: DetectabilityOut = Field(
        description="Minimum detectable difference (95 % confidence, 80 % power) and problems needed for the observed one."
    )


class ProblemDelta(BaseModel):
    problem_id: str
    base: float
    candidate: float
    delta: float = Field(description="candidate - base")


class PerProblem(BaseModel):
    k: int = Field(description="The first requested k.")
    wins: int = Field(description="Problems where the candidate's pass@k is higher.")
    losses: int
    ties: int
    items: list[ProblemDelta] = Field(description="In dataset order, at most items_limit of them.")
    items_total: int
    items_truncated: bool


class McNemarOut(BaseModel):
    """With n = 1 per problem in both runs: tests on the discordant problems."""

    wins: int
    losses: int
    exact_p: float = Field(
        description="Exact two-sided binomial (sign) test: the one to trust with few discordant pairs."
    )
    chi2: float | None
    chi2_p: float | None
    chi2_corrected: float | None = Field(
        description="With continuity correction: (|wins - losses| - 1)^2 / (wins + losses)."
    )
    chi2_corrected_p: float | None


class Comparison(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "base": {"run_id": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b", "model": "model-a", "problems": 200},
                    "candidate": {
                        "run_id": "5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "model": "model-b", "problems": 200,
                    },
                    "dataset_id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
                    "problems": 200,
                    "dropped_problems": 0,
                    "intersection": False,
                    "confidence": 0.95,
                    "metrics": [
                        {
                            "k": 1,
                            "difference": {
                                "estimate": 0.045, "ci_low": 0.005, "ci_high": 0.09, "standard_error": 0.0216,
                            },
                            "p_value": 0.0636,
                            "p_value_method": "sign-flip permutation",
                            "correlation": 0.9,
                        }
                    ],
                    "per_problem": {"k": 1, "wins": 14, "losses": 5, "ties": 181},
                    "mcnemar": {
                        "wins": 14, "losses": 5, "exact_p": 0.0636, "chi2": 4.263, "chi2_p": 0.0389,
                        "chi2_corrected": 3.368, "chi2_corrected_p": 0.0665,
                    },
                    "warnings": [],
                }
            ]
        }
    )

    base: RunSide
    candidate: RunSide
    dataset_id: uuid.UUID | None = Field(description="The shared dataset; null when comparing on an intersection.")
    problems: int = Field(description="Problems compared: finished in both runs (and, across datasets, identical).")
    dropped_problems: int = Field(description="Problems of either run left out of the comparison.")
    intersection: bool = Field(description="Compared on the problems two different datasets share.")
    partial: bool = Field(description="Some problem of either run has unfinished samples and is left out.")
    confidence: float
    method: IntervalMethod
    resamples: int
    seed: int
    metrics: list[CompareMetric]
    per_problem: PerProblem
    mcnemar: McNemarOut | None = Field(description="Only when both runs have exactly one sample per problem.")
    currency: str | None = Field(None, description="Of both runs' costs (costs in two currencies are not compared).")
    figures: dict[str, PairedFigureOut] = Field(
        default_factory=dict,
        description="Where both runs' samples carry the data: `mean_cost_per_sample`, `cost_per_success`, "
        "`latency_p95_ms`, `brier`; paired bootstrap on the same resampled problems as pass@k.",
    )
    incremental_cost_per_success: float | None = Field(
        None,
        description="(candidate - base mean cost per sample) / (candidate - base pass@1): what each extra success "
        "costs (seed 004: $0.019 / 0.04 = $0.475). Null without costs or without a pass@1 difference.",
    )
    warnings: list[str] = Field(description="E.g. differing sampling metadata: read the difference with that in mind.")
    release: ReleaseEvaluation | None = Field(
        None, description="With `rule`: the release rule's verdict on this comparison, clause by clause."
    )
