"""Release rule rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.models import ReleaseRule


class ReleaseRuleRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def insert(self, values: dict[str, Any]) -> ReleaseRule | None:
        """The new rule, or None if the name is taken (a concurrent insert included)."""
        statement = (
            pg_insert(ReleaseRule)
            .values(**values, created_at=func.clock_timestamp())
            .on_conflict_do_nothing(index_elements=["name"])
            .returning(ReleaseRule)
        )
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def by_name(self, name: str) -> ReleaseRule | None:
        return (await self.session.execute(select(ReleaseRule).where(ReleaseRule.name == name))).scalar_one_or_none()

    async def by_id(self, rule_id: uuid.UUID) -> ReleaseRule | None:
        return (await self.session.execute(select(ReleaseRule).where(ReleaseRule.id == rule_id))).scalar_one_or_none()

    async def list_all(self) -> Sequence[ReleaseRule]:
        statement = select(ReleaseRule).order_by(ReleaseRule.created_at.desc()).limit(1000)
        return (await self.session.execute(statement)).scalars().all()
