"""Dataset use cases. Never commits: the request dependency does, once."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from sandbox import languages
from sandbox.languages.split import SplitError, TestSource
from service.api.auth.principal import Principal
from service.api.datasets.repository import DatasetRepository
from service.api.datasets.schemas import (
    AnyProblemIn,
    DatasetCreate,
    DatasetDetail,
    DatasetRead,
    DatasetUpdate,
    LanguageRead,
    ProblemSummary,
)
from service.core.exceptions import Forbidden, InvalidInput, NotFound
from service.core.models import Dataset
from service.core.limits import limits_in_force
from service.core.settings import Settings
from service.formats import registry
from service.formats.humaneval import ProblemIn


def digest(body: DatasetCreate) -> str:
    """sha256 of the canonical JSON of everything that affects results, not the name.

    Problems keep their given order (it is the listing order); keys are sorted
    and `task_id` vs `id` or omitted vs default fields serialise identically.
    """
    content = {
        "problems": [_digest_content(problem) for problem in body.problems],
        "time_limit_s": body.time_limit_s,
        "memory_mb": body.memory_mb,
    }
    if body.language != languages.DEFAULT:  # such datasets hash as they did before languages existed
        content["language"] = body.language
    for name in ("compile_time_limit_s", "compile_memory_mb"):  # only when set: older digests stay
        if getattr(body, name) is not None:
            content[name] = getattr(body, name)
    if body.hidden_tests:  # who sees the tests is no result, but hiding them makes another dataset
        content["hidden_tests"] = True
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _digest_content(problem: AnyProblemIn) -> dict[str, Any]:
    # HumanEval problems hash exactly as before formats existed, so re-posting
    # an existing HumanEval dataset finds it instead of creating a twin; so do
    # problems whose tests are not hidden.
    exclude = {"format"} if isinstance(problem, ProblemIn) else set()
    if not problem.hidden_tests:
        exclude.add("hidden_tests")
    return problem.model_dump(mode="json", exclude=exclude)


def check_limits(
    settings: Settings, loc: Sequence[str | int], time_limit_s: float | None, memory_mb: int | None
) -> None:
    """Server maxima depend on settings, so they are checked here rather than in the schema."""
    if time_limit_s is not None and time_limit_s > settings.max_time_limit_s:
        raise InvalidInput(
            [*loc, "time_limit_s"],
            f"time_limit_s must be at most {settings.max_time_limit_s} (server maximum)",
            time_limit_s,
        )
    if memory_mb is not None and memory_mb > settings.max_memory_mb:
        raise InvalidInput(
            [*loc, "memory_mb"], f"memory_mb must be at most {settings.max_memory_mb} (server maximum)", memory_mb
        )


def check_compile_limits(
    settings: Settings, loc: Sequence[str | int], language: str, time_limit_s: float | None, memory_mb: int | None
) -> None:
    """Compile limits: only for a compiled language, and at most its defaults, unless the server's operator set
    higher maxima (a compile limit is CPU and memory any submitter could otherwise claim from the workers)."""

    if time_limit_s is None and memory_mb is None:
        return
    known = languages.all_languages().get(language)
    if known is not None and not known.compiled:
        name = "compile_time_limit_s" if time_limit_s is not None else "compile_memory_mb"
        raise InvalidInput([*loc, name], f"{name} applies to compiled languages only; {language!r} is not compiled",
                           time_limit_s if time_limit_s is not None else memory_mb)

    def ceiling(setting: float | None, default: float, variable: str) -> tuple[float, str]:
        if setting is not None:
            return setting, "the server's maximum"
        return default, f"{language}'s default; an operator may allow more with {variable}"

    if time_limit_s is not None and known is not None:
        most, why = ceiling(settings.max_compile_time_limit_s, known.compile_time_limit_s,
                            "PASSK_MAX_COMPILE_TIME_LIMIT_S")
        if time_limit_s > most:
            raise InvalidInput([*loc, "compile_time_limit_s"],
                               f"compile_time_limit_s must be at most {most:g} ({why})", time_limit_s)
    if memory_mb is not None and memory_mb < 32:
        raise InvalidInput([*loc, "compile_memory_mb"], "compile_memory_mb must be at least 32", memory_mb)
    if memory_mb is not None and known is not None:
        most, why = ceiling(settings.max_compile_memory_mb, known.compile_memory_bytes // (1024 * 1024),
                            "PASSK_MAX_COMPILE_MEMORY_MB")
        if memory_mb > most:
            raise InvalidInput([*loc, "compile_memory_mb"], f"compile_memory_mb must be at most {most:g} ({why})",
                               memory_mb)


def _validate(body: DatasetCreate, settings: Settings) -> None:
    if len(body.problems) > settings.max_problems_per_dataset:
        raise InvalidInput(
            ["body", "problems"],
            f"{len(body.problems)} problems; at most {settings.max_problems_per_dataset} per dataset",
        )
    check_limits(settings, ["body"], body.time_limit_s, body.memory_mb)
    for position, problem in enumerate(body.problems):
        check_limits(settings, ["body", "problems", position], problem.time_limit_s, problem.memory_mb)
    _validate_language(body)
    _validate_split(body)
    check_compile_limits(settings, ["body"], body.language, body.compile_time_limit_s, body.compile_memory_mb)
    duplicates = [key for key, count in Counter(p.id for p in body.problems).items() if count > 1]
    if duplicates:
        shown = ", ".join(repr(key) for key in duplicates[:10])
        raise InvalidInput(["body", "problems"], f"duplicate problem id(s): {shown}", duplicates[:10])


def _validate_language(body: DatasetCreate) -> None:

    known = languages.all_languages()
    if body.language not in known:
        raise InvalidInput(["body", "language"], f"unknown language {body.language!r}; known: {', '.join(known)}",
                           body.language)
    for position, problem in enumerate(body.problems):
        fmt = registry.for_model(problem)
        if not registry.allows_language(fmt.name, body.language):
            raise InvalidInput(["body", "problems", position, "format"],
                               f"format {fmt.name!r} does not run {body.language!r} programs", fmt.name)
        row_language = getattr(problem, "language", None)  # MultiPL-E rows name theirs
        if row_language is not None and fmt.name == "multipl-e":
            try:
                resolved = languages.resolve(row_language).name
            except ValueError:
                resolved = None
            if resolved != body.language:
                raise InvalidInput(["body", "problems", position, "language"],
                                   f"row language {row_language!r} is not the dataset's language {body.language!r}",
                                   row_language)


def _validate_split(body: DatasetCreate) -> None:
    """A self-checking problem of a compiled language runs as its tests and the model's code in two processes
    (sandbox/languages/split.py); one whose prompt and tests cannot be split would fail every sample, so the
    dataset is refused here, with the language's reason."""

    language = languages.get(body.language)
    if language.programs is None:
        return
    for position, problem in enumerate(body.problems):
        fmt = getattr(problem, "format", None)
        if fmt == "humaneval-x":
            source = TestSource(fmt, problem.prompt, problem.test, declaration=problem.declaration)
        elif fmt == "multipl-e":
            source = TestSource(fmt, problem.prompt, problem.tests)
        else:
            continue
        try:
            language.programs(source)
        except SplitError as exc:
            raise InvalidInput(["body", "problems", position],
                               f"problem {problem.id!r}: passk cannot run its tests apart from the solution: {exc}",
                               problem.id) from None


