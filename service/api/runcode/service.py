"""A /run_code request as a one-sample run of the `run` problem, and its sample as SandboxFusion's answer."""

from __future__ import annotations

import base64
import binascii
import hashlib
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox.verdicts import Verdict
from service.api.auth.principal import Principal
from service.api.datasets.repository import DatasetRepository
from service.core.states import RunPriority
from service.core.exceptions import InvalidInput
from service.formats.run import completion_for
from service.core.models import Sample
from service.api.runcode.schemas import (
    SUPPORTED_LANGUAGES,
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)
from service.api.runs import service as run_service
from service.api.runs.schemas import RunCreate, RunRead
from service.core.settings import Settings

DATASET_NAME = "passk run_code"
PROBLEM_KEY = "run_code/python"
DIGEST = hashlib.sha256(b"passk run_code dataset v1: one problem of format run").hexdigest()
MODEL = "run_code"


async def _dataset_id(session: AsyncSession, principal: Principal) -> uuid.UUID:
    """The project's dataset holding the one `run` problem, made on first use (concurrent first uses agree): each
    project's /run_code runs are its own, on a dataset of its own."""
    datasets = DatasetRepository(session)
    found = await datasets.get_by_name_digest(principal.project_id, DATASET_NAME, DIGEST)
    if found is not None:
        return found.id
    created = await datasets.insert_if_absent(
        {"id": uuid.uuid4(), "project_id": principal.project_id, "name": DATASET_NAME, "digest": DIGEST,
         "problem_count": 1}
    )
    if created is None:
        found = await datasets.get_by_name_digest(principal.project_id, DATASET_NAME, DIGEST)
        assert found is not None  # ON CONFLICT saw it
        return found.id
    await datasets.insert_problems([{
        "dataset_id": created.id, "position": 0, "key": PROBLEM_KEY, "prompt": "", "test": "", "entry_point": "",
        "format": "run", "cases": [], "tags": ["run_code"],
    }])
    return created.id


def _check(body: RunCodeRequest) -> None:
    if body.language not in SUPPORTED_LANGUAGES:
        raise InvalidInput(
            ["body", "language"],
            f"language {body.language!r} is not supported by this passk; supported: {', '.join(SUPPORTED_LANGUAGES)}",
            body.language,
        )
    for path, content in body.files.items():
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise InvalidInput(["body", "files", path], f"file path {path!r} must be relative, without '..'", path)
        try:
            base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput(["body", "files", path], f"file {path!r} is not valid base64", None) from None


async def submit(session: AsyncSession, settings: Settings, principal: Principal, body: RunCodeRequest) -> RunRead:
    _check(body)
    dataset_id = await _dataset_id(session, principal)
    run = RunCreate(
        dataset_id=dataset_id,
        model=MODEL,
        sampling={"temperature": 0},  # type: ignore[arg-type]
        time_limit_s=min(body.run_timeout, settings.max_time_limit_s),
        memory_mb=min(max(body.memory_limit_MB, 32), settings.max_memory_mb) if (body.memory_limit_MB or 0) > 0 else None,
        samples=[{"problem_id": PROBLEM_KEY, "completion": completion_for(body.code, body.stdin or "", body.files)}],  # type: ignore[list-item]
        priority=RunPriority.INTERACTIVE,
    )
    return await run_service.create(session, settings, principal, run)


async def answer(session: AsyncSession, run_id: uuid.UUID) -> tuple[RunCodeResponse, int | None]:
    """The answer to the /run_code request that has just made (and waited for) this run."""
    sample = (await session.execute(select(Sample).where(Sample.run_id == run_id))).scalar_one()
    return to_response(sample), sample.id


def to_response(sample: Any) -> RunCodeResponse:
    verdict = Verdict(sample.verdict) if sample.verdict else None
    seconds = sample.duration_ms / 1000.0 if sample.duration_ms is not None else None
    stdout, stderr = sample.stdout or "", sample.stderr or ""
    if verdict is None:
        return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=f"sample {sample.id} did not run ({sample.state})")
    if verdict is Verdict.SANDBOX_ERROR:
        return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=sample.detail or "sandbox error")
    if verdict is Verdict.PASSED:
        result = CommandRunResult(status=CommandRunStatus.FINISHED, execution_time=seconds, return_code=0,
                                  stdout=stdout, stderr=stderr)
        return RunCodeResponse(status=RunStatus.SUCCESS, message="", run_result=result)
    if verdict is Verdict.TIMEOUT:
        result = CommandRunResult(status=CommandRunStatus.TIME_LIMIT_EXCEEDED, execution_time=seconds,
                                  return_code=None, stdout=stdout, stderr=stderr)
        return RunCodeResponse(status=RunStatus.FAILED, message="", run_result=result)
    failure = sample.failure or {}
    if failure.get("kind") == "run":
        code = int(failure.get("return_code", 1))
    elif sample.signal:
        code = -int(sample.signal)
    else:
        code = 1  # e.g. a syntax error: what `python` itself exits with
        if sample.detail and sample.detail not in stderr:
            stderr = (stderr + ("\n" if stderr and not stderr.endswith("\n") else "") + sample.detail + "\n")
    result = CommandRunResult(status=CommandRunStatus.FINISHED, execution_time=seconds, return_code=code,
                              stdout=stdout, stderr=stderr)
    return RunCodeResponse(status=RunStatus.FAILED, message="", run_result=result)
