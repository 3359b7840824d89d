"""A real Docker engine and the real sandbox image; never skipped: no engine is a failure."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from sandbox.engine import ensure_engine
from sandbox.executor import Job, Outcome, Sandbox, SandboxSettings
from sandbox.images import ensure_sandbox_image

MIB = 1024 * 1024


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    return ensure_engine(Path(".passk").resolve())


@pytest.fixture(scope="session")
def sandbox_image(docker_client: docker.DockerClient) -> str:
    return ensure_sandbox_image(docker_client)


@pytest.fixture
def sandbox(docker_client: docker.DockerClient, sandbox_image: str) -> Iterator[Sandbox]:
    box = Sandbox(docker_client, SandboxSettings(image=sandbox_image, owner="passk-tests", excerpt_bytes=4096))
    yield box
    box.close()


def run_one(box: Sandbox, program: str, time_limit_s: float = 3.0, memory_mb: int = 256) -> Outcome:
    return box.run([Job("job", program, time_limit_s, memory_mb * MIB)])[0]


def run_many(box: Sandbox, programs: list[str], time_limit_s: float = 3.0, memory_mb: int = 256) -> list[Outcome]:
    return box.run([Job(str(i), p, time_limit_s, memory_mb * MIB) for i, p in enumerate(programs)])
