"""A whole passk on one machine, as separate processes: used by end-to-end tests and benchmarks.

It starts what a deployment runs (the API over real HTTP, worker processes with
Docker sandboxes) against a fresh database built by the migrations.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
from sqlalchemy.engine import make_url
from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from sandbox.engine import ensure_engine
from sandbox.images import ensure_sandbox_image
from service.api.auth.keys import SCOPES
from service.api.auth.repository import create_key
from service.api.projects.repository import create_project
from service.client import PasskClient
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.core.embedded_postgres import EmbeddedPostgres, _free_port
from service.core.migrate import REPO_ROOT, upgrade_to_head
from service.core.settings import Settings


def maintenance_url(url: str) -> str:
    """The libpq URL of the `postgres` database on the server behind `url`: where databases are created and dropped."""
    return make_url(url).set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)


def create_database(server_url: str, prefix: str) -> str:
    """A new, migrated database on the server behind `server_url`; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(maintenance_url(server_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    upgrade_to_head(url)
    return url


def drop_database(url: str) -> None:
    """Drop the database behind `url` (made by create_database), ending its sessions and autovacuum workers."""
    with psycopg.connect(maintenance_url(url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')


@contextmanager
def postgres_server(prefix: str) -> Iterator[str]:
    """A PostgreSQL server's URL: PASSK_TEST_DATABASE_URL's, else a private embedded cluster, stopped after."""
    if url := Settings().test_database_url:
        yield url
        return
    root = Path(tempfile.mkdtemp(prefix=f"{prefix}-pg-"))
    server = EmbeddedPostgres(root)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class LocalStack:
    """API + workers as subprocesses. Use as a context manager; everything stops on exit."""

    prefix: str = "passk"
    extra_env: dict[str, str] = field(default_factory=dict)
    # Always start a private cluster, even when PASSK_TEST_DATABASE_URL names a shared server:
    # needed by anything that restarts Postgres (restart_postgres), which must not hit others' databases.
    private_postgres: bool = False
    # Where the API's and workers' output goes (default: inherited); a file keeps a benchmark's report readable.
    log_path: Path | None = None
    api_url: str = ""
    database_url: str = ""
    image: str = ""
    api_key: str = ""
    env: dict[str, str] = field(default_factory=dict)
    workers: list[subprocess.Popen] = field(default_factory=list)
    _cluster: EmbeddedPostgres | None = None
    _api: subprocess.Popen | None = None
    _api_port: int = 0

    def __enter__(self) -> LocalStack:
        try:
            return self._enter()
        except BaseException:
            self.__exit__()
            raise

    def _enter(self) -> LocalStack:
        server_url = None if self.private_postgres else Settings().test_database_url
        if not server_url:
            self._cluster = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix=f"{self.prefix}-pg-")))
            server_url = self._cluster.start()
        self.database_url = create_database(server_url, self.prefix)
        engine = make_sync_engine(self.database_url)
        with transaction(make_sync_sessionmaker(engine)) as session:
            _, self.api_key = create_key(session, "localstack", SCOPES)
        engine.dispose()
        self.image = ensure_sandbox_image(ensure_engine(REPO_ROOT / ".passk"), Settings().sandbox_base_image)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PASSK_")},
            "PASSK_ENV": "test",
            "PASSK_DATABASE_URL": self.database_url,
            "PASSK_SANDBOX_IMAGE": self.image,
            **self.extra_env,
        }
        self._start_api()
        return self

    def __exit__(self, *_exc: object) -> None:
        try:
            self.stop_workers()
            self.stop_api()
        finally:
            if self._cluster is not None:
                try:
                    self._cluster.stop()
                finally:
                    # The cluster's data directory is ours alone: leave no temporary files behind.
                    shutil.rmtree(self._cluster.root, ignore_errors=True)
                    self._cluster = None

    # -- the API

    @property
    def api_pid(self) -> int | None:
        return self._api.pid if self._api is not None else None

    @property
    def postgres_pid(self) -> int | None:
        """The private cluster's postmaster (its backends are its children), or None on a shared server."""
        if self._cluster is None:
            return None
        try:
            return int((self._cluster.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop_api(self, timeout_s: float = 30) -> int | None:
        """SIGTERM the API and wait for it (`timeout_s`, then SIGKILL); its exit status (-9: it had to be killed)."""
        if self._api is None:
            return None
        status = end_process(self._api, timeout_s=timeout_s)
        self._api = None
        return status

    def restart_api(self) -> None:
        """Stop the API process and start a new one on the same port, so existing clients keep working."""
        self.stop_api()
        self._start_api()

    def _start_api(self) -> None:
        # The port is chosen once: a restarted API answers at the same address.
        port = self._api_port = self._api_port or _free_port()
        self._api = self._popen(["serve", "--port", str(port)], self.env)
        self.api_url = f"http://127.0.0.1:{port}"
        def healthy() -> bool:
            try:
                return httpx.get(f"{self.api_url}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        api = self._api
        retrying = Retrying(
            retry=retry_if_result(lambda up: not up),
            stop=stop_after_delay(60) | (lambda _: api.poll() is not None),
            wait=wait_fixed(0.2),
        )
        try:
            retrying(healthy)
        except RetryError:
            api.kill()
            raise RuntimeError("the API did not come up") from None

    # -- the database

    def restart_postgres(self, down_s: float = 1.0) -> None:
        """Stop the cluster (fast shutdown: sessions are cut, open transactions roll back), wait, start it again.

        Only for a private cluster (private_postgres=True or no PASSK_TEST_DATABASE_URL): the same
        port and password come back, so API and workers can reconnect to the same URL.
        """
        if self._cluster is None:
            raise RuntimeError("restart_postgres needs the stack's own cluster: use LocalStack(private_postgres=True)")
        self._cluster.stop()
        time.sleep(down_s)
        self._cluster.start()

    def _popen(self, args: list[str], env: dict[str, str]) -> subprocess.Popen:
        command = [sys.executable, "-m", "service.cli", *args]
        if self.log_path is None:
            return subprocess.Popen(command, env=env, cwd=REPO_ROOT)
        with open(self.log_path, "ab") as log:  # the child keeps its own descriptor
            return subprocess.Popen(command, env=env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)

    def client(self, timeout: float = 120, api_key: str | None = None) -> httpx.Client:
        """An HTTP client for the API, authenticated with `api_key` (default: the stack's key, read and submit in
        the default project)."""
        headers = {"Authorization": f"Bearer {api_key or self.api_key}"}
        return httpx.Client(base_url=self.api_url, timeout=timeout, headers=headers)

    def project_key(self, project: str, scopes: tuple[str, ...] = SCOPES, name: str = "localstack") -> str:
        """A new key of `project` (made if it does not exist yet), as an operator makes one."""
        engine = make_sync_engine(self.database_url)
        try:
            with transaction(make_sync_sessionmaker(engine)) as session:
                create_project(session, project)
                _, raw = create_key(session, name, scopes, project)
        finally:
            engine.dispose()
        return raw

    def passk_client(self) -> PasskClient:
        """The project's own Python client, pointed at this stack."""
        return PasskClient(self.api_url, self.api_key)

    def start_worker(self, concurrency: int = 2, **extra_env: str) -> subprocess.Popen:
        proc = self._popen(["worker", "--concurrency", str(concurrency)], {**self.env, **extra_env})
        self.workers.append(proc)
        return proc

    def stop_workers(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.workers:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.workers.clear()


def end_process(proc: subprocess.Popen, timeout_s: float, sig: int = signal.SIGTERM) -> int:
    """Send `sig` (SIGTERM: a clean shutdown) and wait up to timeout_s for the process to end; then SIGKILL it.
    Returns its exit status (negative: the signal that ended it)."""
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def wait_for_run(client: httpx.Client, run_id: str, timeout_s: float = 600, poll_s: float = 0.5) -> dict:
    """PasskClient.wait for tests and benchmarks that hold a plain httpx client of the stack."""
    return PasskClient.over(client).wait(run_id, poll_s=poll_s, timeout_s=timeout_s)
