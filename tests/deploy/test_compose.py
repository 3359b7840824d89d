"""`docker compose up` for real: Postgres, migrations, the API and three workers from
docker-compose.yml, one run submitted through the composed stack.

With no registry here, the images come from the local Debian base through
tests/deploy/compose.offline.yml; everything else is the file users run.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from math import comb
from pathlib import Path

import docker
import pytest

from sandbox.container import LABEL_OWNER, LABEL_ROLE, ROLE_SANDBOX
from sandbox.images import ensure_local_base
from service.client import PasskClient, PasskError
from service.formats.humaneval import package_problems
from tests.e2e.conftest import wait_until

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
PROJECT = "passkci"
WORKERS = 3
_PROJECT_LABEL = f"com.docker.compose.project={PROJECT}"


def _compose_command() -> list[str]:
    """Compose v2 (`docker compose`) where installed, else Debian's docker-compose 1.29."""
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail("neither `docker compose` nor `docker-compose` is installed (./dev test installs docker-compose)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Compose:
    def __init__(self, env: dict[str, str]) -> None:
        self.base = [
            *_compose_command(), "-p", PROJECT,
            "-f", str(REPO / "docker-compose.yml"), "-f", str(REPO / "tests/deploy/compose.offline.yml"),
        ]
        self.env = {**os.environ, **env}

    def __call__(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [*self.base, *args], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            raise AssertionError(f"compose {' '.join(args)} failed ({done.returncode}):\n{output}")
        return done.stdout

    def save_logs(self) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        done = subprocess.run([*self.base, "logs", "--no-color"], cwd=REPO, env=self.env, capture_output=True, text=True)
        (ARTIFACTS / "compose.log").write_text(done.stdout + done.stderr)


@pytest.fixture(scope="module")
def secrets_env() -> dict[str, str]:
    return {"PASSK_DB_PASSWORD": secrets.token_hex(16), "PASSK_SECRET_KEY": secrets.token_hex(32)}


@pytest.fixture(scope="module")
def compose(docker_client: docker.DockerClient, secrets_env: dict[str, str]) -> Iterator[tuple[Compose, str]]:
    # The offline Dockerfile path: every Python dependency as a wheel made on the host.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(REPO / "wheelhouse"), ".[humaneval,docs]", "setuptools", "wheel"],
        cwd=REPO, check=True, capture_output=True, timeout=900,
    )
    port = _free_port()
    base = ensure_local_base(docker_client)
    stack = Compose({**secrets_env, "PASSK_BASE_IMAGE": base, "PASSK_API_PUBLISH": f"127.0.0.1:{port}"})
    stack("down", "-v", "--remove-orphans")  # a previous run killed before its teardown
    stack("build", timeout=1800)
    try:
        stack("up", "-d", "--scale", f"worker={WORKERS}", timeout=600)
        yield stack, f"http://127.0.0.1:{port}"
    finally:
        stack.save_logs()
        # A worker container's hostname is its short id, which starts its sandboxes' owner label.
        workers = {c.id[:12] for c in docker_client.containers.list(all=True, filters={"label": _PROJECT_LABEL})}
        stack("down", "-v", "--remove-orphans", "--timeout", "30")
    leftovers = [
        c.name for c in docker_client.containers.list(all=True, filters={"label": f"{LABEL_ROLE}={ROLE_SANDBOX}"})
        if c.labels.get(LABEL_OWNER, "").split(".", 1)[0] in workers
    ]
    assert not leftovers, f"sandbox containers left behind by the composed workers: {leftovers}"
    assert not docker_client.containers.list(all=True, filters={"label": _PROJECT_LABEL})


def _wait_for(what: str, probe, timeout_s: float = 180):  # noqa: ANN001, ANN202
    def answered():  # noqa: ANN202
        try:
            return probe()
        except PasskError:
            return None

    return wait_until(answered, timeout_s, f"the composed stack to get to: {what}", poll_s=1.0)


def _processed_if_all(client: PasskClient, total: int) -> dict[str, int] | None:
    """Samples recorded per live worker (from /metrics), once they add up to `total`."""
    counts: dict[str, int] = {}
    for line in client.prometheus().splitlines():
        if line.startswith("passk_worker_processed_total{"):
            labels, _, value = line.rpartition(" ")
            counts[labels] = int(float(value))
    return counts if sum(counts.values()) >= total else None


@pytest.mark.slow
def test_compose_stack_evaluates_a_run_with_three_workers(compose: tuple[Compose, str]) -> None:
    stack, url = compose
    anonymous = PasskClient(url, api_key=None, timeout=30)
    _wait_for("GET /healthz answering", lambda: anonymous.health())

    # Operators make keys inside the api container, against the composed database.
    key = stack("exec", "-T", "api", "passk", "keys", "create", "--name", "compose-ci").strip().splitlines()[-1]
    assert key.startswith("pk_")
    client = PasskClient(url, api_key=key, timeout=60)
    _wait_for(f"{WORKERS} live workers", lambda: client.status()["workers"]["live"] == WORKERS)

    problems = package_problems()[:12]  # rows as published: the API takes `task_id` as the id
    dataset, _ = client.create_dataset("humaneval-compose", problems)
    samples = []
    for problem in problems:
        samples += [{"problem_id": problem["task_id"], "completion": problem["canonical_solution"]}] * 2
        samples.append({"problem_id": problem["task_id"], "completion": "    return None\n"})
        samples.append({"problem_id": problem["task_id"], "completion": "    raise ValueError('no')\n"})
    # No cache: every program runs, so the three workers share real work.
    run = client.create_run(dataset["id"], "canonical-and-broken", {"temperature": 0.0}, samples, cache=False)
    run = client.wait(run["id"], timeout_s=600)

    assert run["status"] == "completed", run
    verdicts = [sample["verdict"] for sample in client.iter_samples(run["id"])]
    # `return None` fails an assert or raises inside one (an error), depending on the problem.
    assert verdicts.count("passed") == 24 and verdicts.count("error") >= 12
    assert verdicts.count("failed") + verdicts.count("error") == 24
    metrics = client.metrics(run["id"], ks=(1, 2))
    by_k = {entry["k"]: entry["pass_at_k"]["estimate"] for entry in metrics["metrics"]}
    assert by_k[1] == pytest.approx(0.5, abs=1e-12)
    assert by_k[2] == pytest.approx(1 - comb(2, 2) / comb(4, 2), abs=1e-12)

    # Every worker reports what it recorded; the queue was shared, not drained by one.
    processed = _wait_for("all samples counted by the workers' heartbeats", lambda: _processed_if_all(client, 48))
    assert len(processed) == WORKERS and sum(processed.values()) == 48
    assert sum(1 for count in processed.values() if count > 0) >= 2, processed
    assert client.status()["sandbox_errors"]["total"] == 0


def test_compose_images_carry_no_secrets(compose: tuple[Compose, str], secrets_env: dict[str, str]) -> None:
    history = subprocess.run(
        ["docker", "history", "--no-trunc", "passk-service:latest"], capture_output=True, text=True, check=True
    ).stdout
    config = subprocess.run(
        ["docker", "image", "inspect", "passk-service:latest"], capture_output=True, text=True, check=True
    ).stdout
    for value in secrets_env.values():
        assert value not in history and value not in config
    assert "PASSK_DB_PASSWORD" not in config and "PASSK_SECRET_KEY" not in config
