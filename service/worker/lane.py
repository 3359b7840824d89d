"""The re-runs a worker owes, taken in turns: by API key, then by run within a key.

Wall-clock timeouts are re-run in the worker's own re-run lane (one thread, one sandbox), never by the
thread that claimed them: that thread records the rest of its batch and claims again at once. The lane
serves one re-run of each key in turn, and within a key one of each of its runs in turn, so one key's many
sleeping (or blocked) programs delay its own re-runs, never another key's more than one turn at a time.
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
        self._runs_of: dict[uuid.UUID | None, deque[uuid.UUID]] = {}  # key -> its runs with re-runs, in turn
        self._keys: deque[uuid.UUID | None] = deque()  # keys with re-runs waiting, in the order they are served

    def put(self, rerun: Rerun) -> None:
        with self._condition:
            waiting = self._by_run.get(rerun.run_id)
            if waiting is None:
                waiting = self._by_run[rerun.run_id] = deque()
                runs = self._runs_of.get(rerun.api_key_id)
                if runs is None:
                    runs = self._runs_of[rerun.api_key_id] = deque()
                    self._keys.append(rerun.api_key_id)
                runs.append(rerun.run_id)
            waiting.append(rerun)
            self._condition.notify()

    def get(self, timeout_s: float) -> Rerun | None:
        """The next re-run (the next key's turn, and that key's next run), or None after `timeout_s`."""
        with self._condition:
            if not self._condition.wait_for(lambda: self._keys, timeout_s):
                return None
            key = self._keys.popleft()
            runs = self._runs_of[key]
            run_id = runs.popleft()
            waiting = self._by_run[run_id]
            rerun = waiting.popleft()
            if waiting:
                runs.append(run_id)
            else:
                del self._by_run[run_id]
            if runs:
                self._keys.append(key)
            else:
                del self._runs_of[key]
            return rerun

    def drain(self) -> list[Rerun]:
        """Everything still waiting (the worker is stopping)."""
        with self._condition:
            left = [rerun for waiting in self._by_run.values() for rerun in waiting]
            self._by_run.clear()
            self._runs_of.clear()
            self._keys.clear()
            return left

    def __len__(self) -> int:
        with self._condition:
            return sum(len(waiting) for waiting in self._by_run.values())
