"""Wake idle worker threads when work arrives: LISTEN passk_samples, with a slow poll as the fallback.

The API's `NOTIFY passk_samples` is delivered at the run's commit, so a woken thread always finds the
samples. A notification that arrives while a thread is between an empty claim and its wait is not lost:
threads wait for the counter to move past the value they read *before* claiming.
"""

from __future__ import annotations

import logging
import threading
import time

import psycopg
from sqlalchemy.engine import URL

from service.core.channels import Channel

log = logging.getLogger(__name__)

RECONNECT_S = 2.0


class Wakeup:
    """Idle threads waiting for work. A notification lets one idle thread look (a ticket), not every one: a
    one-sample run would otherwise send each idle thread to claim it, and all but one claim would come back
    empty. A thread whose claim took samples of a run of several notifies again, so such a run draws the idle
    threads in turn.
    Every waiting thread wakes to see a ticket; a general thread takes it before an interactive-only one (which
    could not claim a batch run's samples). Tickets left while every thread was busy are capped at the number of
    threads. `notify_all` (the listener's reconnect, a stop) lets every thread look."""

    def __init__(self, threads: int = 1) -> None:
        self._cond = threading.Condition()
        self._count = 0
        self._tickets = 0
        self._most = max(1, threads)
        self._waiting_general = 0

    def mark(self) -> int:
        with self._cond:
            return self._count

    def notify(self) -> None:
        """One more idle thread should look."""
        self._give(1)

    def notify_all(self) -> None:
        """Every idle thread should look."""
        self._give(self._most)

    def _give(self, tickets: int) -> None:
        with self._cond:
            self._count += 1
            self._tickets = min(self._most, self._tickets + tickets)
            self._cond.notify_all()

    def wait(self, since: int, timeout: float, interactive_only: bool = False) -> bool:
        """Until a notification newer than `since` gives this thread a ticket (True), or the timeout (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            if not interactive_only:
                self._waiting_general += 1
            try:
                while True:
                    mine = self._tickets > 0 and (not interactive_only or self._waiting_general == 0)
                    if mine and self._count != since:
                        self._tickets -= 1
                        return True
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                if not interactive_only:
                    self._waiting_general -= 1


def listen(url: URL, wakeup: Wakeup, stopping: threading.Event) -> None:
    """The listener thread: one autocommit connection that only LISTENs; reconnects when it drops."""
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    while not stopping.is_set():
        try:
            with psycopg.connect(dsn, autocommit=True) as connection:
                connection.execute(Channel.SAMPLES.listen())
                wakeup.notify_all()  # anything queued while we were not listening
                while not stopping.is_set():
                    for _ in connection.notifies(timeout=1.0, stop_after=1):
                        wakeup.notify()
        except psycopg.Error as exc:
            log.warning("LISTEN %s failed (%s); polling until it is back", Channel.SAMPLES.value, exc)
            stopping.wait(RECONNECT_S)
