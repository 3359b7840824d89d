"""The whole service for real: Postgres, the API over HTTP and worker processes with Docker sandboxes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from sandbox.engine import ensure_engine
from sandbox.images import ensure_sandbox_image
from service.embedded_postgres import EmbeddedPostgres, _free_port
from service.migrate import upgrade_to_head

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Stack:
    api_url: str
    database_url: str
    image: str
    env: dict[str, str]
    workers: list[subprocess.Popen] = field(default_factory=list)

    def start_worker(self, concurrency: int = 2, **extra_env: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker", "--concurrency", str(concurrency)],
            env={**self.env, **extra_env}, cwd=REPO,
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


@pytest.fixture(scope="session")
def e2e_database_url() -> Iterator[str]:
    server_url = os.environ.get("PASSK_TEST_DATABASE_URL")
    cluster = None
    if not server_url:
        cluster = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="passk-e2e-pg-")))
        server_url = cluster.start()
    name = f"passk_e2e_{uuid.uuid4().hex[:8]}"
    admin = make_url(server_url).set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    upgrade_to_head(url)
    yield url
    if cluster is not None:
        cluster.stop()


@pytest.fixture(scope="session")
def stack(e2e_database_url: str) -> Iterator[Stack]:
    image = ensure_sandbox_image(ensure_engine(REPO / ".passk"))
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PASSK_")},
        "PASSK_ENV": "test",
        "PASSK_DATABASE_URL": e2e_database_url,
        "PASSK_SANDBOX_IMAGE": image,
        "PASSK_LEASE_SECONDS": "6",
    }
    api = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)], env=env, cwd=REPO)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if api.poll() is not None or time.monotonic() > deadline:
            api.kill()
            raise RuntimeError("the API did not come up")
        time.sleep(0.2)
    stack = Stack(api_url=base, database_url=e2e_database_url, image=image, env=env)
    try:
        yield stack
    finally:
        stack.stop_workers()
        api.terminate()
        api.wait(timeout=30)


def wait_for_run(client: httpx.Client, run_id: str, timeout_s: float = 600) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        run = client.get(f"/v1/runs/{run_id}").raise_for_status().json()
        if run["status"] in {"completed", "failed", "cancelled"}:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} did not finish: {run}")
        time.sleep(0.5)