def dataset_read(principal: Principal, dataset: Dataset, project: str) -> DatasetRead:
    """A dataset row as the API shows it to the caller, with its project's name."""
    columns = {name: getattr(dataset, name) for name in DatasetRead.model_fields if name not in ("project", "own")}
    return DatasetRead(**columns, project=project, own=dataset.project_id == principal.project_id)


async def create(
    session: AsyncSession, settings: Settings, principal: Principal, body: DatasetCreate
) -> tuple[DatasetRead, bool]:
    """Create the dataset in the caller's project, or return the project's one with the same name and content.

    Returns (dataset, created).
    """
    _validate(body, settings)
    repository = DatasetRepository(session)
    content_digest = digest(body)
    dataset = await repository.insert_if_absent(
        {
            "id": uuid.uuid4(),
            "project_id": principal.project_id,
            "shared": body.shared,
            "hidden_tests": body.hidden_tests,
            "name": body.name,
            "digest": content_digest,
            "problem_count": len(body.problems),
            "time_limit_s": body.time_limit_s,
            "memory_mb": body.memory_mb,
            "language": body.language,
            "compile_time_limit_s": body.compile_time_limit_s,
            "compile_memory_mb": body.compile_memory_mb,
        }
    )
    if dataset is None:
        existing = await repository.get_by_name_digest(principal.project_id, body.name, content_digest)
        assert existing is not None  # ON CONFLICT saw it, and rows are never deleted here
        return dataset_read(principal, existing, principal.project), False
    await repository.insert_problems(
        [
            {
                "dataset_id": dataset.id,
                "position": position,
                "key": problem.id,
                "tags": problem.tags,
                "time_limit_s": problem.time_limit_s,
                "memory_mb": problem.memory_mb,
                "hidden_tests": problem.hidden_tests,
                **format_columns(problem),
            }
            for position, problem in enumerate(body.problems)
        ]
    )
    return dataset_read(principal, dataset, principal.project), True


