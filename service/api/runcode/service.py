"""A /run_code request as a one-sample run of its language's `run` problem, and that sample as SandboxFusion's
answer (service/formats/run_code.py makes the program; sandbox/runtime/native.py, mode `run`, runs it)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox import languages
from sandbox.languages.base import Language
from sandbox.verdicts import Verdict
from service.api.auth.principal import Principal
from service.api.datasets.repository import DatasetRepository
from service.api.runcode.schemas import CommandRunResult, CommandRunStatus, RunCodeRequest, RunCodeResponse, RunStatus
from service.api.runs import service as run_service
from service.api.runs.schemas import RunCreate, RunRead
from service.core.exceptions import InvalidInput
from service.core.models import Dataset, Sample
from service.core.states import RunPriority
from service.core.settings import Settings
from service.formats import run_code
from service.formats.run_code import completion_for

DATASET_NAME = "passk run_code"
MODEL = "run_code"
MIN_MEMORY_MB = 32


def _digest(language: str) -> str:
    # Python's is the digest of the dataset /run_code had before it ran other languages (its runs stay on it).
    tail = "" if language == "python" else f", language {language}"
    return hashlib.sha256(f"passk run_code dataset v1: one problem of format run{tail}".encode()).hexdigest()


def problem_key(language: str) -> str:
    return f"run_code/{language}"


def names(settings: Settings) -> dict[str, Language]:
    """SandboxFusion's language name -> passk's language, for every language passk has, with the operator's
    mapping over it (PASSK_RUN_CODE_LANGUAGES)."""
    known = {name: language for language in languages.all_languages().values() for name in language.run_code_names}
    return known | {name: languages.resolve(target) for name, target in settings.run_code_languages.items()}


@dataclass
class Limits:
    """What a request's limits become here, and a sentence for each one brought into the server's bounds."""

    run_s: float
    memory_mb: int
    compile_s: float | None
    notes: list[str] = field(default_factory=list)


def limits(settings: Settings, language: Language, body: RunCodeRequest) -> Limits:
    notes = []
    run_s = min(body.run_timeout, settings.max_time_limit_s)
    if run_s < body.run_timeout:
        notes.append(f"run_timeout {body.run_timeout:g} s capped at {run_s:g} s (the server's maximum)")
    asked = body.memory_limit_MB
    memory_mb = settings.max_memory_mb if asked <= 0 else min(max(asked, MIN_MEMORY_MB), settings.max_memory_mb)
    if asked > 0 and memory_mb != asked:
        notes.append(f"memory_limit_MB {asked} brought to {memory_mb} (the server allows {MIN_MEMORY_MB} to "
                     f"{settings.max_memory_mb})")
    compile_s = None
    if language.compiled:
        most = settings.max_compile_time_limit_s or language.compile_time_limit_s
        compile_s = min(body.compile_timeout, most)
        if compile_s < body.compile_timeout:
            notes.append(f"compile_timeout {body.compile_timeout:g} s capped at {compile_s:g} s ({language.name}'s "
                         "compile limit)")
    return Limits(run_s, memory_mb, compile_s, notes)


def arguments(language: Language, body: RunCodeRequest, notes: list[str]) -> list[str]:
    """The request's `args` for the run's command line, where its language takes them (SandboxFusion passes them to
    pytest only); another language's are dropped, and `notes` says so."""
    if body.args and not language.run_code_args:
        notes.append(f"args ignored: {body.language} takes none (only pytest does)")
        return []
    return list(body.args)


# An API process's /run_code datasets by (project, language), each kept from the first lookup that found it
# (the application's one, app_singleton "run_code_datasets"). What a run reads of a dataset never changes (its
# problems and limits are fixed when it is made; PATCH changes only `shared` and `hidden_tests`), and a dataset is
# never deleted, so a process looks each one up once, not once per request.
KnownDatasets = dict[tuple[uuid.UUID, str], tuple[Dataset, int]]


async def _dataset(session: AsyncSession, principal: Principal, language: str,
                   known: KnownDatasets) -> tuple[Dataset, dict[str, int]]:
    """The project's dataset holding the language's one `run` problem, made on first use (concurrent first uses
    agree), and that problem's id by key: each project's /run_code runs are its own, on datasets of its own."""
    digest, key = _digest(language), problem_key(language)
    if (seen := known.get((principal.project_id, language))) is not None:
        return seen[0], {key: seen[1]}
    datasets = DatasetRepository(session)
    found = await datasets.get_with_problem(principal.project_id, DATASET_NAME, digest, key)
    if found is not None:
        # Committed before this transaction began: kept, out of this session (whose rollback would expire it).
        session.expunge(found[0])
        known[(principal.project_id, language)] = found
    else:
        created = await datasets.insert_if_absent(
            {"id": uuid.uuid4(), "project_id": principal.project_id, "name": DATASET_NAME, "digest": digest,
             "problem_count": 1, "language": language}
        )
        if created is not None:
            await datasets.insert_problems([{
                "dataset_id": created.id, "position": 0, "key": key, "prompt": "", "test": "",
                "entry_point": "", "format": run_code.FORMAT.name, "cases": [], "tags": ["run_code"],
            }])
        found = await datasets.get_with_problem(principal.project_id, DATASET_NAME, digest, key)
        # Ours, or the one ON CONFLICT saw (its problem came in the same transaction).
        assert found is not None
    dataset, problem_id = found
    return dataset, {key: problem_id}


