"""A whole passk on one machine, as separate processes: used by end-to-end tests and benchmarks.

It starts what a deployment runs (the API over real HTTP, worker processes with
Docker sandboxes) against a fresh database built by the migrations.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
from sqlalchemy.engine import make_url

from sandbox.engine import ensure_engine
from sandbox.images import ensure_sandbox_image
from service.auth.keys import SCOPES
from service.auth.repository import create_key
from service.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.embedded_postgres import EmbeddedPostgres, _free_port
from service.migrate import REPO_ROOT, upgrade_to_head


def create_database(server_url: str, prefix: str) -> str:
    """A new, migrated database on the server behind `server_url`; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = make_url(server_url).set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    upgrade_to_head(url)
    return url


@dataclass
class LocalStack:
    """API + workers as subprocesses. Use as a context manager; everything stops on exit."""

    prefix: str = "passk"
    extra_env: dict[str, str] = field(default_factory=dict)
    api_url: str = ""
    database_url: str = ""
    image: str = ""
    api_key: str = ""
    env: dict[str, str] = field(default_factory=dict)
    workers: list[subprocess.Popen] = field(default_factory=list)
    _cluster: EmbeddedPostgres | None = None
    _api: subprocess.Popen | None = None

    def __enter__(self) -> LocalStack:
        server_url = os.environ.get("PASSK_TEST_DATABASE_URL")
        if not server_url:
            self._cluster = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix=f"{self.prefix}-pg-")))
            server_url = self._cluster.start()
        self.database_url = create_database(server_url, self.prefix)
        engine = make_sync_engine(self.database_url)
        with transaction(make_sync_sessionmaker(engine)) as session:
            _, self.api_key = create_key(session, "localstack", SCOPES)
        engine.dispose()
        self.image = ensure_sandbox_image(ensure_engine(REPO_ROOT / ".passk"))
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
        self.stop_workers()
        if self._api is not None:
            self._api.terminate()
            self._api.wait(timeout=30)
        if self._cluster is not None:
            self._cluster.stop()

    def _start_api(self) -> None:
        port = _free_port()
        self._api = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port)], env=self.env, cwd=REPO_ROOT,
        )
        self.api_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.api_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self._api.poll() is not None or time.monotonic() > deadline:
                self._api.kill()
                raise RuntimeError("the API did not come up")
            time.sleep(0.2)

    def client(self, timeout: float = 120) -> httpx.Client:
        """An HTTP client for the API, authenticated with a key that has every scope."""
        return httpx.Client(base_url=self.api_url, timeout=timeout, headers={"Authorization": f"Bearer {self.api_key}"})

    def start_worker(self, concurrency: int = 2, **extra_env: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker", "--concurrency", str(concurrency)],
            env={**self.env, **extra_env}, cwd=REPO_ROOT,
        )
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


def wait_for_run(client: httpx.Client, run_id: str, timeout_s: float = 600, poll_s: float = 0.5) -> dict:
    """Poll GET /v1/runs/{id} until the run ends; returns the final run."""
    deadline = time.monotonic() + timeout_s
    while True:
        run = client.get(f"/v1/runs/{run_id}").raise_for_status().json()
        if run["status"] in {"completed", "failed", "cancelled"}:
            return run
        if time.monotonic() > deadline:
            raise TimeoutError(f"run {run_id} did not finish: {run}")
        time.sleep(poll_s)
