"""Dataset and problem queries. Reads select only the columns they return.

A caller reads its project's datasets and the ones other projects share (service/projects/ownership.py);
names are looked up within one project only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.models import Dataset, Problem
from service.api.auth.principal import Principal
from service.core.models import Project
from service.api.projects.ownership import owned
from service.api.projects.ownership import readable_dataset


class DatasetRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get(self, principal: Principal, dataset_id: uuid.UUID) -> Dataset | None:
        """A dataset the caller may read (its project's, or a shared one)."""
        statement = select(Dataset).where(Dataset.id == dataset_id, readable_dataset(principal))
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def get_with_project(self, principal: Principal, dataset_id: uuid.UUID) -> tuple[Dataset, str] | None:
        """A readable dataset and its project's name."""
        statement = (
            select(Dataset, Project.name).join(Project, Project.id == Dataset.project_id)
            .where(Dataset.id == dataset_id, readable_dataset(principal))
        )
        row = (await self.session.execute(statement)).one_or_none()
        return None if row is None else (row[0], row[1])

    async def of_run(self, dataset_id: uuid.UUID) -> Dataset:
        """The dataset of a run the caller may read: the run keeps it readable to its project, even after its
        owner stopped sharing it."""
        dataset = await self.session.get(Dataset, dataset_id)
        assert dataset is not None  # a run's dataset is never deleted (RESTRICT)
        return dataset

    async def get_by_name_digest(self, project_id: uuid.UUID, name: str, digest: str) -> Dataset | None:
        statement = select(Dataset).where(Dataset.project_id == project_id, Dataset.name == name, Dataset.digest == digest)
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def get_with_problem(self, project_id: uuid.UUID, name: str, digest: str, key: str) -> tuple[Dataset, int] | None:
        """A project's dataset by name and digest with the id of its problem `key`, in one round trip; None when
        there is no such dataset (or no such problem in it)."""
        statement = (
            select(Dataset, Problem.id)
            .join(Problem, Problem.dataset_id == Dataset.id)
            .where(Dataset.project_id == project_id, Dataset.name == name, Dataset.digest == digest, Problem.key == key)
        )
        row = (await self.session.execute(statement)).one_or_none()
        return None if row is None else (row[0], row[1])

    async def insert_if_absent(self, values: dict[str, Any]) -> Dataset | None:
        """Insert a dataset unless (project, name, digest) exists; None means it already did.

        ON CONFLICT makes two concurrent identical posts agree on one row:
        the loser waits for the winner's commit and then sees its row.
        """
        statement = (
            pg_insert(Dataset)
            # clock_timestamp, not now(): "newest first" must hold within one transaction too.
            .values(**values, created_at=func.clock_timestamp())
            .on_conflict_do_nothing(index_elements=[Dataset.project_id, Dataset.name, Dataset.digest])
            .returning(Dataset)
        )
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def insert_problems(self, rows: Sequence[dict[str, Any]]) -> None:
        # A list of parameter sets is sent as multi-row INSERTs (insertmanyvalues),
        # not one round trip per problem.
        await self.session.execute(insert(Problem), list(rows))

    async def update_marks(self, principal: Principal, dataset_id: uuid.UUID, values: dict[str, Any]) -> bool:
        """Set `shared` / `hidden_tests` of one of the caller's own datasets (none given: only look); False if it
        has none by that id."""
        if not values:
            statement: Any = select(Dataset.id).where(Dataset.id == dataset_id, owned(principal, Dataset.project_id))
            return (await self.session.execute(statement)).first() is not None
        statement = (
            update(Dataset).where(Dataset.id == dataset_id, owned(principal, Dataset.project_id))
            .values(**values).returning(Dataset.id)
        )
        return (await self.session.execute(statement.execution_options(synchronize_session=False))).first() is not None

    def _listed(self, principal: Principal, name: str | None, project: str | None) -> list[Any]:
        """The filters of a listing: readable datasets; a `name` within one project (the caller's, unless
        `project` names another, whose shared datasets are then looked in)."""
        filters: list[Any] = [readable_dataset(principal)]
        if project is not None:
            filters.append(Project.name == project)
        elif name is not None:
            filters.append(Dataset.project_id == principal.project_id)
        if name is not None:
            filters.append(Dataset.name == name)
        return filters

    async def count(self, principal: Principal, *, name: str | None = None, project: str | None = None) -> int:
        statement = (
            select(func.count()).select_from(Dataset).join(Project, Project.id == Dataset.project_id)
            .where(*self._listed(principal, name, project))
        )
        return int((await self.session.execute(statement)).scalar_one())

    async def list_page(
        self, principal: Principal, *, limit: int, offset: int, name: str | None = None, project: str | None = None
    ) -> Sequence[Row[tuple[Dataset, str]]]:
        """A page of readable datasets with their project's name, newest first."""
        statement = (
            select(Dataset, Project.name).join(Project, Project.id == Dataset.project_id)
            .where(*self._listed(principal, name, project))
            .order_by(Dataset.created_at.desc(), Dataset.id).limit(limit).offset(offset)
        )
        return (await self.session.execute(statement)).all()

    async def problem_summaries(self, dataset_id: uuid.UUID) -> Sequence[Row[tuple[str, str, list[str], bool]]]:
        statement = (
            select(Problem.key, Problem.entry_point, Problem.tags, Problem.hidden_tests)
            .where(Problem.dataset_id == dataset_id)
            .order_by(Problem.position)
        )
        return (await self.session.execute(statement)).all()

    async def problem_ids_by_key(self, dataset_id: uuid.UUID) -> dict[str, int]:
        statement = select(Problem.key, Problem.id).where(Problem.dataset_id == dataset_id)
        return {key: id_ for key, id_ in (await self.session.execute(statement)).all()}