def language_of(settings: Settings, body: RunCodeRequest) -> Language:
    known = names(settings)
    if body.language not in known:
        raise InvalidInput(
            ["body", "language"],
            f"language {body.language!r} is not supported by this passk; supported: {', '.join(sorted(known))}",
            body.language,
        )
    return known[body.language]


def _check_files(body: RunCodeRequest) -> dict[str, str]:
    files = {}
    for path, content in body.files.items():
        parts = path.split("/")
        if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise InvalidInput(["body", "files", path], f"file path {path!r} must be relative, without '.' or '..'", path)
        try:
            base64.b64decode(content or "", validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput(["body", "files", path], f"file {path!r} is not valid base64", None) from None
        files[path] = content or ""
    return files


async def submit(session: AsyncSession, settings: Settings, principal: Principal, body: RunCodeRequest,
                 language: Language, bounds: Limits, stream: str, known: KnownDatasets,
                 args: list[str] | None = None) -> RunRead:
    files = _check_files(body)
    dataset, problem_ids = await _dataset(session, principal, language.name, known)
    run = RunCreate(
        dataset_id=dataset.id,
        model=MODEL,
        sampling={"temperature": 0},  # type: ignore[arg-type]
        time_limit_s=bounds.run_s,
        memory_mb=bounds.memory_mb,
        compile_time_limit_s=bounds.compile_s,
        samples=[{"problem_id": problem_key(language.name),  # type: ignore[list-item]
                  "completion": completion_for(body.code, body.stdin or "", files, body.fetch_files, args or ())}],
        priority=RunPriority.INTERACTIVE,
    )
    return await run_service.create(session, settings, principal, run, stream=stream, resolved=(dataset, problem_ids))


async def answer(session: AsyncSession, run_id: uuid.UUID, notes: list[str]) -> tuple[RunCodeResponse, int | None]:
    """The answer to the /run_code request that has just made (and waited for) this run."""
    sample = (await session.execute(select(Sample).where(Sample.run_id == run_id))).scalar_one()
    return to_response(sample, notes), sample.id


def _result(part: dict[str, Any], stdout: str, stderr: str) -> CommandRunResult:
    timed_out = bool(part.get("timed_out"))
    return CommandRunResult(
        status=CommandRunStatus.TIME_LIMIT_EXCEEDED if timed_out else CommandRunStatus.FINISHED,
        execution_time=part.get("execution_time"), return_code=part.get("return_code"), stdout=stdout, stderr=stderr,
    )


def to_response(sample: Any, notes: list[str] | None = None) -> RunCodeResponse:
    """SandboxFusion's answer from the sample's record (`failure`, kind `run_code`): Success when every step ended
    with status 0 in time, Failed when one did not, SandboxError when passk itself failed."""
    notes = list(notes or [])
    verdict = Verdict(sample.verdict) if sample.verdict else None
    if verdict is None:
        return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=f"sample {sample.id} did not run ({sample.state})")
    record = sample.failure if isinstance(sample.failure, dict) else {}
    if verdict is Verdict.SANDBOX_ERROR or record.get("kind") != "run_code":
        return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=sample.detail or "sandbox error")
    compile_part, run_part = record.get("compile"), record.get("run")
    compile_result = _result(compile_part, compile_part.get("stdout", ""), compile_part.get("stderr", "")) \
        if compile_part else None
    run_result = _result(run_part, sample.stdout or "", sample.stderr or "") if run_part else None
    for name, cut in (("stdout", sample.stdout_truncated), ("stderr", sample.stderr_truncated)):
        if cut:
            notes.append(f"{name} cut at the server's limit (PASSK_RUN_CODE_OUTPUT_BYTES)")
    skipped = record.get("files_skipped") or []
    if skipped:
        notes.append("not fetched (missing, not a regular file, or over PASSK_RUN_CODE_FETCH_BYTES): "
                     + ", ".join(skipped))
    steps = [part for part in (compile_result, run_result) if part is not None]
    failed = run_result is None or any(
        part.status is CommandRunStatus.TIME_LIMIT_EXCEEDED or part.return_code != 0 for part in steps
    )
    return RunCodeResponse(status=RunStatus.FAILED if failed else RunStatus.SUCCESS, message="; ".join(notes),
                           compile_result=compile_result, run_result=run_result, files=record.get("files") or {})
