"""Fixtures: a real PostgreSQL (schema from migrations), a rolled-back session per test, an HTTP client."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import Session

from passk_dev.localstack import create_database, drop_database, postgres_server
from sandbox.engine import ensure_engine
from sandbox.executor import Sandbox, SandboxSettings
from sandbox.images import ensure_sandbox_image
from service.api.app import create_app
from service.api.auth.keys import SCOPES
from service.api.auth.repository import create_key
from service.core.database import make_async_engine, make_sync_engine, make_sync_sessionmaker
from service.api.dependencies import get_session
from service.core.settings import Settings
from service.api.projects.repository import create_project

# The real parts a test needs, as markers (registered in pyproject.toml), so a developer can run one tier:
# `pytest -m "not db and not docker and not browser and not toolchain"` runs the pure unit tests.
_DB_FIXTURES = {"database_url", "engine", "db_session", "app", "client", "anonymous_client", "stack"}
_DOCKER_FIXTURES = {"docker_client", "sandbox_image", "sandbox", "stack", "compose"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        parts = set(Path(str(item.path)).parts)
        if fixtures & _DB_FIXTURES or "deploy" in parts:
            item.add_marker(pytest.mark.db)
        if fixtures & _DOCKER_FIXTURES or parts & {"sandbox", "deploy", "e2e"}:
            item.add_marker(pytest.mark.docker)
        module = getattr(item, "module", None)
        if module is not None and any(
            getattr(value, "__module__", "").startswith("playwright") for value in vars(module).values()
        ):
            item.add_marker(pytest.mark.browser)
        if "languages" in parts:
            item.add_marker(pytest.mark.toolchain)
        if "sandbox" in parts:  # the sandbox's own tests: CPU and wall-clock limits, load, hostile programs
            item.add_marker(pytest.mark.alone)


class _FailuresNamedAtOnce:
    """Names a failure on its own line as it happens, so a log cut short before pytest's summary still says which
    test failed and after how long. Registered in the process that prints (xdist's controller)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if report.failed and terminal is not None:
            terminal.write_line(f"\nFAILED ({report.when}, {report.duration:.0f} s): {report.nodeid}", red=True)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_FailuresNamedAtOnce(config), "passk-failures-named-at-once")


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """A fresh database on $PASSK_TEST_DATABASE_URL's server, or on a private embedded cluster.

    No skip: if PostgreSQL cannot start, every test errors with the reason.
    """
    with postgres_server("passk-test") as base_url:
        url = create_database(base_url, "passk_test")
        yield url
        drop_database(url)


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(env="test", database_url=database_url)


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_async_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
async def db_session(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    """A session inside an outer transaction that is rolled back: its commits are savepoint releases."""
    async with engine.connect() as connection:
        outer = await connection.begin()
        session = AsyncSession(
            bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False, autoflush=False
        )
        try:
            yield session
        finally:
            await session.close()
            await outer.rollback()


@pytest.fixture
def sync_session(database_url: str) -> Iterator[Session]:
    """A synchronous session, as the worker's code uses, rolled back at the end (what it did not commit)."""
    engine = make_sync_engine(database_url)
    db = make_sync_sessionmaker(engine)()
    try:
        yield db
    finally:
        db.rollback()
        db.close()
        engine.dispose()


@pytest.fixture
async def app(settings: Settings, db_session: AsyncSession) -> AsyncIterator[FastAPI]:
    app = create_app(settings)

    async def session_override() -> AsyncIterator[AsyncSession]:
        # Same contract as get_session: commit after the endpoint, roll back on error.
        try:
            yield db_session
            await db_session.commit()
        except BaseException:
            await db_session.rollback()
            raise

    app.dependency_overrides[get_session] = session_override
    # ASGITransport does not send lifespan events; run the lifespan so app.state has its engine.
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def api_key(db_session: AsyncSession) -> str:
    """A key with every scope, in the rolled-back transaction."""
    _, raw = await db_session.run_sync(lambda sync: create_key(sync, "tests", SCOPES))
    # Released into the outer transaction, so a request that rolls back its own work keeps the key.
    await db_session.commit()
    return raw


async def project_key(db_session: AsyncSession, project: str, scopes: Sequence[str] = SCOPES) -> str:
    """A key of `project` (made if new), in the rolled-back transaction."""
    def make(sync: Session) -> str:
        create_project(sync, project)
        return create_key(sync, f"{project} key", scopes, project)[1]

    raw = await db_session.run_sync(make)
    await db_session.commit()
    return raw


def client_for(app: FastAPI, api_key: str) -> httpx.AsyncClient:
    """An HTTP client of the app that sends `api_key` (use as an async context manager)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60,
                             headers={"Authorization": f"Bearer {api_key}"})


@pytest.fixture
async def anonymous_client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60) as c:
        yield c


@pytest.fixture
async def client(app: FastAPI, api_key: str) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60, headers=headers
    ) as c:
        yield c


# ---- helpers shared by the API tests -------------------------------------------------------------


def problem(key: str, **extra: Any) -> dict[str, Any]:
    entry = "f_" + "".join(ch if ch.isalnum() else "_" for ch in key)
    return {
        "id": key,
        "prompt": f"def {entry}(x):\n",
        "test": "def check(candidate):\n    assert candidate(1) == 1\n",
        "entry_point": entry,
        **extra,
    }


async def create_dataset(client: httpx.AsyncClient, keys: Sequence[str], name: str | None = None, **body: Any) -> dict[str, Any]:
    payload = {"name": name or f"ds-{secrets.token_hex(4)}", "problems": [problem(k) for k in keys], **body}
    response = await client.post("/v1/datasets", json=payload)
    assert response.status_code == 201, response.text
    return response.json()


async def create_run(
    client: httpx.AsyncClient, dataset_id: str, samples_per_problem: dict[str, int], **body: Any
) -> dict[str, Any]:
    samples = [
        {"problem_id": key, "completion": f"    return x  # {key} no. {i}\n"}
        for key, count in samples_per_problem.items()
        for i in range(count)
    ]
    payload = {"dataset_id": dataset_id, "model": "test-model", "sampling": {"temperature": 0.8}, "samples": samples, **body}
    response = await client.post("/v1/runs", json=payload)
    assert response.status_code == 202, response.text
    return response.json()


async def set_verdicts(session: AsyncSession, run_id: str, key: str, verdicts: Sequence[str | None]) -> None:
    """Emulate a worker: sample `index` i of problem `key` gets verdicts[i] (None leaves it queued)."""
    pairs = [(i, v) for i, v in enumerate(verdicts) if v is not None]
    if not pairs:
        return
    await session.execute(
        text(
            "UPDATE samples s SET state = 'done', verdict = v.verdict, attempts = 1, finished_at = now() "
            "FROM problems p, unnest(CAST(:indexes AS int[]), CAST(:verdicts AS text[])) AS v(idx, verdict) "
            "WHERE s.run_id = :run_id AND s.problem_id = p.id AND p.key = :key AND s.index = v.idx"
        ),
        {"run_id": run_id, "key": key, "indexes": [i for i, _ in pairs], "verdicts": [v for _, v in pairs]},
    )
    # Like a worker, commit (here: release the savepoint), so a later request that fails and
    # rolls back its own savepoint cannot take these verdicts with it.
    await session.commit()


# ---- a real Docker engine and the real sandbox image; never skipped: no engine is a failure ----------


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    return ensure_engine(Path(".passk").resolve())


@pytest.fixture(scope="session")
def sandbox_image(docker_client: docker.DockerClient) -> str:
    return ensure_sandbox_image(docker_client, Settings().sandbox_base_image)


@pytest.fixture
def sandbox(docker_client: docker.DockerClient, sandbox_image: str) -> Iterator[Sandbox]:
    box = Sandbox(docker_client, SandboxSettings(image=sandbox_image, owner="passk-tests", excerpt_bytes=4096))
    yield box
    box.close()