def format_columns(problem: AnyProblemIn) -> dict[str, Any]:
    """The columns a problem's format fills (its module in service/formats); formats read them back."""

    columns = registry.for_model(problem).columns
    assert columns is not None
    return columns(problem)


async def get(session: AsyncSession, principal: Principal, dataset_id: uuid.UUID) -> DatasetDetail:
    repository = DatasetRepository(session)
    found = await repository.get_with_project(principal, dataset_id)
    if found is None:
        raise NotFound("dataset", dataset_id)
    dataset, project = found
    problems = [
        ProblemSummary(id=key, entry_point=entry_point, tags=list(tags or []), hidden_tests=hidden or dataset.hidden_tests)
        for key, entry_point, tags, hidden in await repository.problem_summaries(dataset_id)
    ]
    toolchain = (await toolchains(session)).get(dataset.language, (None, None))[0]
    return DatasetDetail(**dataset_read(principal, dataset, project).model_dump(), problems=problems, toolchain=toolchain)


async def update(session: AsyncSession, principal: Principal, dataset_id: uuid.UUID, body: DatasetUpdate) -> DatasetDetail:
    """Share or stop sharing, hide or show the tests: the dataset's own project only."""
    values = {name: value for name, value in body.model_dump(exclude_unset=True).items() if value is not None}
    repository = DatasetRepository(session)
    if not await repository.update_marks(principal, dataset_id, values):
        found = await repository.get_with_project(principal, dataset_id)
        if found is None:
            raise NotFound("dataset", dataset_id)
        raise Forbidden(f"dataset {dataset_id} is project {found[1]!r}'s, shared read-only: only its project changes it")
    return await get(session, principal, dataset_id)


async def toolchains(session: AsyncSession) -> dict[str, tuple[str, str]]:
    """language -> (toolchain version, image) as workers recorded them."""
    rows = await session.execute(text("SELECT language, version, image FROM toolchains"))
    return {row.language: (row.version, row.image) for row in rows}


async def list_languages(session: AsyncSession) -> list[LanguageRead]:
    known = await toolchains(session)
    result = []
    for language in languages.all_languages().values():
        version, image = known.get(language.name, (None, None))
        defaults = limits_in_force(language=language)  # its compile limits where nothing overrides them
        result.append(LanguageRead(
            name=language.name, title=language.title,
            compile=list(language.compile) if language.compile else None, run=list(language.run),
            source_file=language.source_file,
            compile_time_limit_s=defaults.compile_time_limit_s,
            compile_memory_mb=defaults.compile_memory_mb,
            formats=[name for name in registry.postable() if registry.allows_language(name, language.name)],
            toolchain=version, image=image,
        ))
    return result


async def list_datasets(
    session: AsyncSession, principal: Principal, *, limit: int, offset: int, name: str | None = None,
    project: str | None = None,
) -> tuple[list[DatasetRead], int]:
    """Readable datasets, newest first; with `name`, that name in the caller's project (or in `project`'s
    shared datasets): a name never resolves to another project's dataset unasked."""
    repository = DatasetRepository(session)
    rows = await repository.list_page(principal, limit=limit, offset=offset, name=name, project=project)
    total = await repository.count(principal, name=name, project=project)
    return [dataset_read(principal, dataset, owner) for dataset, owner in rows], total
