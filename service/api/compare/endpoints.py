"""HTTP route for comparing two runs."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query

from service.api.compare import service as compare_service
from service.api.compare.schemas import Comparison
from service.formats.fields import StorableStr
from service.api.dependencies import SessionDep, openapi_invalid_input
from service.api.metrics.schemas import IntervalMethod
from service.api.metrics.service import parse_ks
from service.api.multirun import comparison_responses
from service.api.release import service as release_service
from service.api.auth.dependencies import CallerDep
from service.statistics import MAX_RESAMPLES
from service.statistics.paired import MAX_PERMUTATIONS

router = APIRouter(prefix="/v1/compare", tags=["compare"])

MAX_ITEMS = 10_000

_RESPONSES: dict[int | str, dict[str, Any]] = {
    **comparison_responses("No shared problem has finished in both runs yet"),
    422: openapi_invalid_input(
        "Different datasets without intersection=true, a k above the smallest n, or bad parameters",
        ["query", "intersection"],
        "the runs are on different datasets (…); pass intersection=true to compare them on the problems both "
        "datasets contain (same id, prompt and tests)",
        False,
    ),
}


@router.get(
    "",
    response_model=Comparison,
    summary="Paired comparison of two runs' pass@k",
    description=(
        "Candidate minus base on the problems finished in both runs. The difference of pass@k gets a paired "
        "bootstrap interval (each resample draws the same problems for both runs; BCa by default), a two-sided "
        "sign-flip permutation p-value and the correlation between the runs; per problem, wins, losses and ties "
        "at the first k. With one sample per problem in both runs, McNemar's exact and chi-square tests too. "
        "Runs on different datasets are compared only with `intersection=true`, on problems with the same id, "
        "prompt, test and entry point, and the response says how many were dropped. Differing sampling metadata "
        "are reported in `warnings`; the runs are never pooled."
    ),
    responses=_RESPONSES,
)
async def compare(
    session: SessionDep,
    principal: CallerDep,
    base: Annotated[uuid.UUID, Query(description="The reference run")],
    candidate: Annotated[uuid.UUID, Query(description="The run compared against it")],
    k: Annotated[str, Query(max_length=400, description="Comma-separated positive integers")] = "1",
    intersection: Annotated[
        bool, Query(description="Allow runs on different datasets: compare on the problems both contain")
    ] = False,
    method: Annotated[IntervalMethod, Query(description="Bootstrap interval: BCa (default) or percentile")] = "bca",
    confidence: Annotated[float, Query(gt=0, lt=1, description="Interval coverage")] = 0.95,
    resamples: Annotated[int, Query(ge=1, le=MAX_RESAMPLES, description="Bootstrap resamples")] = 10_000,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1, description="Seed for the bootstrap and the permutation test")] = 0,
    permutations: Annotated[
        int, Query(ge=1, le=MAX_PERMUTATIONS, description="Sign vectors for the permutation test when not exact")
    ] = 10_000,
    items_limit: Annotated[int, Query(ge=0, le=MAX_ITEMS, description="Per-problem items returned")] = 1000,
    rule: Annotated[
        StorableStr | None,
        Query(
            max_length=300,
            description="A release rule (name or id): adds its verdict as `release`; the rule's confidence "
            "then applies, and the k its clauses need are added.",
        ),
    ] = None,
) -> Comparison:
    options = compare_service.CompareOptions(
        ks=parse_ks(k), intersection=intersection, method=method, confidence=confidence, resamples=resamples,
        seed=seed, permutations=permutations, items_limit=items_limit,
    )
    if rule is not None:
        return await release_service.evaluate_runs(session, principal, rule, base, candidate, options)
    return await compare_service.compare_runs(session, principal, base, candidate, options)
