"""Reads for the checkpoint view: the dataset's name and one model's runs that carry a step."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth.principal import Principal
from service.api.projects.ownership import owned, readable_dataset
from service.core.models import Dataset, Run


class CheckpointRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def dataset_name(self, principal: Principal, dataset_id: uuid.UUID) -> str | None:
        """The dataset's name when the caller may read it, or has runs on it (a run keeps its dataset readable to
        its project after the owner stops sharing it); None otherwise, as for no dataset at all."""
        has_runs = exists().where(Run.dataset_id == Dataset.id, owned(principal, Run.project_id))
        statement = select(Dataset.name).where(Dataset.id == dataset_id, or_(readable_dataset(principal), has_runs))
        return await self.session.scalar(statement)

    async def models_with_steps(self, principal: Principal, dataset_id: uuid.UUID) -> list[str]:
        """The models of the caller's unarchived runs on the dataset that carry a step."""
        statement = (
            select(Run.model).where(
                owned(principal, Run.project_id), Run.dataset_id == dataset_id, Run.step.is_not(None),
                Run.archived.is_(False),
            ).distinct().order_by(Run.model).limit(21)
        )
        return list((await self.session.execute(statement)).scalars().all())

    async def runs_with_steps(
        self, principal: Principal, model: str, dataset_id: uuid.UUID, limit: int
    ) -> tuple[Sequence[Run], int]:
        """The caller's unarchived runs of `model` on the dataset that carry a step: the `limit` latest steps in
        step order (then submission order), and how many there are in all."""
        filters = (
            owned(principal, Run.project_id), Run.model == model, Run.dataset_id == dataset_id,
            Run.step.is_not(None), Run.archived.is_(False),
        )
        latest = (
            select(Run).where(*filters)
            .order_by(Run.step.desc(), Run.created_at.desc(), Run.id.desc()).limit(limit)
        )
        runs = list((await self.session.execute(latest)).scalars().all())
        runs.reverse()
        total = len(runs)
        if total == limit:
            total = int(await self.session.scalar(select(func.count()).select_from(Run).where(*filters)) or 0)
        return runs, total
