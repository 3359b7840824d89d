"""Sharing one computation between requests that want the same answer at the same moment.

`Coalescer`: requests for the same key that arrive in the same event-loop turn share one computation
(run status polls: twenty pollers whose requests the server reads together cost one query). A request never
joins a computation that has already started, so it never gets an answer older than itself: a client that
wrote and then reads sees its write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


async def resolve_with(future: asyncio.Future[T | None], compute: Callable[[], Awaitable[T]]) -> T:
    """Run compute() for everyone waiting on `future`: its result, or its exception (the same answer for
    all); None if the computing request is cancelled, so that the waiters compute for themselves."""
    future.add_done_callback(lambda done: done.exception())  # retrieved even when nobody waits
    try:
        result = await compute()
    except Exception as exc:
        future.set_exception(exc)
        raise
    except BaseException:
        future.set_result(None)
        raise
    future.set_result(result)
    return result


class Coalescer(Generic[T]):
    """Requests for one key that arrive in the same event-loop turn share one computation."""

    def __init__(self) -> None:
        self._forming: dict[Hashable, asyncio.Future[T | None]] = {}

    async def run(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        while (forming := self._forming.get(key)) is not None:
            # Shielded: a request that goes away does not cancel the computation the others wait for.
            if (shared := await asyncio.shield(forming)) is not None:
                return shared
        future: asyncio.Future[T | None] = asyncio.get_running_loop().create_future()
        self._forming[key] = future
        try:
            await asyncio.sleep(0)  # the requests already received for this key join now...
        except BaseException:  # cancelled before computing: the joiners compute for themselves
            future.set_result(None)
            raise
        finally:
            del self._forming[key]  # ...later ones start their own computation
        return await resolve_with(future, compute)
