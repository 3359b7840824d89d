"""Whether the worker's Docker engine answers: no thread claims work while it does not.

One watch per worker process. The maintenance loop probes the engine every tick with a short timeout (a hung
engine counts as down); a claiming thread whose sandbox failed asks too. While the engine is down the heartbeat
says so (GET /v1/status, passk_engine_up) and the threads wait in `wait`, which sweeps the containers that died
with the engine once it answers again.
"""

from __future__ import annotations

import logging
import threading

import docker

from sandbox.container import MAX_CONTAINER_AGE_S, sweep
from sandbox.engine import connect
from sandbox.executor import Sandbox

log = logging.getLogger(__name__)

RETRY_MAX_S = 5.0
# The maintenance loop's ping gives up after this long.
PROBE_TIMEOUT_S = 5.0


class EngineWatch:
    def __init__(self, stopping: threading.Event) -> None:
        self._stopping = stopping
        self._up = threading.Event()
        self._up.set()
        self._probe: docker.DockerClient | None = None

    def start(self) -> None:
        self._probe = connect(timeout=PROBE_TIMEOUT_S)

    @property
    def up(self) -> bool:
        return self._up.is_set()

    @staticmethod
    def answers(sandbox: Sandbox) -> bool:
        try:
            sandbox.client.ping()
            return True
        except Exception:
            return False

    def probe(self) -> None:
        """Stop claiming as soon as the engine stops answering, before a sandbox has to fail on it."""
        if self._probe is None or not self.up:
            return  # a claiming thread is already waiting for it
        try:
            self._probe.ping()
        except Exception as exc:
            log.error("the Docker engine does not answer (%s): claiming nothing until it does", exc)
            self._up.clear()

    def mark_down(self) -> None:
        """No thread claims from now until a `wait` sees the engine answer."""
        self._up.clear()

    def wait(self, sandbox: Sandbox) -> None:
        """Mark the engine down and block until it answers a ping (or the worker stops), then sweep what it left
        behind and mark it up."""
        self.mark_down()
        delay = 0.5
        log.error("claiming nothing until the Docker engine answers")
        while not self.answers(sandbox):
            if self._stopping.wait(delay):
                return
            delay = min(delay * 2, RETRY_MAX_S)
        try:
            # Containers that died with the engine could not be removed then; they go now.
            removed = sweep(sandbox.client, max_age_s=MAX_CONTAINER_AGE_S)
            log.warning("the Docker engine answers; removed %d dead sandbox containers", removed)
        except Exception:
            log.exception("sweep after the engine came back failed")
        self._up.set()
