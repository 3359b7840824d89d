"""HTTP routes for runs and their samples."""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated, Any, Literal

import json

from fastapi import APIRouter, Body, Header, Query, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response

from sandbox.verdicts import Verdict
from service.api import idempotency
from service.formats.fields import StorableStr
from service.api.delivery.admission import QUEUE_FULL
from service.api.delivery.events import event_stream, wait_for_run_end
from service.api.dependencies import SessionDep, SettingsDep, app_singleton, commit_now, etag_matches, openapi_422, openapi_error, openapi_invalid_input
from service.core.exceptions import InvalidInput
from service.core.flags import FLAGS, Flag
from service.api.idempotency import IdempotencyKeyHeader
from service.api.runs import service as run_service
from service.api.runs.coalesce import Coalescer
from service.api.runs.schemas import RunCreate, RunList, RunRead, RunUpdate, SamplePage
from service.core.states import RunState
from service.api.auth.dependencies import CallerDep

router = APIRouter(prefix="/v1/runs", tags=["runs"])

_RUN_ID = "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b"
RUN_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: openapi_error("No such run", {"detail": f"run {_RUN_ID} not found"})
}
_CREATE_EXAMPLES = {
    "humaneval": {
        "summary": "Two samples for one problem",
        "value": {
            "dataset_id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
            "model": "my-model-7b",
            "sampling": {"temperature": 0.8, "top_p": 0.95, "max_tokens": 512, "stop": ["\ndef "]},
            "samples": [
                {"problem_id": "HumanEval/0", "completion": "    return a + b\n"},
                {"problem_id": "HumanEval/0", "completion": "    return a - b\n"},
            ],
        },
    }
}


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunRead,
    summary="Submit a run: every sample of it, in one request",
    description=(
        "Queues every sample for execution and returns at once (202); nothing runs in the request. "
        "**All samples of a run go in this one request: a run cannot be appended to later.** "
        "Samples get `index` = their position among the run's samples for the same problem, in request "
        "order. `sampling` is stored verbatim, including keys passk does not know. `time_limit_s` and "
        "`memory_mb` override the dataset's limits (per-problem limits still apply)."
    ),
    responses={
        200: {"model": RunRead, "description": "With `?wait=`: the run ended within the wait"},
        422: openapi_invalid_input(
            "Unknown dataset_id or problem ids, too many samples, oversized completion, limits above the server maxima",
            ["body", "samples"], "problem id(s) not in dataset 6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d: 'HumanEval/999'",
            ["HumanEval/999"],
        ),
        429: QUEUE_FULL,
    },
)
async def create_run(
    body: Annotated[RunCreate, Body(openapi_examples=_CREATE_EXAMPLES)],
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    principal: CallerDep,
    idempotency_key: IdempotencyKeyHeader = None,
    wait: Annotated[
        float,
        Query(ge=0, le=3600, description="Seconds to wait for the run to end: 200 with the ended run if it does, else 202."),
    ] = 0,
) -> Any:
    async def produce() -> tuple[int, RunRead]:
        return status.HTTP_202_ACCEPTED, await run_service.create(session, settings, principal, body)

    response = await idempotency.respond_once(session, request, principal, idempotency_key, produce)
    if wait <= 0 or response.status_code != status.HTTP_202_ACCEPTED:
        return response
    # The request's one transaction, committed now rather than after the return: workers must see the run
    # while this request waits for it (and the admission lock must not be held meanwhile).
    await commit_now(session)
    run_id = uuid.UUID(json.loads(bytes(response.body))["id"])
    ended = await wait_for_run_end(request.app, principal, run_id, min(wait, settings.max_wait_s))
    if ended is None:
        return response
    return JSONResponse(jsonable_encoder(ended), status_code=status.HTTP_200_OK)


