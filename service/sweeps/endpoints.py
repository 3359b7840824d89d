"""HTTP route for temperature sweeps."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from service.dependencies import SessionDep, openapi_error
from service.exceptions import InvalidInput
from service.metrics.schemas import IntervalMethod
from service.metrics.service import parse_ks
from service.statistics import MAX_RESAMPLES
from service.sweeps import service as sweep_service
from service.sweeps.schemas import Sweep

router = APIRouter(prefix="/v1/sweeps", tags=["sweeps"])


@router.get(
    "",
    response_model=Sweep,
    summary="One model's runs at several temperatures: curves side by side, the best temperature per k, the envelope",
    description=(
        "Seed 001: pass@1 falls and pass@k rises with temperature, and temperature is part of the metric. Each run "
        "stays its own curve (never pooled); all runs and every k share one set of resampled problems, so per k "
        "the response gives the best temperature, the share of resamples in which each run is best, the paired "
        "margin to the runner-up with its interval, and the envelope (max over temperatures) with its interval."
    ),
    responses={
        404: openapi_error("A run does not exist", {"detail": "run 0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b not found"}),
        409: openapi_error("No problem has finished in every run yet", {"detail": "nothing to compare"}),
    },
)
async def get_sweep(
    session: SessionDep,
    runs: Annotated[str, Query(max_length=1000, description="Comma-separated run ids (2 to 20), one model, one dataset")],
    k: Annotated[str, Query(max_length=400, description="Comma-separated positive integers")] = "1",
    method: Annotated[IntervalMethod, Query()] = "bca",
    confidence: Annotated[float, Query(gt=0, lt=1)] = 0.95,
    resamples: Annotated[int, Query(ge=1, le=MAX_RESAMPLES)] = 10_000,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
) -> Sweep:
    ids: list[uuid.UUID] = []
    for part in runs.split(","):
        try:
            ids.append(uuid.UUID(part.strip()))
        except ValueError:
            raise InvalidInput(["query", "runs"], f"{part.strip()!r} is not a run id", runs) from None
    return await sweep_service.sweep(
        session, ids, parse_ks(k), resamples=resamples, confidence=confidence, seed=seed, method=method
    )
