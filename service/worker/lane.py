"""The re-runs a worker owes, taken round-robin by run.

Wall-clock timeouts are re-run in the worker's own re-run lane (one thread, one sandbox), never by the
thread that claimed them: that thread records the rest of its batch and claims again at once. The lane
takes one re-run from each run in turn, so one run's many sleeping programs delay its own re-runs, not
another run's.
"""

from __future__ import annotations

import threading
import uuid
from collections import deque

from service.worker.batch import Rerun


class RerunQueue:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._by_run: dict[uuid.UUID, deque[Rerun]] = {}
        self._turns: deque[uuid.UUID] = deque()  # runs with re-runs waiting, in the order they are served

    def put(self, rerun: Rerun) -> None:
        with self._condition:
            waiting = self._by_run.get(rerun.run_id)
            if waiting is None:
                waiting = self._by_run[rerun.run_id] = deque()
                self._turns.append(rerun.run_id)
            waiting.append(rerun)
            self._condition.notify()

    def get(self, timeout_s: float) -> Rerun | None:
        """The next re-run (the next run's turn), or None after `timeout_s` with nothing waiting."""
        with self._condition:
            if not self._condition.wait_for(lambda: self._turns, timeout_s):
                return None
            run_id = self._turns.popleft()
            waiting = self._by_run[run_id]
            rerun = waiting.popleft()
            if waiting:
                self._turns.append(run_id)
            else:
                del self._by_run[run_id]
            return rerun

    def drain(self) -> list[Rerun]:
        """Everything still waiting (the worker is stopping)."""
        with self._condition:
            left = [rerun for waiting in self._by_run.values() for rerun in waiting]
            self._by_run.clear()
            self._turns.clear()
            return left

    def __len__(self) -> int:
        with self._condition:
            return sum(len(waiting) for waiting in self._by_run.values())
