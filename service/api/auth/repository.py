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


def create_key(session: Session, name: str, scopes: Sequence[str]) -> tuple[ApiKey, str]:
    """Insert a key and return it with its raw value, which is shown once and never stored."""
    new = generate_key()
    key = ApiKey(name=name, prefix=new.prefix, secret_hash=new.secret_hash, scopes=sorted(set(scopes)))
    session.add(key)
    session.flush()
    return key, new.raw


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.created_at)))


def revoke_key(session: Session, key_id: uuid.UUID) -> bool:
    """Revoke a key. This process's API caches forget it at once; other processes' after api_key_cache_s."""
    result = session.execute(
        update(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None)).values(revoked_at=func.now())
    )
    forget_everywhere(key_id)
    return result.rowcount == 1


async def find_active_by_raw(session: AsyncSession, raw: str) -> ApiKey | None:
    prefix = prefix_of(raw)
    if prefix is None:
        return None
    key = await session.scalar(select(ApiKey).where(ApiKey.prefix == prefix, ApiKey.revoked_at.is_(None)))
    return key if key is not None and matches(raw, key.secret_hash) else None


async def open_session(session: AsyncSession, key_id: uuid.UUID, expires_at: float, user_agent: str | None) -> DashboardSession:
    row = DashboardSession(key_id=key_id, expires_at=datetime.fromtimestamp(expires_at, UTC),
                           user_agent=(user_agent or None) and user_agent[:300])
    session.add(row)
    await session.flush()
    return row


async def key_of_session(session: AsyncSession, session_id: uuid.UUID) -> ApiKey | None:
    """The active key of a session that is neither revoked nor expired."""
    return await session.scalar(
        select(ApiKey).join(DashboardSession, DashboardSession.key_id == ApiKey.id).where(
            DashboardSession.id == session_id, DashboardSession.revoked_at.is_(None),
            DashboardSession.expires_at > func.now(), ApiKey.revoked_at.is_(None),
        )
    )


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
