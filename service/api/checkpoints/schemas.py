"""Response body for a model's checkpoints over training."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from service.api.metrics.schemas import IntervalMethod
from service.core.estimates import IntervalOut
from service.core.states import RunState


class ChangeOut(BaseModel):
    """This checkpoint minus the one before it, on the problems both finished (as GET /v1/compare pairs them)."""

    previous_run_id: uuid.UUID
    problems: int = Field(description="Problems finished in both runs: the difference is paired over these.")
    difference: IntervalOut = Field(
        description="This checkpoint's pass@k minus the previous one's, paired: every bootstrap resample draws the "
        "same problems for both (the compare page's interval, base = previous, candidate = this one)."
    )
    p_value: float = Field(description="Two-sided sign-flip permutation test of no difference.")
    p_value_exact: bool = Field(description="Every sign vector enumerated (few non-tied problems) or Monte Carlo.")
    p_value_adjusted: float = Field(
        description="Holm-adjusted over every step of the series: below 1 - confidence, the change holds even "
        "counting that many steps were tested."
    )
    significant: bool = Field(description="p_value < 1 - confidence: a significant change at this step alone.")
    direction: Literal["better", "worse", "equal"] = Field(
        description="The sign of the estimated difference (significant or not: see `significant`)."
    )


class CheckpointPoint(BaseModel):
    run_id: uuid.UUID
    checkpoint: str | None
    step: int
    status: RunState
    partial: bool = Field(description="Some of the run's problems have not finished: the figures use those that have.")
    problems: int = Field(description="Problems of this run that have finished: its pass@k is over these.")
    created_at: datetime
    pass_at_k: IntervalOut = Field(description="The run's pass@k and its interval, as on its own page.")
    vs_previous: ChangeOut | None = Field(
        description="Against the checkpoint before it in step order; null for the first, or when the two runs "
        "share no finished problem."
    )


class PendingCheckpoint(BaseModel):
    run_id: uuid.UUID
    checkpoint: str | None
    step: int
    status: RunState


class CheckpointSeries(BaseModel):
    model: str
    dataset_id: uuid.UUID
    dataset_name: str
    k: int
    confidence: float
    method: IntervalMethod
    resamples: int
    seed: int
    points: list[CheckpointPoint] = Field(description="By step (then by submission): one per run with finished problems.")
    pending: list[PendingCheckpoint] = Field(
        description="Runs with a step and no finished problem yet (queued, or just started); not plotted."
    )
    significant_changes: int = Field(description="Steps whose change is significant at 1 - confidence on its own.")
    warnings: list[str]
