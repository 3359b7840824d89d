"""The query every view over several runs takes: run ids, k and the bootstrap's options, parsed in one place."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query

from service.api.dependencies import openapi_error
from service.core.exceptions import InvalidInput
from service.api.metrics.schemas import IntervalMethod
from service.api.metrics.service import parse_ks
from service.statistics import MAX_RESAMPLES

ResamplesQuery = Annotated[int, Query(ge=1, le=MAX_RESAMPLES, description="Bootstrap resamples")]
SeedQuery = Annotated[int, Query(ge=0, le=2**63 - 1, description="Bootstrap seed")]

RUN_EXAMPLE = "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b"


def comparison_responses(conflict: str, *, not_found: str = "A run does not exist",
                         missing: str = f"run {RUN_EXAMPLE}") -> dict[int | str, dict[str, Any]]:
    """The documented 404 (a run, or what `missing` names, does not exist) and 409 (`conflict`: nothing finished
    to compare yet) of every route that compares runs."""
    return {
        404: openapi_error(not_found, {"detail": f"{missing} not found"}),
        409: openapi_error(conflict, {"detail": "nothing to compare"}),
    }


def parse_run_ids(raw: str) -> list[uuid.UUID]:
    """'id1,id2' -> [UUID, UUID]; a 422 naming the `runs` query parameter otherwise."""
    ids: list[uuid.UUID] = []
    for part in raw.split(","):
        try:
            ids.append(uuid.UUID(part.strip()))
        except ValueError:
            raise InvalidInput(["query", "runs"], f"{part.strip()!r} is not a run id", raw) from None
    return ids


@dataclass(frozen=True)
class MultiRunQuery:
    run_ids: list[uuid.UUID]
    ks: list[int]
    method: IntervalMethod
    confidence: float
    resamples: int
    seed: int


def multi_run_query(
    runs: Annotated[str, Query(max_length=1000, description="Comma-separated run ids, all of one model")],
    k: Annotated[str, Query(max_length=400, description="Comma-separated positive integers")] = "1",
    method: Annotated[IntervalMethod, Query()] = "bca",
    confidence: Annotated[float, Query(gt=0, lt=1)] = 0.95,
    resamples: ResamplesQuery = 10_000,
    seed: SeedQuery = 0,
) -> MultiRunQuery:
    return MultiRunQuery(parse_run_ids(runs), parse_ks(k), method, confidence, resamples, seed)


MultiRunDep = Annotated[MultiRunQuery, Depends(multi_run_query)]
