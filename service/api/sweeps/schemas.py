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
    best_run_id: uuid.UUID = Field(description="A run with the highest pass@k (the first of them, in `runs` order, "
                                   "when several tie: see `tie`).")
    best_temperature: float | None
    tie: bool = Field(False, description="Several runs share the highest pass@k: no temperature is best.")
    tied_run_ids: list[uuid.UUID] = Field(
        default_factory=list, description="Every run with the highest pass@k (one run when there is no tie)."
    )
    probability_best: list[float] = Field(
        description="Per run (in `runs` order): share of bootstrap resamples in which it has the highest pass@k; a "
        "resample where t runs tie counts 1/t for each, so the answer does not depend on the order of the runs."
    )
    margin: float = Field(description="Best minus runner-up pass@k (paired); 0 on a tie.")
    margin_ci_low: float | None = Field(
        description="The margin -/+ c standard errors, c simultaneous over every pair of runs: the two runs are "
        "picked because they came out on top, and an interval that holds for every pair holds for them."
    )
    margin_ci_high: float | None
    envelope: float = Field(description="Max over temperatures of pass@k: the best this model reaches at this k.")
    envelope_ci_low: float | None = Field(
        description="Simultaneous interval: from the largest of the runs' lower bounds at level 1 - alpha/R (R "
        "runs) to the largest of their upper bounds, so it covers the best run's pass@k whichever run that is. "
        "Null where some run has no interval."
    )
    envelope_ci_high: float | None


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
