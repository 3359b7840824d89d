"""POST /run_code (SandboxFusion-compatible), behind an API key with the `submit` scope."""

from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter, Request, Response

from service.api.auth.dependencies import CallerDep
from service.api.delivery.admission import QueueFull
from service.api.delivery.events import wait_for_run_end
from service.api.dependencies import SessionDep, SettingsDep, commit_now, openapi_error
from service.api.runcode import service as runcode_service
from service.api.runcode.schemas import RunCodeRequest, RunCodeResponse
from service.core.exceptions import APIError

router = APIRouter(tags=["run_code"])

# Beyond the program's own limits (its compile's and its run's): time to be queued, claimed and recorded. verl
# gives up after compile_timeout + run_timeout + 10 s, and retries a 504: past this, the answer is a 504.
ANSWER_ALLOWANCE_S = 8.0
# How often a request waiting for room in a full queue tries again.
QUEUE_RETRY_S = 0.5


class NotYet(APIError):
    """The program has not been run within the request's bound: a 504, which SandboxFusion's clients retry."""

    status_code = 504

    def __init__(self, detail: str, retry_after_s: int = 1) -> None:
        super().__init__(detail)
        self.headers = {"Retry-After": str(retry_after_s)}


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
    principal: CallerDep,
) -> RunCodeResponse:
    language = runcode_service.language_of(body)
    bounds = runcode_service.limits(settings, language, body)
    # What the client waits for (its compile_timeout even where nothing compiles), less a margin for the way back.
    budget = min(settings.max_wait_s, bounds.run_s + body.compile_timeout + ANSWER_ALLOWANCE_S)
    deadline = time.monotonic() + budget
    while True:
        try:
            run = await runcode_service.submit(session, settings, principal, body, language, bounds)
            break
        except QueueFull as exc:
            await session.rollback()  # lets the admission lock go while this request waits
            if time.monotonic() + QUEUE_RETRY_S >= deadline:
                raise NotYet(f"not run in time: {exc.detail}", int(exc.headers["Retry-After"])) from None
            await asyncio.sleep(QUEUE_RETRY_S)
    await commit_now(session)  # workers must see the run while this request waits for it
    response.headers["X-Passk-Run"] = str(run.id)
    ended = await wait_for_run_end(request.app, principal, run.id, max(0.0, deadline - time.monotonic()), full=False)
    if ended is None:
        raise NotYet(f"not run within {budget:g} s; the run {run.id} goes on (GET /v1/runs/{run.id}/samples)")
    answer, sample_id = await runcode_service.answer(session, run.id, bounds.notes)
    response.headers["X-Passk-Sample"] = str(sample_id)
    return answer
