"""Release rule rows: each project's own (names are the project's; an operator reads every project's by id)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.models import ReleaseRule
from service.api.auth.principal import Principal
from service.api.projects.ownership import owned


class ReleaseRuleRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def insert(self, values: dict[str, Any]) -> ReleaseRule | None:
        """The new rule, or None if its project has taken the name (a concurrent insert included)."""
        statement = (
            pg_insert(ReleaseRule)
            .values(**values, created_at=func.clock_timestamp())
            .on_conflict_do_nothing(index_elements=["project_id", "name"])
            .returning(ReleaseRule)
        )
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def by_name(self, principal: Principal, name: str) -> ReleaseRule | None:
        """The caller's project's rule of this name: a name never finds another project's rule, an operator's
        call included."""
        statement = select(ReleaseRule).where(ReleaseRule.project_id == principal.project_id, ReleaseRule.name == name)
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def by_id(self, principal: Principal, rule_id: uuid.UUID) -> ReleaseRule | None:
        statement = select(ReleaseRule).where(ReleaseRule.id == rule_id, owned(principal, ReleaseRule.project_id))
        return (await self.session.execute(statement)).scalar_one_or_none()

    async def list_all(self, principal: Principal) -> Sequence[ReleaseRule]:
        statement = (
            select(ReleaseRule).where(owned(principal, ReleaseRule.project_id))
            .order_by(ReleaseRule.created_at.desc()).limit(1000)
        )
        return (await self.session.execute(statement)).scalars().all()
