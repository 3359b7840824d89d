"""A judged request as a one-sample interactive run on a dataset holding its one problem.

The dataset is the caller project's, named `passk judge`, and found again by its content: an RL loop that judges
many programs against one problem stores that problem once.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from sandbox import languages
from sandbox.languages.base import Language
from sandbox.verdicts import Verdict
from service.api.auth.principal import Principal
from service.api.datasets import service as dataset_service
from service.api.datasets.schemas import DatasetCreate, DatasetRead
from service.api.judge.schemas import JudgeRequest, JudgeResponse
from service.api.runcode.service import names as run_code_names
from service.api.runs import service as run_service
from service.api.runs.schemas import RunCreate, RunRead
from service.core.exceptions import APIError, InvalidInput
from service.core.settings import Settings
from service.core.states import RunPriority

DATASET_NAME = "passk judge"


class NotJudged(APIError):
    """passk failed to run the program (a sandbox error, after its retries): a 503, never a model's failure."""

    status_code = 503

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.headers = {"Retry-After": "5"}


def language_of(settings: Settings, body: JudgeRequest) -> Language:
    """passk's name or alias for the language, or SandboxFusion's (with the operator's mapping over it)."""
    by_run_code_name = run_code_names(settings)
    if body.language in by_run_code_name:
        return by_run_code_name[body.language]
    try:
        return languages.resolve(body.language)
    except (KeyError, ValueError):
        known = sorted({*languages.all_languages(), *by_run_code_name})
        raise InvalidInput(["body", "language"], f"unknown language {body.language!r}; known: {', '.join(known)}",
                           body.language) from None


def _as_problem_error(error: InvalidInput) -> InvalidInput:
    """The dataset service's error about `problems[0]` as one about this request's `problem`."""
    for item in error.detail:
        loc = item["loc"]
        if loc[:3] == ["body", "problems", 0]:
            item["loc"] = ["body", "problem", *loc[3:]]
    return error


async def _dataset(session: AsyncSession, settings: Settings, principal: Principal, body: JudgeRequest,
                   language: Language) -> DatasetRead:
    dataset = DatasetCreate(name=DATASET_NAME, problems=[body.problem], language=language.name)
    try:
        created, _ = await dataset_service.create(session, settings, principal, dataset)
    except InvalidInput as error:
        raise _as_problem_error(error) from None
    return created


async def submit(session: AsyncSession, settings: Settings, principal: Principal, body: JudgeRequest,
                 language: Language, stream: str) -> RunRead:
    dataset = await _dataset(session, settings, principal, body, language)
    run = RunCreate(
        dataset_id=dataset.id,
        model=body.model,
        sampling={"temperature": 0},  # type: ignore[arg-type]
        time_limit_s=body.time_limit_s,
        memory_mb=body.memory_mb,
        samples=[{"problem_id": body.problem.id, "completion": body.completion}],  # type: ignore[list-item]
        priority=RunPriority.INTERACTIVE,
    )
    try:
        return await run_service.create(session, settings, principal, run, stream=stream)
    except InvalidInput as error:
        raise _as_problem_error(error) from None


async def answer(session: AsyncSession, principal: Principal, run: RunRead) -> JudgeResponse:
    """The verdict on the one sample of a judged run that has ended."""
    page = await run_service.samples(session, principal, run.id, problem_key=None, verdict=None, cursor=None,
                                     limit=1, include_completion=False)
    sample = page.items[0]
    if sample.verdict is None or sample.verdict is Verdict.SANDBOX_ERROR:
        raise NotJudged(f"passk could not run the program ({sample.detail or sample.state}); the run {run.id} "
                        "is not counted against it; retry")
    passed = sample.verdict is Verdict.PASSED
    return JudgeResponse(passed=passed, reward=1.0 if passed else 0.0, verdict=sample.verdict,
                         flags=list(sample.flags or []), detail=None if passed else sample.detail, run_id=run.id,
                         dataset_id=run.dataset_id, sample=sample)
