"""HTTP routes for a run's metrics and per-problem results."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query

from service.dependencies import SessionDep, openapi_422
from service.metrics import service as metrics_service
from service.metrics.schemas import ProblemResults, RunMetrics
from service.runs.endpoints import RUN_NOT_FOUND

router = APIRouter(prefix="/v1/runs", tags=["metrics"])

KQuery = Annotated[
    str,
    Query(
        max_length=400,
        description="Comma-separated positive integers",
        openapi_examples={"typical": {"summary": "pass@1, @10, @100", "value": "1,10,100"}},
    ),
]

_K_TOO_LARGE: dict[int | str, dict[str, Any]] = {
    **RUN_NOT_FOUND,
    422: openapi_422(
        "Bad parameters, or a k larger than some problem's number of samples",
        {
            "detail": [
                {
                    "type": "value_error",
                    "loc": ["query", "k"],
                    "msg": "k=100 exceeds the smallest number of samples per problem (n=20, e.g. problem "
                    "'HumanEval/3'); choose k <= 20. Problems with n=20: HumanEval/3",
                    "input": {"k": 100, "n_min": 20, "problem_ids": ["HumanEval/3"]},
                }
            ]
        },
    ),
}


@router.get(
    "/{run_id}/metrics",
    response_model=RunMetrics,
    summary="pass@k and pass^k with bootstrap confidence intervals",
    description=(
        "Unbiased estimators (Chen et al. 2021) averaged over problems, with percentile-bootstrap intervals "
        "over problems. Per problem, n counts finished samples except `sandbox_error` (infrastructure "
        "failures are excluded, never counted as failures) and c counts passes. Only problems whose samples "
        "have all finished are included; while others are pending the response has `partial: true`. "
        "A k above some problem's n is refused (422) rather than reported as 1.0. The same seed gives the same interval."
    ),
    responses=_K_TOO_LARGE,
)
async def get_metrics(
    run_id: uuid.UUID,
    session: SessionDep,
    k: KQuery = "1",
    confidence: Annotated[float, Query(gt=0, lt=1, description="Interval coverage")] = 0.95,
    resamples: Annotated[int, Query(ge=1, le=100_000, description="Bootstrap resamples")] = 10_000,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1, description="Bootstrap seed")] = 0,
) -> RunMetrics:
    ks = metrics_service.parse_ks(k)
    return await metrics_service.run_metrics(
        session, run_id, ks, confidence=confidence, resamples=resamples, seed=seed
    )


@router.get(
    "/{run_id}/problems",
    response_model=ProblemResults,
    summary="Per-problem n, c, verdict counts and pass@k / pass^k",
    description="In dataset order. An estimate is null where k exceeds that problem's n.",
    responses=RUN_NOT_FOUND,
)
async def get_problems(run_id: uuid.UUID, session: SessionDep, k: KQuery = "1") -> ProblemResults:
    return await metrics_service.problem_results(session, run_id, metrics_service.parse_ks(k))
