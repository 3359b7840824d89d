"""Response body for a temperature sweep."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field

from service.api.metrics.schemas import IntervalMethod
from service.core.estimates import IntervalOut


class SweepPoint(BaseModel):
    k: int
    pass_at_k: IntervalOut


class SweepRun(BaseModel):
    run_id: uuid.UUID
    temperature: float | None = Field(description="sampling.temperature of the run (its own curve).")
    sampling: dict[str, Any]
    curve: list[SweepPoint]


class SweepBest(BaseModel):
    k: int
    best_run_id: uuid.UUID
    best_temperature: float | None
    probability_best: list[float] = Field(
        description="Per run (in `runs` order): share of bootstrap resamples in which it has the highest pass@k."
    )
    margin: float = Field(description="Best minus runner-up pass@k (paired).")
    margin_ci_low: float | None
    margin_ci_high: float | None
    envelope: float = Field(description="Max over temperatures of pass@k: the best this model reaches at this k.")
    envelope_ci_low: float = Field(description="Percentile interval of the max over the resamples.")
    envelope_ci_high: float


class Sweep(BaseModel):
    model: str
    dataset_id: uuid.UUID
    problems: int = Field(description="Problems finished in every run: the curves share them.")
    ks: list[int]
    confidence: float
    method: IntervalMethod
    resamples: int
    seed: int
    runs: list[SweepRun] = Field(description="Sorted by temperature.")
    best: list[SweepBest] = Field(
        description="Per k, the best temperature with the paired margin to the runner-up; picking the best of "
        "several curves is optimistic, so read the envelope as an upper estimate."
    )
    warnings: list[str]
