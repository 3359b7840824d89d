"""Runs their caller waits for within the request (POST /run_code, POST /v1/judge): made at interactive priority,
a full queue waited out up to the request's budget, then the run's end waited for. Past the budget, a 504, which
SandboxFusion's clients (verl among them) retry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from fastapi import Header, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth.principal import Principal
from service.api.delivery.admission import QueueFull
from service.api.delivery.events import run_subscription, wait_for_run_end
from service.api.dependencies import commit_now
from service.api.runs.schemas import RunRead
from service.api.streams.schemas import HEADER, MAX_NAME
from service.core.database import BUSY, PoolTimeout
from service.core.exceptions import APIError

T = TypeVar("T")

# Beyond the program's own limits (its compile's and its run's): time to be queued, claimed and recorded. verl
# gives up after compile_timeout + run_timeout + 10 s, and retries a 504: past this, the answer is a 504.
ANSWER_ALLOWANCE_S = 8.0
# How often a request waiting for room in a full queue tries again.
QUEUE_RETRY_S = 0.5


# The stream the call joins (service/api/streams): the client's name for it, else the endpoint's own.
StreamHeader = Annotated[str | None, Header(
    alias=HEADER, max_length=MAX_NAME,
    description="The stream this call joins (GET /v1/streams): a trainer's job or step, say; default: the endpoint's.",
)]


class NotYet(APIError):
    """The program has not been run within the request's bound: a 504, which SandboxFusion's clients retry."""

    status_code = 504

    def __init__(self, detail: str, retry_after_s: int = 1) -> None:
        super().__init__(detail)
        self.headers = {"Retry-After": str(retry_after_s)}


async def run_and_wait(request: Request, response: Response, session: AsyncSession, principal: Principal,
                       submit: Callable[[], Awaitable[RunRead]], budget_s: float,
                       answer: Callable[[AsyncSession, RunRead], Awaitable[T]]) -> T:
    """Make the run with `submit` (retried while the queue is full), wait until it has ended, all within
    `budget_s`, and return `answer` read in the session that saw it end; the run's id goes into the
    `X-Passk-Run` header at once."""
    deadline = time.monotonic() + budget_s
    while True:
        try:
            run = await submit()
            break
        except PoolTimeout:
            raise NotYet(f"not run in time: {BUSY}") from None
        except QueueFull as exc:
            await session.rollback()  # lets the admission lock go while this request waits
            if time.monotonic() + QUEUE_RETRY_S >= deadline:
                raise NotYet(f"not run in time: {exc.detail}", int(exc.headers["Retry-After"])) from None
            await asyncio.sleep(QUEUE_RETRY_S)
    response.headers["X-Passk-Run"] = str(run.id)
    # Subscribed before the commit: the run's end is notified after it, so nothing is read until then.
    with run_subscription(request.app, run.id) as wake:
        await commit_now(session)  # workers must see the run while this request waits for it
        try:
            ended = await wait_for_run_end(
                request.app, principal, run.id, max(0.0, deadline - time.monotonic()),
                read=lambda reader: answer(reader, run), wake=wake,
            )
        except PoolTimeout:
            raise NotYet(f"not answered in time: {BUSY}; the run {run.id} goes on "
                         f"(GET /v1/runs/{run.id}/samples)") from None
    if ended is None:
        raise NotYet(f"not run within {budget_s:g} s; the run {run.id} goes on (GET /v1/runs/{run.id}/samples)")
    return ended
