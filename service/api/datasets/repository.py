"""Dataset and problem queries. Reads select only the columns they return."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.models import Dataset, Problem


class DatasetRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get(self, dataset_id: uuid.UUID) -> Dataset | None:
        return await self.session.get(Dataset, dataset_id)

    async def get_by_name_digest(self, name: str, digest: str) -> Dataset | None:
        result = await self.session.execute(select(Dataset).where(Dataset.name == name, Dataset.digest == digest))
        return result.scalar_one_or_none()

    async def insert_if_absent(self, values: dict[str, Any]) -> Dataset | None:
        """Insert a dataset unless (name, digest) exists; None means it already did.

        ON CONFLICT makes two concurrent identical posts agree on one row:
        the loser waits for the winner's commit and then sees its row.
        """
        statement = (
            pg_insert(Dataset)
            # clock_timestamp, not now(): "newest first" must hold within one transaction too.
            .values(**values, created_at=func.clock_timestamp())
            .on_conflict_do_nothing(index_elements=[Dataset.name, Dataset.digest])
            .returning(Dataset)
        )
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def insert_problems(self, rows: Sequence[dict[str, Any]]) -> None:
        # A list of parameter sets is sent as multi-row INSERTs (insertmanyvalues),
        # not one round trip per problem.
        await self.session.execute(insert(Problem), list(rows))

    async def count(self) -> int:
        return int((await self.session.execute(select(func.count()).select_from(Dataset))).scalar_one())

    async def list_page(self, *, limit: int, offset: int) -> Sequence[Dataset]:
        statement = select(Dataset).order_by(Dataset.created_at.desc(), Dataset.id).limit(limit).offset(offset)
        return (await self.session.execute(statement)).scalars().all()

    async def problem_summaries(self, dataset_id: uuid.UUID) -> Sequence[Row[tuple[str, str, list[str]]]]:
        statement = (
            select(Problem.key, Problem.entry_point, Problem.tags)
            .where(Problem.dataset_id == dataset_id)
            .order_by(Problem.position)
        )
        return (await self.session.execute(statement)).all()

    async def problem_ids_by_key(self, dataset_id: uuid.UUID) -> dict[str, int]:
        statement = select(Problem.key, Problem.id).where(Problem.dataset_id == dataset_id)
        return {key: id_ for key, id_ in (await self.session.execute(statement)).all()}
