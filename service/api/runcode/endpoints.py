"""POST /run_code (SandboxFusion-compatible), behind an API key with the `submit` scope."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.delivery.admission import QUEUE_FULL
from service.api.delivery.events import wait_for_run_end
from service.api.dependencies import SessionDep, SettingsDep, commit_now
from service.api.runcode import service as runcode_service
from service.api.runcode.schemas import RunCodeRequest, RunCodeResponse, RunStatus
from service.api.auth.dependencies import CallerDep

router = APIRouter(tags=["run_code"])

# Beyond the program's own limits (wall clock: 2 x CPU limit + slack): time to be claimed and recorded.
QUEUE_ALLOWANCE_S = 60.0


@router.post(
    "/run_code",
    response_model=RunCodeResponse,
    response_model_exclude_none=False,
    responses={429: QUEUE_FULL},
    summary="Run one program (SandboxFusion's /run_code request and response)",
    description=(
        "Drop-in for SandboxFusion's `POST /run_code`: `code`, `language` (python), `stdin`, `run_timeout` (CPU "
        "seconds), `memory_limit_MB`, `files` (base64, written to the working directory first) are honoured; "
        "`compile_timeout` and `fetch_files` are accepted and ignored. Runs as a one-sample `interactive` run "
        "(headers `X-Passk-Run`, `X-Passk-Sample`), so it shows in /v1/status and Prometheus. A full queue is a "
        "429 with Retry-After."
    ),
)
async def run_code(
    body: RunCodeRequest, request: Request, response: Response, session: SessionDep, settings: SettingsDep,
    principal: CallerDep,
) -> RunCodeResponse:
    run = await runcode_service.submit(session, settings, principal, body)
    await commit_now(session)  # workers must see the run while this request waits for it
    limit = min(body.run_timeout, settings.max_time_limit_s)
    ended = await wait_for_run_end(
        request.app, principal, run.id, min(settings.max_wait_s, 2 * limit + QUEUE_ALLOWANCE_S), full=False
    )
    response.headers["X-Passk-Run"] = str(run.id)
    if ended is None:
        return RunCodeResponse(
            status=RunStatus.SANDBOX_ERROR,
            message=f"not finished in time; the run {run.id} goes on (GET /v1/runs/{run.id}/samples)",
        )
    answer, sample_id = await runcode_service.answer(session, run.id)
    response.headers["X-Passk-Sample"] = str(sample_id)
    return answer
