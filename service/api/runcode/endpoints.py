"""POST /run_code (SandboxFusion-compatible), behind an API key with the `submit` scope."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.auth.dependencies import CallerDep
from service.api.dependencies import SessionDep, SettingsDep, app_singleton, openapi_error
from service.api.runcode import service as runcode_service
from service.api.runcode.schemas import RunCodeRequest, RunCodeResponse
from service.api.runs.interactive import ANSWER_ALLOWANCE_S, StreamHeader, run_and_wait
from service.api.streams.service import stream_of

router = APIRouter(tags=["run_code"])


@router.post(
    "/run_code",
    response_model=RunCodeResponse,
    response_model_exclude_none=False,
    responses={504: openapi_error("Not run within compile_timeout + run_timeout + 8 s (a full queue, a busy "
                                  "server); retry", {"detail": "not run in time: the queue is full; retry"})},
    summary="Run one program (SandboxFusion's /run_code request and response)",
    description=(
        "Drop-in for SandboxFusion's `POST /run_code` in every language passk has, under SandboxFusion's names. "
        "`run_timeout` is the run's wall-clock limit (and its CPU limit), `compile_timeout` the compile's; "
        "`memory_limit_MB` -1 is the server's maximum; `files` are written first and `fetch_files` read back. "
        "Limits brought into the server's bounds are said in `message`. The answer reports how the program ended, "
        "not whether any test passed (docs/rl.md). Runs as a one-sample `interactive` run (headers `X-Passk-Run`, "
        "`X-Passk-Sample`). A full queue is waited out, up to compile_timeout + run_timeout + 8 s; past that, a 504 "
        "(SandboxFusion's clients retry it)."
    ),
)
async def run_code(
    body: RunCodeRequest, request: Request, response: Response, session: SessionDep, settings: SettingsDep,
    principal: CallerDep, stream: StreamHeader = None,
) -> RunCodeResponse:
    stream = stream_of(stream, "run_code")
    language = runcode_service.language_of(settings, body)
    bounds = runcode_service.limits(settings, language, body)
    args = runcode_service.arguments(language, body, bounds.notes)
    # What the client waits for (its compile_timeout even where nothing compiles), less a margin for the way back.
    budget = min(settings.max_wait_s, bounds.run_s + body.compile_timeout + ANSWER_ALLOWANCE_S)
    known = app_singleton(request, "run_code_datasets", runcode_service.KnownDatasets)
    answer, sample_id = await run_and_wait(
        request, response, session, principal,
        lambda: runcode_service.submit(session, settings, principal, body, language, bounds, stream, known, args),
        budget,
        lambda reader, run: runcode_service.answer(reader, run.id, bounds.notes),
    )
    response.headers["X-Passk-Sample"] = str(sample_id)
    return answer
