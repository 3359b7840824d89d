"""Long-lived waiting loops of the API stop when cancelled, whenever the cancellation comes.

Python 3.11's asyncio.wait_for drops a cancellation that arrives just as the awaited event was set; a loop that
waits that way (the webhook dispatcher) then runs on, and the API's shutdown waits for it for ever.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from fastapi import FastAPI

from service.api.delivery.waiting import woken
from service.api.delivery.webhooks import Dispatcher
from service.core.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


async def test_woken_says_whether_the_event_came() -> None:
    event = asyncio.Event()
    assert not await woken(event, 0.01)
    event.set()
    assert await woken(event, 10)


async def _cancelled_just_after_a_wake(loop_body) -> bool:  # noqa: ANN001
    """Whether a task looping on `loop_body(event)` ends when cancelled in the step after the event was set."""
    event = asyncio.Event()

    async def forever() -> None:
        while True:
            event.clear()
            await loop_body(event)

    task = asyncio.create_task(forever())
    await asyncio.sleep(0.01)
    event.set()
    await asyncio.sleep(0)  # the wait has seen the event; its task has not run yet
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=2)
    task.cancel()
    return bool(done)


async def test_a_cancellation_just_after_a_wake_ends_the_loop() -> None:
    async def with_woken(event: asyncio.Event) -> None:
        await woken(event, 5)

    async def with_wait_for(event: asyncio.Event) -> None:
        try:
            await asyncio.wait_for(event.wait(), 5)
        except TimeoutError:
            pass

    assert await _cancelled_just_after_a_wake(with_woken)
    # What the helper is for: the standard library's wait_for loses this cancellation on this Python.
    lost = not await _cancelled_just_after_a_wake(with_wait_for)
    assert lost or not hasattr(asyncio.tasks, "_release_waiter"), "wait_for keeps cancellations now: the note in waiting.py is out of date"


async def test_the_webhook_dispatcher_closes_right_after_a_wake(app: FastAPI, settings: Settings) -> None:
    dispatcher = Dispatcher(app, settings)
    dispatcher.start()
    await asyncio.sleep(0.5)  # its LISTEN connection is up, its loop waits
    dispatcher._wake.set()
    await asyncio.sleep(0)  # its wait has seen the wake; its loop has not run yet
    tasks = list(dispatcher._tasks)
    closing = asyncio.create_task(dispatcher.close())
    await asyncio.wait([closing], timeout=30)
    assert closing.done() and all(task.done() for task in tasks), "the dispatcher's loop ran on after its cancellation"


def test_the_service_never_waits_with_wait_for() -> None:
    found = []
    for path in sorted((ROOT / "service").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "wait_for" and getattr(node.value, "id", "") == "asyncio":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"asyncio.wait_for can lose a cancellation; use service.api.delivery.waiting.woken: {found}"
