"""Whether the worker's Docker engine answers: no thread claims work while it does not.

One watch per worker process, with a thread of its own (`watch`): it pings the engine every PROBE_EVERY_S with a
short timeout (a hung engine counts as down), sweeps dead sandbox containers every SWEEP_EVERY_S, and after an
outage sweeps what died with the engine before it lets the claiming threads go on. No other thread waits on the
engine for it: the maintenance thread, which renews the leases of the samples being run, never calls Docker, so a
slow or hung engine cannot make a lease lapse and a sample run twice.

A claiming thread whose sandbox failed asks `answers()` (the same short ping) and, if the engine is down, calls
`wait`. While the engine is down the heartbeat says so (GET /v1/status, passk_engine_up).
"""

from __future__ import annotations

import logging
import threading
import time

from sandbox.container import MAX_CONTAINER_AGE_S, sweep
from sandbox.engine import connect

log = logging.getLogger(__name__)

# A ping gives up after this long: an engine slower than this is down.
PROBE_TIMEOUT_S = 5.0
PROBE_EVERY_S = 1.0
# Dead sandbox containers (of crashed workers, or of an engine that went down) are removed this often.
SWEEP_EVERY_S = 60.0


class EngineWatch:
    def __init__(self, stopping: threading.Event, base_url: str | None = None) -> None:
        self._stopping = stopping
        self._base_url = base_url
        self._up = threading.Event()
        self._up.set()
        self._clients = threading.local()  # a probe client per thread: a Docker client is not shared across threads

    @property
    def up(self) -> bool:
        return self._up.is_set()

    def answers(self) -> bool:
        """One ping of at most PROBE_TIMEOUT_S."""
        client = getattr(self._clients, "probe", None)
        try:
            if client is None:  # made once the engine answers (connect asks it its API version, within the timeout)
                client = self._clients.probe = connect(timeout=PROBE_TIMEOUT_S, base_url=self._base_url)
            return bool(client.ping())
        except Exception:
            return False

    def mark_down(self) -> None:
        """No thread claims from now until the watch sees the engine answer."""
        self._up.clear()

    def wait(self) -> None:
        """Mark the engine down and block until the watch has seen it answer and swept (or the worker stops)."""
        self.mark_down()
        log.error("claiming nothing until the Docker engine answers")
        while not self._up.wait(0.5):
            if self._stopping.is_set():
                return

    def watch(self) -> None:
        """The watch's thread: until the worker stops."""
        next_sweep = time.monotonic() + SWEEP_EVERY_S
        while not self._stopping.wait(PROBE_EVERY_S):
            answers = self.answers()
            if not answers:
                if self.up:
                    log.error("the Docker engine does not answer: claiming nothing until it does")
                self.mark_down()
                continue
            if not self.up:
                # Containers that died with the engine could not be removed then; they go before claims resume.
                log.warning("the Docker engine answers; removed %d dead sandbox containers", self._sweep())
                self._up.set()
            elif time.monotonic() >= next_sweep:
                self._sweep()
                next_sweep = time.monotonic() + SWEEP_EVERY_S

    def _sweep(self) -> int:
        try:
            return sweep(connect(base_url=self._base_url), max_age_s=MAX_CONTAINER_AGE_S)
        except Exception:
            log.exception("the sweep of dead sandbox containers failed; the next one tries again")
            return 0
