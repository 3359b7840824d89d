"""HTTP route: one model's runs in several languages side by side."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from service.dependencies import SessionDep, openapi_error
from service.exceptions import InvalidInput
from service.metrics.schemas import IntervalMethod
from service.metrics.service import parse_ks
from service.multilang import service as multilang_service
from service.multilang.schemas import LanguageComparison
from service.statistics import MAX_RESAMPLES

router = APIRouter(prefix="/v1/languages", tags=["languages"])


@router.get(
    "/compare",
    response_model=LanguageComparison,
    summary="One model's runs in several languages: pass@k per language, micro and macro averages, with intervals",
    description=(
        "One run per language, all of one model. Micro pools every problem of every language (bigger languages "
        "weigh more); macro is the unweighted mean of the per-language figures. Intervals: a bootstrap that "
        "resamples problems within each language (stratified), each language with its own derived seed."
    ),
    responses={
        404: openapi_error("A run does not exist", {"detail": "run 0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b not found"}),
        409: openapi_error("A run has no finished problem yet", {"detail": "nothing to compare"}),
    },
)
async def compare_languages(
    session: SessionDep,
    runs: Annotated[str, Query(max_length=1000, description="Comma-separated run ids, one model, one per language")],
    k: Annotated[str, Query(max_length=400, description="Comma-separated positive integers")] = "1",
    method: Annotated[IntervalMethod, Query()] = "bca",
    confidence: Annotated[float, Query(gt=0, lt=1)] = 0.95,
    resamples: Annotated[int, Query(ge=1, le=MAX_RESAMPLES)] = 10_000,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
) -> LanguageComparison:
    ids: list[uuid.UUID] = []
    for part in runs.split(","):
        try:
            ids.append(uuid.UUID(part.strip()))
        except ValueError:
            raise InvalidInput(["query", "runs"], f"{part.strip()!r} is not a run id", runs) from None
    return await multilang_service.compare(
        session, ids, parse_ks(k), resamples=resamples, confidence=confidence, seed=seed, method=method
    )
