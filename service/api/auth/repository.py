"""API key and dashboard session rows. Functions take a session and never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from service.api.auth.cache import forget_everywhere, forget_session_everywhere
from service.api.auth.keys import generate_key, matches, prefix_of
from service.core.models import ApiKey, DashboardSession
from service.api.auth.principal import Principal
from service.core.models import Project
from service.api.projects.repository import by_name
from service.api.projects.repository import default_project


def create_key(session: Session, name: str, scopes: Sequence[str], project: str | None = None) -> tuple[ApiKey, str]:
    """Insert a key of `project` (a name; None: the default project) and return it with its raw value, which is
    shown once and never stored."""
    owner = default_project(session) if project is None else by_name(session, project)
    new = generate_key()
    key = ApiKey(name=name, prefix=new.prefix, secret_hash=new.secret_hash, scopes=sorted(set(scopes)),
                 project_id=owner.id)
    session.add(key)
    session.flush()
    return key, new.raw


def list_keys(session: Session, project: str | None = None) -> list[tuple[ApiKey, str]]:
    """Keys with their project's name, oldest first; only `project`'s when given."""
    statement = select(ApiKey, Project.name).join(Project, Project.id == ApiKey.project_id).order_by(ApiKey.created_at)
    if project is not None:
        statement = statement.where(Project.name == project)
    return [(key, name) for key, name in session.execute(statement)]


def revoke_key(session: Session, key_id: uuid.UUID) -> bool:
    """Revoke a key. This process's API caches forget it at once; other processes' after api_key_cache_s."""
    result = session.execute(
        update(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None)).values(revoked_at=func.now())
    )
    forget_everywhere(key_id)
    return result.rowcount == 1


def _principal(key: ApiKey, project: str) -> Principal:
    return Principal(key.id, key.name, frozenset(key.scopes), key.project_id, project)


_KEY_AND_PROJECT = select(ApiKey, Project.name).join(Project, Project.id == ApiKey.project_id)


async def find_active_by_raw(session: AsyncSession, raw: str) -> Principal | None:
    """The caller an active key stands for (with its project), or None."""
    prefix = prefix_of(raw)
    if prefix is None:
        return None
    row = (await session.execute(_KEY_AND_PROJECT.where(ApiKey.prefix == prefix, ApiKey.revoked_at.is_(None)))).first()
    if row is None or not matches(raw, row[0].secret_hash):
        return None
    return _principal(*row)


async def open_session(session: AsyncSession, key_id: uuid.UUID, expires_at: float, user_agent: str | None) -> DashboardSession:
    row = DashboardSession(key_id=key_id, expires_at=datetime.fromtimestamp(expires_at, UTC),
                           user_agent=(user_agent or None) and user_agent[:300])
    session.add(row)
    await session.flush()
    return row


async def key_of_session(session: AsyncSession, session_id: uuid.UUID) -> Principal | None:
    """The caller behind a session that is neither revoked nor expired, if its key is active."""
    row = (await session.execute(
        _KEY_AND_PROJECT.join(DashboardSession, DashboardSession.key_id == ApiKey.id).where(
            DashboardSession.id == session_id, DashboardSession.revoked_at.is_(None),
            DashboardSession.expires_at > func.now(), ApiKey.revoked_at.is_(None),
        )
    )).first()
    return None if row is None else _principal(*row)


async def list_sessions(session: AsyncSession, key_id: uuid.UUID) -> list[DashboardSession]:
    """A key's live sessions, newest first."""
    return list(await session.scalars(
        select(DashboardSession).where(
            DashboardSession.key_id == key_id, DashboardSession.revoked_at.is_(None),
            DashboardSession.expires_at > func.now(),
        ).order_by(DashboardSession.created_at.desc(), DashboardSession.id)
    ))


async def revoke_session(session: AsyncSession, session_id: uuid.UUID, key_id: uuid.UUID | None = None) -> bool:
    """End a live session (of `key_id`, where given). This process's caches forget it at once; other API
    processes' after api_key_cache_s, as for a revoked key."""
    conditions = [DashboardSession.id == session_id, DashboardSession.revoked_at.is_(None)]
    if key_id is not None:
        conditions.append(DashboardSession.key_id == key_id)
    result = await session.execute(update(DashboardSession).where(*conditions).values(revoked_at=func.now()))
    forget_session_everywhere(session_id)
    return result.rowcount == 1
