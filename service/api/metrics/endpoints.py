"""HTTP routes for a run's metrics and per-problem results."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response

from service.api.dependencies import SessionDep, app_singleton, etag_matches, openapi_invalid_input
from service.api.metrics import service as metrics_service
from service.api.metrics.schemas import IntervalMethod, ProblemResults, RunMetrics
from service.api.runs.endpoints import RUN_NOT_FOUND
from service.api.auth.dependencies import CallerDep
from service.statistics import MAX_RESAMPLES
from service.statistics.summary import (
    DEFAULT_CONFIDENCE,
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Options,
)

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
    422: openapi_invalid_input(
        "Bad parameters, or a k larger than some problem's number of samples",
        ["query", "k"],
        "k=100 exceeds the smallest number of samples per problem (n=20, e.g. problem 'HumanEval/3'); choose k <= 20. "
        "Problems with n=20: HumanEval/3",
        {"k": 100, "n_min": 20, "problem_ids": ["HumanEval/3"]},
    ),
}


@router.get(
    "/{run_id}/metrics",
    response_model=RunMetrics,
    summary="pass@k and pass^k with standard errors and bootstrap confidence intervals",
    description=(
        "Unbiased estimators (Chen et al. 2021) averaged over problems, with the CLT standard error over problems "
        "and a bootstrap interval over problems (BCa by default, or percentile). Every k and both metrics use the "
        "same resampled problems, so the curve over k is coherent. Where the requested method is undefined the "
        "interval says which method was used and why (`method_used`, `fallback_reason`): when every problem "
        "scores 1 (or 0) an exact Clopper-Pearson bound, with one problem no interval. Per problem, n counts "
        "finished samples except `sandbox_error` (retried by workers; any left are excluded and reported, never "
        "counted as failures) and c counts passes. Only problems whose samples have all finished are included; "
        "while others are pending the response has `partial: true`. A k above some problem's n is refused (422) "
        "rather than reported as 1.0. The same seed gives the same interval. `plugin=true` adds the biased "
        "plug-in estimates beside the unbiased ones; `group_by=tag` adds per-tag metrics with micro and macro "
        "averages; `diversity=true` summarises distinct programs per problem. Where samples carry them, `cost` "
        "(mean per sample, cost per success = total cost / passes, cost of k samples per problem and per solved "
        "problem), `latency` (p50/p95/p99), `tokens`, `steps` and `calibration` (Brier with its Murphy "
        "decomposition, ECE over `bins` equal-width and equal-count bins, the reliability diagram), each interval "
        "on the same resampled problems as pass@k. `reward_hacks` counts the run's samples whose program did what "
        "only a forger does (per flag, with what it means, and the passes among them); when there are any, the "
        "first of the `warnings` says so: a policy learning to cheat shows there first."
    ),
    responses=_K_TOO_LARGE,
)
async def get_metrics(
    request: Request,
    run_id: uuid.UUID,
    session: SessionDep,
    principal: CallerDep,
    k: KQuery = "1",
    method: Annotated[IntervalMethod, Query(description="Bootstrap interval: BCa (default) or percentile")] = DEFAULT_METHOD,
    confidence: Annotated[float, Query(gt=0, lt=1, description="Interval coverage")] = DEFAULT_CONFIDENCE,
    resamples: Annotated[int, Query(ge=1, le=MAX_RESAMPLES, description="Bootstrap resamples")] = DEFAULT_RESAMPLES,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1, description="Bootstrap seed")] = DEFAULT_SEED,
    plugin: Annotated[bool, Query(description="Also report the BIASED plug-in estimates, labelled")] = False,
    group_by: Annotated[
        Literal["tag"] | None, Query(description="Per-tag metrics with micro and macro averages")
    ] = None,
    tag_prefix: Annotated[
        str | None,
        Query(
            max_length=200,
            description="With group_by=tag: only tags starting with this form groups, e.g. `difficulty:`",
        ),
    ] = None,
    diversity: Annotated[
        bool, Query(description="Summarise distinct programs per problem (reads every completion: slower)")
    ] = False,
    bins: Annotated[int, Query(ge=1, le=100, description="Calibration bins (ECE, reliability diagram)")] = 10,
) -> Response:
    options = Options(
        ks=metrics_service.parse_ks(k), method=method, confidence=confidence, resamples=resamples, seed=seed,
        plugin=plugin, group_by_tag=group_by == "tag", tag_prefix=tag_prefix,
    )
    # Computed once per run state and query: the ETag names both, and a client that has it gets a 304.
    query = repr((options, diversity, bins))
    etag = await metrics_service.metrics_etag(session, principal, run_id, query)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if etag_matches(request, etag):
        return Response(status_code=304, headers=headers)

    async def render() -> bytes:
        metrics = await metrics_service.run_metrics(session, principal, run_id, options, diversity=diversity, bins=bins)
        return JSONResponse(jsonable_encoder(metrics)).body

    body = await _metrics_cache(request).get_or_compute(etag, render)
    return Response(body, media_type="application/json", headers=headers)


def _metrics_cache(request: Request) -> metrics_service.MetricsCache:
    return app_singleton(request, "metrics_cache", metrics_service.MetricsCache)


@router.get(
    "/{run_id}/problems",
    response_model=ProblemResults,
    summary="Per-problem n, c, verdict counts, distinct programs and pass@k / pass^k",
    description=(
        "In dataset order. An estimate is null where k exceeds that problem's n. `distinct_programs` counts "
        "different completions among the problem's samples: few distinct programs mean the n samples carry "
        "less information than n independent draws."
    ),
    responses=RUN_NOT_FOUND,
)
async def get_problems(run_id: uuid.UUID, session: SessionDep, principal: CallerDep, k: KQuery = "1") -> ProblemResults:
    return await metrics_service.problem_results(session, principal, run_id, metrics_service.parse_ks(k))
