"""HTTP routes for operators: GET /v1/status and GET /metrics (mounted behind the read scope in app.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4 as PROMETHEUS_CONTENT_TYPE

from service.api.dependencies import SessionDep, app_singleton
from service.api.ops import service as ops_service
from service.api.ops.schemas import Status

router = APIRouter(tags=["operations"])


async def _figures(request: Request, session: SessionDep) -> ops_service.Figures:
    # One cache per application (and so per event loop), made on first use.
    return await app_singleton(request, "ops_figures", ops_service.SharedFigures).get(session)


@router.get(
    "/v1/status",
    response_model=Status,
    summary="Queue depth, recent throughput, sandbox errors, runs by status and live workers",
    description=(
        "Computed in one database round trip over indexes and shared for a second between callers "
        "(`generated_at` tells when): poll it as often as you like."
    ),
)
async def get_status(request: Request, session: SessionDep) -> Status:
    return (await _figures(request, session)).status


@router.get(
    "/metrics",
    response_class=PlainTextResponse,
    summary="The figures of /v1/status in the Prometheus text format",
    description="Needs the read scope like /v1: give the scraper an API key (`authorization: Bearer ...`).",
    responses={200: {"content": {PROMETHEUS_CONTENT_TYPE: {}}}},
)
async def get_prometheus(request: Request, session: SessionDep) -> PlainTextResponse:
    body = ops_service.exposition(await _figures(request, session))
    return PlainTextResponse(body, media_type=PROMETHEUS_CONTENT_TYPE)
