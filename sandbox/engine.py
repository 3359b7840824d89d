"""Finding, and on a bare root machine installing and starting, the Docker engine."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

import docker
from docker.errors import DockerException
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

log = logging.getLogger(__name__)


class EngineUnavailable(RuntimeError):
    pass


def connect(timeout: float = 120.0) -> docker.DockerClient:
    """A client for a live engine (DOCKER_HOST or the local socket); raises if none answers."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except DockerException as exc:
        raise EngineUnavailable(f"no Docker engine answers: {exc}") from exc


def ensure_engine(log_dir: Path, wait_s: float = 60.0) -> docker.DockerClient:
    """Return a client, installing docker.io and starting dockerd first when we are root and it is missing."""
    try:
        return connect()
    except EngineUnavailable as first:
        if os.environ.get("DOCKER_HOST") or os.geteuid() != 0:
            raise EngineUnavailable(
                f"{first}; start the Docker engine (or run as root so passk can start it)"
            ) from first
    if shutil.which("dockerd") is None:
        log.warning("dockerd not found: installing Debian's docker.io")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "docker.io"], check=True, env=env)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "dockerd.log"
    log.warning("starting dockerd (log: %s)", log_path)
    with open(log_path, "ab") as out:
        subprocess.Popen(["dockerd"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    retrying = Retrying(
        retry=retry_if_exception_type(EngineUnavailable), stop=stop_after_delay(wait_s), wait=wait_fixed(0.5)
    )
    try:
        return retrying(connect)
    except RetryError:
        tail = log_path.read_text(errors="replace")[-2000:]
        raise EngineUnavailable(f"dockerd did not come up within {wait_s:.0f} s; log tail:\n{tail}") from None
