"""The worker's wake-ups (service/worker/wakeup.py): a notification lets one idle thread look, a general thread
before an interactive-only one; a claim's own notification lets the next look; notify_all lets every one look."""

from __future__ import annotations

import threading

from service.worker.wakeup import Wakeup
from tests.e2e.conftest import wait_until


class Waiter:
    """A thread waiting on `wakeup` since its current mark, as a claiming thread after an empty claim."""

    def __init__(self, wakeup: Wakeup, interactive_only: bool = False, timeout: float = 30.0) -> None:
        self.result: bool | None = None
        since = wakeup.mark()
        self.thread = threading.Thread(target=self._run, args=(wakeup, since, timeout, interactive_only), daemon=True)
        self.thread.start()

    def _run(self, wakeup: Wakeup, since: int, timeout: float, interactive_only: bool) -> None:
        self.result = wakeup.wait(since, timeout, interactive_only)


def _woken(waiters: list[Waiter]) -> list[Waiter]:
    return [waiter for waiter in waiters if waiter.result is True]


def _all_waiting(wakeup: Wakeup, general: int) -> None:
    wait_until(lambda: wakeup._waiting_general == general, 10, f"{general} general threads waiting")


def test_one_notification_wakes_one_thread_and_a_full_claim_the_next() -> None:
    wakeup = Wakeup(threads=4)
    waiters = [Waiter(wakeup) for _ in range(3)]
    _all_waiting(wakeup, 3)
    wakeup.notify()
    wait_until(lambda: len(_woken(waiters)) == 1, 10, "one thread woken")
    _all_waiting(wakeup, 2)  # the other two went back to waiting
    wakeup.notify()  # the woken thread's claim took samples of a run of several
    wait_until(lambda: len(_woken(waiters)) == 2, 10, "a second thread woken")
    _all_waiting(wakeup, 1)
    wakeup.notify_all()
    wait_until(lambda: len(_woken(waiters)) == 3, 10, "every thread woken")


def test_a_general_thread_takes_the_notification_before_an_interactive_only_one() -> None:
    wakeup = Wakeup(threads=2)
    interactive = Waiter(wakeup, interactive_only=True)
    general = Waiter(wakeup)
    _all_waiting(wakeup, 1)
    wakeup.notify()
    wait_until(lambda: general.result is True, 10, "the general thread woken")
    assert interactive.result is None and interactive.thread.is_alive()
    wakeup.notify()  # no general thread waits now: the interactive-only one looks
    wait_until(lambda: interactive.result is True, 10, "the interactive-only thread woken")


def test_notifications_while_every_thread_was_busy_wake_at_most_every_thread_once() -> None:
    wakeup = Wakeup(threads=2)
    since = wakeup.mark()
    for _ in range(10):  # ten runs committed while both threads were claiming
        wakeup.notify()
    assert wakeup.wait(since, 5.0) and wakeup.wait(since, 5.0)
    assert not wakeup.wait(since, 0.2)  # the third look waits for a new notification (or its poll)
