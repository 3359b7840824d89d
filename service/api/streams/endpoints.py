"""HTTP routes for a project's streams of /run_code and /v1/judge calls."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from service.api.auth.dependencies import CallerDep
from service.api.dependencies import SessionDep, openapi_error
from service.api.streams import service as stream_service
from service.api.streams.schemas import HEADER, MAX_NAME, StreamDetail, StreamList

router = APIRouter(prefix="/v1/streams", tags=["streams"])


@router.get(
    "", response_model=StreamList, summary="The project's streams of /run_code and /v1/judge calls",
    description=(
        f"Every /run_code and /v1/judge call joins a stream: the one its `{HEADER}` header names, else `run_code` "
        "or `judge`. Streams leave the runs list (GET /v1/runs?streams=include lists their runs); here each "
        "stream's calls, verdicts, reward-hack flags and last hour's latency, most recently called first."
    ),
)
async def list_streams(session: SessionDep, principal: CallerDep) -> StreamList:
    return await stream_service.list_streams(session, principal)


@router.get(
    "/{name}", response_model=StreamDetail, summary="One stream over time",
    responses={404: openapi_error("No call of the project's is in this stream", {"detail": "stream 'grpo' not found"})},
)
async def stream_detail(
    session: SessionDep, principal: CallerDep,
    name: Annotated[str, Path(max_length=MAX_NAME)],
    window_s: Annotated[float, Query(gt=0, le=90 * 86400, description="How far back, in seconds")] = 3600.0,
    buckets: Annotated[int, Query(ge=1, le=500, description="Buckets of equal width over the window")] = 60,
) -> StreamDetail:
    return await stream_service.detail(session, principal, name, window_s, buckets)
