"""Engines, sessions and the one place where transactions are committed.

Services and repositories never commit: the request dependency (API) or the
`transaction()` context manager (worker, CLI) does, so one request or one task
is one transaction.
"""

from __future__ import annotations

import select
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy.exc
from sqlalchemy import MetaData, create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

# Stable constraint names so Alembic autogenerate and hand-written migrations agree.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def psycopg_url(url: str) -> str:
    """Normalise any postgres URL to the psycopg 3 driver (sync and async share it)."""
    parsed = make_url(url)
    if parsed.drivername in {"postgres", "postgresql", "postgresql+psycopg2", "postgresql+asyncpg"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


# Raised when every connection of an engine's pool stayed busy for its pool_timeout: overload, and nothing was
# stored (no connection, so no transaction), so the request may be sent again.
PoolTimeout = sqlalchemy.exc.TimeoutError
BUSY = "the server is busy: none of its database connections came free in time; retry"


# A pooled connection back in use after this long unused is pinged before it is handed out (see check_on_checkout).
PING_AFTER_IDLE_S = 10.0


def _has_news(dbapi_connection: Any) -> bool:
    """Whether the server has sent anything to a connection that is idle in the pool, where it owes nothing: the
    error and end of file of a connection the server ended (a restart, pg_terminate_backend, an idle timeout).
    A connection whose socket cannot be read counts too. No round trip: a poll with no wait."""
    driver = getattr(dbapi_connection, "driver_connection", dbapi_connection)  # the async adapter's psycopg conn
    try:
        poller = select.poll()
        poller.register(driver.fileno(), select.POLLIN | select.POLLPRI)
        return bool(poller.poll(0))
    except Exception:
        return True


def check_on_checkout(engine: Engine) -> None:
    """Hand out no dead connection, without a round trip per checkout (SQLAlchemy's pool_pre_ping pings every
    time: about a tenth of the statements of a busy API or worker).

    A connection is pinged before use only when it may be dead: the server sent something while it sat in the pool
    (when PostgreSQL ends a connection, at a restart or a termination, it says so and closes it), or it sat unused
    for PING_AFTER_IDLE_S (a network between us can drop an idle connection silently). A failed ping recycles
    every connection made before it, as pool_pre_ping does, and the checkout gets a new one. A connection the
    server ends while it is in use fails that transaction, with or without a ping."""
    dialect = engine.dialect

    def _stamp(dbapi_connection: Any, record: Any) -> None:  # a new connection, or one back in the pool
        record.info["returned_at"] = time.monotonic()

    event.listen(engine, "connect", _stamp)
    event.listen(engine, "checkin", _stamp)

    @event.listens_for(engine, "checkout")
    def _check(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        idle_s = time.monotonic() - record.info.get("returned_at", 0.0)
        if idle_s < PING_AFTER_IDLE_S and not _has_news(dbapi_connection):
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as exc:
            raise sqlalchemy.exc.InvalidatePoolError(f"a pooled connection failed its ping: {exc}") from exc


def make_async_engine(url: str, **kwargs: object) -> AsyncEngine:
    engine = create_async_engine(psycopg_url(url), **kwargs)
    check_on_checkout(engine.sync_engine)
    return engine


def make_sync_engine(url: str, **kwargs: object) -> Engine:
    engine = create_engine(psycopg_url(url), **kwargs)
    check_on_checkout(engine)
    return engine


# The server settings of a worker's connections (make_worker_engine).
WORKER_SERVER_SETTINGS = {"plan_cache_mode": "force_generic_plan"}


def make_worker_engine(url: str, **kwargs: object) -> Engine:
    """The engine of a worker (and of the benches that stand in for one).

    A worker runs a dozen statements millions of times on connections it holds for hours. Each is prepared at
    its first execution and planned once per connection, generically: otherwise PostgreSQL plans it for each of
    the driver's first five executions (before psycopg prepares it) and for the first five prepared ones, and
    keeps planning the ones whose custom plans look cheaper; planning the claim costs more CPU than running it,
    and a new connection's first dozen cycles cost several times a steady one's. The generic plans are the ones
    the statements need: the constants a plan depends on (the queue's states, the claim's `LIMIT 1`s) are in the
    SQL text (tests/test_claim_order.py checks the claim's).
    """
    options = " ".join(f"-c {name}={value}" for name, value in WORKER_SERVER_SETTINGS.items())
    return make_sync_engine(url, connect_args={"prepare_threshold": 0, "options": options}, **kwargs)


def make_async_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


def make_sync_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False, autoflush=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work for the worker and the CLI: commit on success, roll back on error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


async def session_scope(factory: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """Async counterpart used by the API's request dependency."""
    async with factory() as session:
        try:
            yield session
            await session.commit()
        except BaseException:
            await session.rollback()
            raise
