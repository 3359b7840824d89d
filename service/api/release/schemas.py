"""Request and response bodies for release rules."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, model_validator

from service.formats.fields import Key, StorableStr
from service.statistics.release import ReleaseVerdict


class ReleaseMetric(enum.StrEnum):
    PASS_AT_K = "pass_at_k"
    COST_PER_SUCCESS = "cost_per_success"
    MEAN_COST_PER_SAMPLE = "mean_cost_per_sample"
    LATENCY_P95_MS = "latency_p95_ms"
    BRIER = "brier"


class Limit(enum.StrEnum):
    """What the threshold bounds. Differences are candidate - base on the same problems."""

    MAX_DROP = "max_drop"  # difference >= -threshold: the paired interval's lower bound is checked
    MAX_INCREASE = "max_increase"  # difference <= threshold: upper bound
    MAX_RELATIVE_INCREASE = "max_relative_increase"  # candidate / base - 1 <= threshold: upper bound
    MAX = "max"  # the candidate's own value <= threshold: upper bound
    MIN = "min"  # the candidate's own value >= threshold: lower bound


Threshold = Annotated[StrictInt, Field()] | Annotated[StrictFloat, Field(allow_inf_nan=False)]


class Clause(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: ReleaseMetric
    k: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="For pass_at_k (default 1); not allowed for the other metrics."
    )
    limit: Limit
    threshold: Threshold = Field(
        description="In the metric's unit: pass@k as a fraction (0.01 = 1 point), latency in ms, cost in the "
        "runs' currency, relative increases as a fraction (0.10 = 10 %)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Clause:
        if self.metric is ReleaseMetric.PASS_AT_K:
            if self.k is None:
                self.k = 1
        elif self.k is not None:
            raise ValueError(f"k applies to pass_at_k only, not to {self.metric.value}")
        if self.metric is ReleaseMetric.PASS_AT_K and self.limit is Limit.MAX_RELATIVE_INCREASE:
            raise ValueError("pass_at_k takes max_drop, max_increase, min or max (differences in points, not ratios)")
        if self.limit in (Limit.MAX_DROP, Limit.MAX_RELATIVE_INCREASE) and self.threshold < 0:
            raise ValueError(f"{self.limit.value} must be at least 0, got {self.threshold}")
        if self.metric is ReleaseMetric.PASS_AT_K and self.limit in (Limit.MIN, Limit.MAX) and not 0 <= self.threshold <= 1:
            raise ValueError(f"a pass@k threshold is a fraction in [0, 1], got {self.threshold}")
        return self


# Seed 004's rule: pass@1 must not drop by more than 1 point, cost per success must not rise more than 10 %,
# p95 latency under 2.5 s (the documented example, and the rule the tests gate with).
SHIP_GATE_CLAUSES: list[dict[str, Any]] = [
    {"metric": "pass_at_k", "k": 1, "limit": "max_drop", "threshold": 0.01},
    {"metric": "cost_per_success", "limit": "max_relative_increase", "threshold": 0.10},
    {"metric": "latency_p95_ms", "limit": "max", "threshold": 2500},
]


class ReleaseRuleCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "name": "ship-gate-v1",
                    "description": "pass@1 must not drop by more than 1 point, cost per success must not rise more "
                    "than 10 %, p95 latency under 2.5 s",
                    "clauses": SHIP_GATE_CLAUSES,
                }
            ]
        },
    )

    name: Key = Field(
        description="Unique in the project; a rule is never changed once stored (store a new name instead)."
    )
    description: Annotated[StorableStr, Field(max_length=2000)] | None = None
    confidence: float = Field(0.95, gt=0, lt=1, description="Of the intervals the clauses are judged on.")
    clauses: list[Clause] = Field(min_length=1, max_length=20)


class ReleaseRuleRead(BaseModel):
    id: uuid.UUID
    name: str
    description: str | None
    confidence: float
    clauses: list[Clause]
    created_at: datetime = Field(description="When the rule was stored: compare with the candidate run's created_at.")


class ReleaseRuleList(BaseModel):
    items: list[ReleaseRuleRead]


class ClauseResult(BaseModel):
    clause: Clause
    text: str = Field(description="The clause in words.")
    figure: str = Field(description="What was judged, e.g. `pass@1 difference (candidate - base)`.")
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    checked: str = Field(description="Which bound decides: `ci_low` or `ci_high`.")
    verdict: ReleaseVerdict
    reason: str | None = Field(None, description="Why the data cannot tell, when they cannot.")


class ReleaseEvaluation(BaseModel):
    rule: ReleaseRuleRead
    base: uuid.UUID
    candidate: uuid.UUID
    candidate_created_at: datetime
    rule_written_before_candidate: bool = Field(description="The rule was stored before the candidate run was submitted.")
    verdict: ReleaseVerdict = Field(
        description="`fail` if any clause fails, else `not_enough_data` if any clause cannot tell, else `pass`."
    )
    clauses: list[ClauseResult]
    problems: int = Field(description="Problems compared.")
    confidence: float
    warnings: list[str]
