"""Dataset use cases. Never commits: the request dependency does, once."""

from __future__ import annotations

import builtins
import hashlib
import json
import re
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from service.datasets.repository import DatasetRepository
from service.datasets.schemas import (
    AnyProblemIn,
    CallProblemIn,
    DatasetCreate,
    DatasetDetail,
    DatasetRead,
    MbppProblemIn,
    ProblemIn,
    ProblemSummary,
    StdioProblemIn,
)
from service.dependencies import InvalidInput, NotFound
from service.models import Dataset
from service.settings import Settings


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
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _digest_content(problem: AnyProblemIn) -> dict[str, Any]:
    # HumanEval problems hash exactly as before formats existed, so re-posting
    # an existing HumanEval dataset finds it instead of creating a twin.
    if isinstance(problem, ProblemIn):
        return problem.model_dump(mode="json", exclude={"format"})
    return problem.model_dump(mode="json")


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


def _validate(body: DatasetCreate, settings: Settings) -> None:
    if len(body.problems) > settings.max_problems_per_dataset:
        raise InvalidInput(
            ["body", "problems"],
            f"{len(body.problems)} problems; at most {settings.max_problems_per_dataset} per dataset",
        )
    check_limits(settings, ["body"], body.time_limit_s, body.memory_mb)
    for position, problem in enumerate(body.problems):
        check_limits(settings, ["body", "problems", position], problem.time_limit_s, problem.memory_mb)
    duplicates = [key for key, count in Counter(p.id for p in body.problems).items() if count > 1]
    if duplicates:
        shown = ", ".join(repr(key) for key in duplicates[:10])
        raise InvalidInput(["body", "problems"], f"duplicate problem id(s): {shown}", duplicates[:10])


async def create(session: AsyncSession, settings: Settings, body: DatasetCreate) -> tuple[Dataset, bool]:
    """Create the dataset, or return the existing one with the same name and content.

    Returns (dataset, created).
    """
    _validate(body, settings)
    repository = DatasetRepository(session)
    content_digest = digest(body)
    dataset = await repository.insert_if_absent(
        {
            "id": uuid.uuid4(),
            "name": body.name,
            "digest": content_digest,
            "problem_count": len(body.problems),
            "time_limit_s": body.time_limit_s,
            "memory_mb": body.memory_mb,
        }
    )
    if dataset is None:
        existing = await repository.get_by_name_digest(body.name, content_digest)
        assert existing is not None  # ON CONFLICT saw it, and rows are never deleted here
        return existing, False
    await repository.insert_problems(
        [
            {
                "dataset_id": dataset.id,
                "position": position,
                "key": problem.id,
                "tags": problem.tags,
                "time_limit_s": problem.time_limit_s,
                "memory_mb": problem.memory_mb,
                **format_columns(problem),
            }
            for position, problem in enumerate(body.problems)
        ]
    )
    return dataset, True


# Every row names every column: a multi-row INSERT takes its columns from the first row.
_UNUSED = {"setup_code": None, "cases": None, "comparison": None, "abs_tol": None, "rel_tol": None}


def format_columns(problem: AnyProblemIn) -> dict[str, Any]:
    """The columns a problem's format fills; service.formats reads them back to build programs."""
    if isinstance(problem, ProblemIn):
        return {
            **_UNUSED,
            "format": "humaneval",
            "prompt": problem.prompt,
            "test": problem.test,
            "entry_point": problem.entry_point,
            "canonical_solution": problem.canonical_solution,
        }
    if isinstance(problem, MbppProblemIn):
        return {
            **_UNUSED,
            "format": "mbpp",
            "prompt": problem.text,
            "test": "\n".join(problem.test_list),
            "entry_point": problem.entry_point or mbpp_entry_point(problem.test_list[0], problem.code),
            "canonical_solution": problem.code,
            "setup_code": problem.test_setup_code,
        }
    judged: dict[str, Any] = {
        **_UNUSED,
        "prompt": problem.prompt,
        "test": "",
        "canonical_solution": problem.canonical_solution,
        "setup_code": problem.setup_code,
        "abs_tol": problem.abs_tol,
        "rel_tol": problem.rel_tol,
        "cases": [case.model_dump(mode="json") for case in problem.cases],
    }
    if isinstance(problem, StdioProblemIn):
        return {**judged, "format": "stdio", "entry_point": "", "comparison": problem.comparison}
    assert isinstance(problem, CallProblemIn)
    return {**judged, "format": "call", "entry_point": problem.fn_name}


_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")


def mbpp_entry_point(first_assert: str, code: str | None) -> str:
    """The function the first assert calls: one defined by the reference code, else the first non-builtin."""
    called = [name for name in _CALLED.findall(first_assert) if name not in {"assert", "not", "and", "or", "in"}]
    defined = set(re.findall(r"^def\s+([A-Za-z_]\w*)", code or "", re.MULTILINE))
    for name in called:
        if name in defined:
            return name
    return next((name for name in called if not hasattr(builtins, name)), "")


async def get(session: AsyncSession, dataset_id: uuid.UUID) -> DatasetDetail:
    repository = DatasetRepository(session)
    dataset = await repository.get(dataset_id)
    if dataset is None:
        raise NotFound("dataset", dataset_id)
    problems = [
        ProblemSummary(id=key, entry_point=entry_point, tags=list(tags or []))
        for key, entry_point, tags in await repository.problem_summaries(dataset_id)
    ]
    return DatasetDetail(**DatasetRead.model_validate(dataset).model_dump(), problems=problems)


async def list_datasets(session: AsyncSession, *, limit: int, offset: int) -> tuple[Sequence[Dataset], int]:
    repository = DatasetRepository(session)
    return await repository.list_page(limit=limit, offset=offset), await repository.count()
