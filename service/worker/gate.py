"""A gate between a worker's sandboxes: frames share the machine; a re-run may close it to new frames, briefly.

A wall-clock timeout is re-run before it is final, in case the machine's load caused it. The re-run closes
the gate so that no new frame starts beside it, but only for a bounded window: its program's CPU budget plus
a second (a program that needs the CPU has spent its limit by then; one that is still running is mostly
sleeping or blocked), and never for more than `share` of any `WINDOW_S` of wall time in all. So a stream of
programs that sleep through their limit (one user's) can slow the others' samples by at most that share,
never hold them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

WINDOW_S = 60.0


class ExclusiveGate:
    def __init__(self, share: float, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.share = share
        self.window_s = window_s
        self._clock = clock
        self._condition = threading.Condition()
        self._sharers = 0
        self._closed_until = 0.0  # no new frame starts before this instant
        self._windows: deque[list[float]] = deque()  # [start, end] of the windows granted lately
        self._one_at_a_time = threading.Lock()

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._condition:
            while (now := self._clock()) < self._closed_until:
                self._condition.wait(self._closed_until - now)
            self._sharers += 1
        try:
            yield
        finally:
            with self._condition:
                self._sharers -= 1
                self._condition.notify_all()

    @contextmanager
    def exclusive(self, want_s: float) -> Iterator[float]:
        """Close the gate for at most `want_s` seconds (less when the share is spent); yields the seconds granted.

        The window counts from now: frames already running finish within it (none is cut short), then the
        caller has the sandboxes to itself for what is left. When the window ends the gate opens again, even
        if the caller's program is still running.
        """
        with self._one_at_a_time:
            with self._condition:
                now = self._clock()
                granted = max(0.0, min(want_s, self.budget(now)))
                window = [now, now + granted]
                if granted > 0:
                    self._windows.append(window)
                    self._closed_until = window[1]
                    while self._sharers and (now := self._clock()) < self._closed_until:
                        self._condition.wait(self._closed_until - now)
            try:
                yield granted
            finally:
                with self._condition:
                    window[1] = min(window[1], self._clock())  # an early end gives the rest back
                    self._closed_until = 0.0
                    self._condition.notify_all()

    def budget(self, now: float) -> float:
        """Seconds the gate may still be closed for within the window that ends now."""
        start = now - self.window_s
        while self._windows and self._windows[0][1] <= start:
            self._windows.popleft()
        used = sum(min(end, now) - max(begin, start) for begin, end in self._windows if end > start)
        return max(0.0, self.share * self.window_s - used)
