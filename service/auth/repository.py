"""API key rows. Functions take a session and never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from service.auth.cache import forget_everywhere
from service.auth.keys import generate_key, matches, prefix_of
from service.models import ApiKey


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


async def get_active(session: AsyncSession, key_id: uuid.UUID) -> ApiKey | None:
    return await session.scalar(select(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None)))
