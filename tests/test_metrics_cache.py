"""The run metrics cache: polls that miss at the same moment share one computation."""

from __future__ import annotations

import asyncio

import pytest

from service.metrics.service import MetricsCache


async def test_concurrent_misses_compute_once_and_later_polls_hit() -> None:
    cache, calls, release = MetricsCache(), [], asyncio.Event()

    async def compute() -> bytes:
        calls.append(1)
        await release.wait()
        return b'{"x":1}'

    polls = [asyncio.create_task(cache.get_or_compute('"e1"', compute)) for _ in range(5)]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(*polls) == [b'{"x":1}'] * 5
    assert len(calls) == 1
    assert await cache.get_or_compute('"e1"', compute) == b'{"x":1}' and len(calls) == 1


async def test_an_error_reaches_every_waiter_and_is_not_kept() -> None:
    cache, release = MetricsCache(), asyncio.Event()

    async def failing() -> bytes:
        await release.wait()
        raise ValueError("k too large")

    polls = [asyncio.create_task(cache.get_or_compute('"e2"', failing)) for _ in range(3)]
    await asyncio.sleep(0)
    release.set()
    for outcome in await asyncio.gather(*polls, return_exceptions=True):
        assert isinstance(outcome, ValueError)
    assert cache.get('"e2"') is None


async def test_waiters_compute_themselves_when_the_computing_request_is_cancelled() -> None:
    cache, started = MetricsCache(), asyncio.Event()

    async def slow() -> bytes:
        started.set()
        await asyncio.sleep(3600)
        return b"never"

    async def fast() -> bytes:
        return b"mine"

    first = asyncio.create_task(cache.get_or_compute('"e3"', slow))
    await started.wait()
    waiter = asyncio.create_task(cache.get_or_compute('"e3"', fast))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await waiter == b"mine"
