"""Shared computations: the run metrics cache (polls that miss at the same moment) and the run status
coalescer (polls received in the same event-loop turn)."""

from __future__ import annotations

import asyncio

import pytest

from service.api.metrics.service import MetricsCache
from service.api.runs.coalesce import Coalescer


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


async def test_requests_of_one_turn_share_a_computation_and_later_ones_start_their_own() -> None:
    coalescer: Coalescer[int] = Coalescer()
    calls = []

    async def compute() -> int:
        calls.append(1)
        number = len(calls)
        await asyncio.sleep(0.01)
        return number

    together = await asyncio.gather(*(coalescer.run("run", compute) for _ in range(5)))
    assert together == [1] * 5 and len(calls) == 1
    first = asyncio.create_task(coalescer.run("run", compute))
    await asyncio.sleep(0.001)  # the first computation has started: a new request must not get its answer
    assert await coalescer.run("run", compute) == 3 and await first == 2
    assert await coalescer.run("other", compute) == 4


async def test_joiners_compute_themselves_when_the_first_request_goes_away_before_computing() -> None:
    coalescer: Coalescer[str] = Coalescer()

    async def compute() -> str:
        return "answer"

    first = asyncio.create_task(coalescer.run("run", compute))
    joiner = asyncio.create_task(coalescer.run("run", compute))
    await asyncio.sleep(0)  # first waits for its turn to end, the joiner for first's answer
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await asyncio.wait_for(joiner, 5) == "answer"
