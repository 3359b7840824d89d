"""Wake idle worker threads when work arrives: LISTEN passk_samples, with a slow poll as the fallback.

The API's `NOTIFY passk_samples` is delivered at the run's commit, so a woken thread always finds the
samples. A notification that arrives while a thread is between an empty claim and its wait is not lost:
threads wait for the counter to move past the value they read *before* claiming.
"""

from __future__ import annotations

import logging
import threading

import psycopg
from sqlalchemy.engine import URL

from service.core.channels import Channel

log = logging.getLogger(__name__)

RECONNECT_S = 2.0


class Wakeup:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._count = 0

    def mark(self) -> int:
        with self._cond:
            return self._count

    def notify(self) -> None:
        with self._cond:
            self._count += 1
            self._cond.notify_all()

    def wait(self, since: int, timeout: float) -> bool:
        """Until a notification newer than `since` (True) or the timeout (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._count != since, timeout)


def listen(url: URL, wakeup: Wakeup, stopping: threading.Event) -> None:
    """The listener thread: one autocommit connection that only LISTENs; reconnects when it drops."""
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    while not stopping.is_set():
        try:
            with psycopg.connect(dsn, autocommit=True) as connection:
                connection.execute(Channel.SAMPLES.listen())
                wakeup.notify()  # anything queued while we were not listening
                while not stopping.is_set():
                    for _ in connection.notifies(timeout=1.0, stop_after=1):
                        wakeup.notify()
        except psycopg.Error as exc:
            log.warning("LISTEN %s failed (%s); polling until it is back", Channel.SAMPLES.value, exc)
            stopping.wait(RECONNECT_S)
