"""A readers-writer gate: batches share the machine; a re-run waits to have this worker's sandboxes to itself."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ExclusiveGate:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._sharers = 0
        self._exclusive = False
        self._waiting_exclusive = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._condition:
            # Writer preference: a waiting re-run is not starved by a stream of new batches.
            while self._exclusive or self._waiting_exclusive:
                self._condition.wait()
            self._sharers += 1
        try:
            yield
        finally:
            with self._condition:
                self._sharers -= 1
                self._condition.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._condition:
            self._waiting_exclusive += 1
            while self._exclusive or self._sharers:
                self._condition.wait()
            self._waiting_exclusive -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._condition:
                self._exclusive = False
                self._condition.notify_all()
