"""HTTP route for a model's checkpoints over training."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query

from service.api.auth.dependencies import CallerDep
from service.api.checkpoints import service as checkpoint_service
from service.api.checkpoints.schemas import CheckpointSeries
from service.api.datasets.schemas import StorableStr
from service.api.dependencies import SessionDep, openapi_error, openapi_invalid_input
from service.api.metrics.schemas import IntervalMethod
from service.api.multirun import ResamplesQuery, SeedQuery
from service.statistics.paired import MAX_PERMUTATIONS

router = APIRouter(prefix="/v1/checkpoints", tags=["checkpoints"])

_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: openapi_error(
        "The dataset does not exist (or is not readable), or no run of the model on it carries a step",
        {"detail": "dataset 6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d not found"},
    ),
    422: openapi_invalid_input(
        "k above the samples per problem of some checkpoint, or bad parameters",
        ["query", "k"],
        "k=10 exceeds the samples per problem of checkpoint ckpt-2000 (step 2000, run …): 3 problem(s) have only "
        "n=5: HumanEval/0, HumanEval/1, HumanEval/2. Choose k up to 5.",
        {"k": 10, "n_min": 5},
    ),
}


@router.get(
    "",
    response_model=CheckpointSeries,
    summary="One model's checkpoints on one dataset: pass@k per step, each against the one before it",
    description=(
        "The caller's runs of `model` on `dataset` that carry a `step` (set when the run is submitted), in step "
        "order. Each point is the run's pass@k with its interval, exactly as on the run's own page (over its "
        "finished problems). Each checkpoint is compared with the one before it as GET /v1/compare compares two "
        "runs: paired over the problems both finished (`problems` says how many), a paired bootstrap interval of "
        "the difference and a two-sided sign-flip permutation p-value. `significant` flags p < 1 - confidence at "
        "that step alone; `p_value_adjusted` (Holm) holds over every step of the series. Archived runs are left "
        "out; runs without a finished problem are listed in `pending`."
    ),
    responses=_RESPONSES,
)
async def get_checkpoints(
    session: SessionDep,
    principal: CallerDep,
    dataset: Annotated[uuid.UUID, Query(description="The dataset's id")],
    model: Annotated[
        StorableStr | None,
        Query(min_length=1, max_length=300, description="The model, as submitted (default: the one model whose runs "
              "on the dataset carry a step; a 422 names them when there are several)"),
    ] = None,
    k: Annotated[int, Query(ge=1, le=1_000_000, description="The k of pass@k plotted")] = 1,
    method: Annotated[IntervalMethod, Query(description="Bootstrap interval: BCa (default) or percentile")] = "bca",
    confidence: Annotated[float, Query(gt=0, lt=1, description="Interval coverage; 1 - confidence is the test's level")] = 0.95,
    resamples: ResamplesQuery = 10_000,
    seed: SeedQuery = 0,
    permutations: Annotated[
        int, Query(ge=1, le=MAX_PERMUTATIONS, description="Sign vectors for the permutation test when not exact")
    ] = 10_000,
) -> CheckpointSeries:
    options = checkpoint_service.CheckpointOptions(
        k=k, method=method, confidence=confidence, resamples=resamples, seed=seed, permutations=permutations
    )
    return await checkpoint_service.checkpoint_series(session, principal, model, dataset, options)
