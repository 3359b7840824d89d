"""Dataset use cases. Never commits: the request dependency does, once."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from service.datasets.repository import DatasetRepository
from service.datasets.schemas import DatasetCreate, DatasetDetail, DatasetRead, ProblemSummary
from service.dependencies import InvalidInput, NotFound
from service.models import Dataset
from service.settings import Settings


def digest(body: DatasetCreate) -> str:
    """sha256 of the canonical JSON of everything that affects results, not the name.

    Problems keep their given order (it is the listing order); keys are sorted
    and `task_id` vs `id` or omitted vs default fields serialise identically.
    """
    content = {
        "problems": [problem.model_dump(mode="json") for problem in body.problems],
        "time_limit_s": body.time_limit_s,
        "memory_mb": body.memory_mb,
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


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
                "prompt": problem.prompt,
                "test": problem.test,
                "entry_point": problem.entry_point,
                "canonical_solution": problem.canonical_solution,
                "tags": problem.tags,
                "time_limit_s": problem.time_limit_s,
                "memory_mb": problem.memory_mb,
            }
            for position, problem in enumerate(body.problems)
        ]
    )
    return dataset, True


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
