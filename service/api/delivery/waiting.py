"""Waiting for an asyncio.Event with a timeout, in a way that a cancellation always ends.

Python 3.11's `asyncio.wait_for` returns the awaited result when its task is cancelled just as the event it waits
for was set: the cancellation is lost. A loop that waits that way for as long as the process lives (the webhook
dispatcher, a run's event stream) then cannot be stopped, and the API's shutdown waits for it for ever.
`asyncio.timeout` has no such window: a cancellation always reaches the caller.
"""

from __future__ import annotations

import asyncio


async def woken(event: asyncio.Event, timeout_s: float) -> bool:
    """Whether `event` is set within `timeout_s` (at once if it already is); a cancellation always propagates."""
    try:
        async with asyncio.timeout(timeout_s):
            await event.wait()
    except TimeoutError:
        return False
    return True
