"""POST /v1/judge, behind an API key with the `submit` scope."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.auth.dependencies import CallerDep
from service.api.dependencies import SessionDep, SettingsDep, openapi_error
from service.api.judge import service as judge_service
from service.api.judge.schemas import JudgeRequest, JudgeResponse
from service.api.runs.interactive import StreamHeader, run_and_wait
from service.api.streams.service import stream_of

router = APIRouter(prefix="/v1", tags=["judge"])


@router.post(
    "/judge",
    response_model=JudgeResponse,
    responses={
        503: openapi_error("passk could not run the program (never the program's fault); retry",
                           {"detail": "passk could not run the program (...); retry"}),
        504: openapi_error("No verdict within `wait_s`; the run goes on", {"detail": "not run within 60 s; ..."}),
    },
    summary="Judge one program against tests sent apart from it (a reward no program can forge)",
    description=(
        "The judged sibling of `/run_code`: the tests come as one `problem` (any format of POST /v1/datasets), the "
        "program as `completion`, and the answer is passk's verdict, with `reward` 1.0 only when the tests provably "
        "ran to their end. The program runs apart from the tests, so exiting early, patching the test framework "
        "or printing a fake report cannot pass. Runs as a one-sample `interactive` run (header `X-Passk-Run`)."
    ),
)
async def judge(
    body: JudgeRequest, request: Request, response: Response, session: SessionDep, settings: SettingsDep,
    principal: CallerDep, stream: StreamHeader = None,
) -> JudgeResponse:
    stream = stream_of(stream, "judge")
    language = judge_service.language_of(settings, body)
    return await run_and_wait(
        request, response, session, principal,
        lambda: judge_service.submit(session, settings, principal, body, language, stream),
        min(body.wait_s, settings.max_wait_s),
        lambda reader, run: judge_service.answer(reader, principal, run),
    )