@router.get("", response_model=RunList, summary="List the project's runs, newest first")
async def list_runs(
    session: SessionDep,
    settings: SettingsDep,
    principal: CallerDep,
    dataset_id: Annotated[uuid.UUID | None, Query(description="Only runs of this dataset")] = None,
    model: Annotated[StorableStr | None, Query(max_length=300, description="Only runs of this model")] = None,
    status: Annotated[RunState | None, Query(description="Only runs in this state")] = None,
    tag: Annotated[StorableStr | None, Query(max_length=100, description="Only runs with this tag")] = None,
    archived: Annotated[
        Literal["exclude", "include", "only"],
        Query(description="Archived runs: left out (default), listed too, or listed alone"),
    ] = "exclude",
    streams: Annotated[
        Literal["exclude", "include", "only"],
        Query(description="Runs of /run_code and /v1/judge calls (GET /v1/streams): left out (default), listed too, "
                          "or listed alone; a run looked up by `id_prefix` is found either way"),
    ] = "exclude",
    stream: Annotated[
        StorableStr | None, Query(max_length=200, description="Only the runs of this stream")
    ] = None,
    q: Annotated[
        StorableStr | None,
        Query(max_length=200, description="Search model, display name, note, tags, dataset name and id prefix"),
    ] = None,
    id_prefix: Annotated[
        str | None, Query(max_length=36, pattern=r"^[0-9a-fA-F-]+$", description="Runs whose id starts with this")
    ] = None,
    sort: Annotated[
        Literal["newest", "oldest", "model", "name", "score"],
        Query(description="Order of the list; `score`: highest pass@1 first over the whole list (runs with no finished sample last)"),
    ] = "newest",
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
) -> RunList:
    return await run_service.list_runs(
        session, settings, principal, dataset_id=dataset_id, model=model, limit=limit, offset=offset,
        status=status, tag=tag, archived={"exclude": False, "include": None, "only": True}[archived], search=q, id_prefix=id_prefix, order=sort,
        streams={"exclude": False, "include": None, "only": True}[streams], stream=stream,
    )


@router.patch(
    "/{run_id}",
    response_model=RunRead,
    summary="Rename, annotate, tag or archive a run",
    description=(
        "Changes only the fields sent: `display_name` and `note` (null clears them), `tags` (replaces the "
        "list) and `archived` (archived runs leave the default list). Samples, model, sampling and results "
        "never change."
    ),
    responses={**RUN_NOT_FOUND, 422: openapi_422("Unknown field or a bad value", {"detail": []})},
)
async def update_run(
    run_id: uuid.UUID, body: RunUpdate, session: SessionDep, settings: SettingsDep, principal: CallerDep
) -> RunRead:
    return await run_service.update(session, settings, principal, run_id, body)


