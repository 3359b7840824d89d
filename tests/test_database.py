"""Pooled connections on a real PostgreSQL: a dead one is never handed out, and a live one costs no round trip."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine, make_url

from service.core import database
from tests.e2e.conftest import wait_until


def _terminate(database_url: str, pid: int) -> None:
    admin = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        assert connection.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)


def _count_pings(engine: Engine) -> list[int]:
    pings: list[int] = []
    ping: Callable[[Any], bool] = engine.dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        pings.append(1)
        return ping(dbapi_connection)

    engine.dialect.do_ping = counted  # type: ignore[method-assign]
    return pings


def _backend(engine: Engine) -> int:
    return _backend_and_connection(engine)[0]


def _backend_and_connection(engine: Engine) -> tuple[int, Any]:
    with engine.begin() as connection:
        pid = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
        return pid, connection.connection.dbapi_connection


def test_a_connection_in_steady_use_is_not_pinged(database_url: str) -> None:
    engine = database.make_sync_engine(database_url, pool_size=1, max_overflow=0)
    try:
        pings = _count_pings(engine)
        pids = {_backend(engine) for _ in range(20)}
        assert len(pids) == 1
        assert pings == []
    finally:
        engine.dispose()


def test_a_connection_back_after_a_long_idle_is_pinged(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = database.make_sync_engine(database_url, pool_size=1, max_overflow=0)
    try:
        pings = _count_pings(engine)
        first = _backend(engine)
        monkeypatch.setattr(database, "PING_AFTER_IDLE_S", 0.0)
        assert _backend(engine) == first
        assert len(pings) == 1
    finally:
        engine.dispose()


def test_a_connection_the_server_ended_in_the_pool_is_replaced(database_url: str) -> None:
    """Ended while idle in the pool (as at a restart) and reused at once: the next transaction gets a new
    connection and never sees the dead one."""
    engine = database.make_sync_engine(database_url, pool_size=2, max_overflow=0)
    try:
        pings = _count_pings(engine)
        first, pooled = _backend_and_connection(engine)
        _terminate(database_url, first)
        wait_until(lambda: database._has_news(pooled), 10, "the server's word that it ended the connection")
        second = _backend(engine)
        assert second != first
        assert len(pings) == 1
        assert _backend(engine) == second
        assert len(pings) == 1
    finally:
        engine.dispose()


async def test_the_api_engine_replaces_a_connection_the_server_ended(database_url: str) -> None:
    engine = database.make_async_engine(database_url, pool_size=1, max_overflow=0)
    try:
        pings = _count_pings(engine.sync_engine)

        async def backend() -> tuple[int, Any]:
            async with engine.begin() as connection:
                pid = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
                return pid, (await connection.get_raw_connection()).dbapi_connection

        first, pooled = await backend()
        assert (await backend())[0] == first
        assert pings == []
        _terminate(database_url, first)
        wait_until(lambda: database._has_news(pooled), 10, "the server's word that it ended the connection")
        second, _ = await backend()
        assert second != first
        assert len(pings) == 1
    finally:
        await engine.dispose()
