"""What PID 1 needs to watch a program: its captured output, the container's CPU clock, a vanished host.

Shared by the Python path (supervisor.py) and the compiled languages' path (native.py).
"""

from __future__ import annotations

import os
import select

from . import process

READ_CHUNK = 65536
TAIL_BYTES = 512


class HostGone(Exception):
    """stdin closed while a job ran: the worker died, so nobody will read our results."""


class Capture:
    """The first `limit` bytes of a stream and its last TAIL_BYTES, and how much there was."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.tail = b""
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.tail = (self.tail + chunk)[-TAIL_BYTES:]

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    @property
    def truncated(self) -> bool:
        return self.total > self.limit


def drain(fd: int, capture: Capture) -> None:
    """Read what is left in a non-blocking pipe into `capture`."""
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            return
        capture.add(chunk)


def read_ready(fd: int, captures: dict, poller: "select.poll", open_fds: set) -> None:
    """Read what a ready output pipe holds into its capture; at its end, stop watching it."""
    chunk = os.read(fd, READ_CHUNK)
    if chunk:
        captures[fd].add(chunk)
    else:
        poller.unregister(fd)
        open_fds.discard(fd)


def tree_cpu(before: float | None) -> float | None:
    """CPU seconds the container's cgroup used since `before` (None where the cgroup cannot be read)."""
    if before is None:
        return None
    now = process.cgroup_cpu_s()
    return None if now is None else now - before