@router.get(
    "/{run_id}",
    response_model=RunRead,
    summary="Get a run with its progress",
    description=(
        "Cheap enough to poll every second: the run and its progress (one grouped count over an index) are "
        "one query. `progress.reward_hacks` counts the samples flagged as reward hacks (what only a forger "
        f"does: {'; '.join(FLAGS.values())}), from an index of the flagged samples alone. The `ETag` names the "
        "answer: send it back as `If-None-Match` and an unchanged run is a 304 with no body."
    ),
    responses={**RUN_NOT_FOUND, 304: {"description": "Unchanged since the `ETag` sent as `If-None-Match`"}},
)
async def get_run(
    run_id: uuid.UUID, request: Request, session: SessionDep, settings: SettingsDep, principal: CallerDep
) -> Response:
    async def render() -> bytes:
        return (await run_service.get(session, settings, principal, run_id)).model_dump_json().encode()

    # Polls of this run that the server received together, from callers who see the same runs, share one query
    # and one rendering.
    body = await _status_polls(request).run((run_id, principal.admin or principal.project_id), render)
    headers = {"ETag": f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"', "Cache-Control": "no-cache"}
    if etag_matches(request, headers["ETag"]):
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


def _status_polls(request: Request) -> Coalescer[bytes]:
    return app_singleton(request, "run_status_polls", Coalescer)


_CANCEL_RESPONSES: dict[int | str, dict[str, Any]] = {
    **RUN_NOT_FOUND,
    409: openapi_error(
        "The run already completed or failed",
        {"detail": f"run {_RUN_ID} is already completed; only queued or running runs can be cancelled"},
    ),
}
_CANCEL_DESCRIPTION = (
    "Queued samples are cancelled (their verdict stays null); samples already leased by a worker finish. "
    "The run becomes `cancelled`. Cancelling a cancelled run returns it unchanged; a completed or failed run is a 409."
)


@router.post(
    "/{run_id}/cancel",
    response_model=RunRead,
    summary="Cancel a run",
    description=_CANCEL_DESCRIPTION,
    responses=_CANCEL_RESPONSES,
)
@router.delete(
    "/{run_id}",
    response_model=RunRead,
    summary="Cancel a run (same as POST /cancel)",
    description=_CANCEL_DESCRIPTION + " The run and its results are kept.",
    responses=_CANCEL_RESPONSES,
    name="delete_run",  # its own operation id
)
async def cancel_run(run_id: uuid.UUID, session: SessionDep, settings: SettingsDep, principal: CallerDep) -> RunRead:
    return await run_service.cancel(session, settings, principal, run_id)


@router.get(
    "/{run_id}/samples",
    response_model=SamplePage,
    summary="List a run's samples with their verdicts",
    description=(
        "Keyset-paginated by sample id: pass `next_cursor` back as `cursor` until it is null. Each sample carries "
        "its reward-hack `flags` (what only a forger does, as the sandbox saw it); `flagged=true` lists the "
        "flagged samples only (read from an index of them: cheap on any run), `flag=NAME` those with that flag. "
        "On another project's dataset whose tests are hidden, a sample's details are withheld (`hidden`)."
    ),
    responses=RUN_NOT_FOUND,
)
async def list_samples(
    run_id: uuid.UUID,
    session: SessionDep,
    principal: CallerDep,
    problem_id: Annotated[StorableStr | None, Query(max_length=300, description="The dataset's problem id")] = None,
    verdict: Annotated[Verdict | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[int | None, Query(ge=0, le=2**63 - 1, description="`next_cursor` of the previous page")] = None,
    include: Annotated[Literal["completion"] | None, Query(description="`completion` adds the code")] = None,
    flagged: Annotated[
        bool | None, Query(description="true: only samples with a reward-hack flag; false: only samples without")
    ] = None,
    flag: Annotated[Flag | None, Query(description="Only samples with this reward-hack flag")] = None,
) -> SamplePage:
    return await run_service.samples(
        session,
        principal,
        run_id,
        problem_key=problem_id,
        verdict=verdict,
        cursor=cursor,
        limit=limit,
        include_completion=include == "completion",
        flagged=flagged,
        flag=flag,
    )


@router.get(
    "/{run_id}/events",
    summary="Live events: each finished sample, then the run's end (Server-Sent Events)",
    description=(
        "`text/event-stream`. Each finished sample is an event `sample` (`id`, `problem_id`, `index`, `verdict`, "
        "`duration_ms`, `cpu_ms`, `cached`, `flags`: its reward-hack flags) whose SSE `id` is its number among the "
        "run's events; when the run has ended, one event `end` (`status`, `progress`, `metrics` link) and the "
        "stream closes. Reconnect with `Last-Event-ID` (or `?after=`) to resume with nothing lost or repeated, also across API restarts "
        "(events are read from the database). After the `end` event, a reconnect gets 204."
    ),
    responses={
        **RUN_NOT_FOUND,
        200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}, "description": "The event stream"},
        204: {"description": "The run has ended and its end event was delivered: nothing more will come"},
    },
)
async def run_events(
    run_id: uuid.UUID,
    request: Request,
    principal: CallerDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=40)] = None,
    after: Annotated[int | None, Query(ge=0, le=2**62, description="Resume after this event id")] = None,
) -> Response:
    return await event_stream(request, principal, run_id, after if after is not None else _event_number(last_event_id))


def _event_number(value: str | None) -> int:
    if value is None or not value.strip():
        return 0
    try:
        number = int(value.strip())
    except ValueError:
        raise InvalidInput(["header", "Last-Event-ID"], f"Last-Event-ID must be an event id (an integer), got {value!r}", value) from None
    if number < 0:
        raise InvalidInput(["header", "Last-Event-ID"], "Last-Event-ID must not be negative", value)
    return number
