"""Live events of a run (Server-Sent Events) and waiting for a run to end, woken by LISTEN passk_events.

Workers number each finished sample under the run's row lock and `pg_notify('passk_events', run_id)` in
the same transaction (service/worker/queue.py), so a notification means "committed and visible", and event
numbers become visible in order. Everything a stream sends is read from the database by number, so a client
that reconnects with Last-Event-ID, to this API process or another one, or after a restart, gets exactly
the events after that number. A stream holds at most one page of rows and no database connection while it
writes, and it writes only as fast as the client reads (the server's flow control), so a slow client costs
one small coroutine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response, StreamingResponse
from sqlalchemy import text

from service.core.channels import Channel
from service.core.exceptions import NotFound
from service.core.states import FINAL_RUN_STATES, RunEvent
from service.api import hidden_tests
from service.api.auth.principal import Principal
from service.api.projects.ownership import ownership_params

log = logging.getLogger(__name__)

PAGE = 256
# Without a notification (the LISTEN connection is down, or a cancelled run), look again this often.
POLL_S = 2.0
# A quiet stream (a queued run) gets a comment this often: proxies keep it open, and `passk submit --wait`
# prints a progress line on each, so a CI log is never silent for minutes.
KEEPALIVE_S = 4.0
RECONNECT_S = 2.0


class RunNotifier:
    """One LISTEN connection per API process; any number of waiters per run."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._waiters: dict[str, set[asyncio.Event]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._listen())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None

    def subscribe(self, run_id: uuid.UUID) -> asyncio.Event:
        event = asyncio.Event()
        self._waiters[str(run_id)].add(event)
        return event

    def unsubscribe(self, run_id: uuid.UUID, event: asyncio.Event) -> None:
        waiters = self._waiters.get(str(run_id))
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._waiters[str(run_id)]

    async def _listen(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as connection:
                    await connection.execute(Channel.EVENTS.listen())
                    self._ready.set()
                    self._wake_all()  # whatever happened while we were not listening
                    async for notice in connection.notifies():
                        for event in self._waiters.get(notice.payload, ()):
                            event.set()
            except asyncio.CancelledError:
                raise
            except (psycopg.Error, OSError) as exc:
                log.warning("LISTEN %s failed (%s); streams poll until it is back", Channel.EVENTS.value, exc)
                self._ready.clear()
                await asyncio.sleep(RECONNECT_S)

    def _wake_all(self) -> None:
        for waiters in self._waiters.values():
            for event in waiters:
                event.set()


def notifier(app: FastAPI) -> RunNotifier:
    found = getattr(app.state, "run_notifier", None)
    if found is None:
        url = app.state.engine.url.set(drivername="postgresql")
        found = app.state.run_notifier = RunNotifier(url.render_as_string(hide_password=False))
    found.start()
    return found


async def close_notifier(app: FastAPI) -> None:
    found = getattr(app.state, "run_notifier", None)
    if found is not None:
        await found.close()


_RUN = text("SELECT status, events FROM runs WHERE id = :id")
# A run the caller may follow (service/projects/ownership.py), and whether it may see its dataset's hidden tests.
_FOLLOWED_RUN = text(
    """
    SELECT r.status, r.events, (:owner_admin OR d.project_id = :owner_project) AS dataset_owner,
           d.hidden_tests AS dataset_hides_tests
    FROM runs r JOIN datasets d ON d.id = r.dataset_id
    WHERE r.id = :id AND (:owner_admin OR r.project_id = :owner_project)
    """
)
_EVENTS = text(
    """
    SELECT s.event, s.id, p.key AS problem_id, s.index, s.verdict, s.duration_ms, s.cpu_ms, s.cached,
           COALESCE(s.flags, '{}') AS flags, p.hidden_tests AS problem_hides_tests
    FROM samples s JOIN problems p ON p.id = s.problem_id
    WHERE s.run_id = :id AND s.event > :after AND s.event <= :upto
    ORDER BY s.event LIMIT :limit
    """
)


async def _read(app: FastAPI, principal: Principal, run_id: uuid.UUID, after: int) -> tuple[Any, list[dict[str, Any]]]:
    """The run's status and event count, then the events after `after` up to that count (None: the caller has
    no such run)."""
    async with app.state.sessionmaker() as session:
        run = (await session.execute(_FOLLOWED_RUN, {"id": run_id, **ownership_params(principal)})).one_or_none()
        if run is None:
            return None, []
        rows = (await session.execute(_EVENTS, {"id": run_id, "after": after, "upto": run.events, "limit": PAGE})).all()
        return run, [_shown(run, row._asdict()) for row in rows]


def _shown(run: Any, event: dict[str, Any]) -> dict[str, Any]:
    """An event as the caller sees it: without timings when the problem's tests are hidden from it."""
    hides = event.pop("problem_hides_tests") or run.dataset_hides_tests
    if hides and not run.dataset_owner:
        event.update(dict.fromkeys(hidden_tests.WITHHELD_EVENT_FIELDS), hidden=True)
    return event


def _frame(event_id: int, kind: RunEvent, data: dict[str, Any]) -> bytes:
    payload = json.dumps(jsonable_encoder(data), separators=(",", ":"))
    return f"id: {event_id}\nevent: {kind.value}\ndata: {payload}\n\n".encode()


async def _end_data(app: FastAPI, principal: Principal, run_id: uuid.UUID) -> dict[str, Any]:
    from service.api.runs import service as run_service  # late: runs imports this module

    async with app.state.sessionmaker() as session:
        run = await run_service.get(session, app.state.settings, principal, run_id)
    return {
        "run_id": run_id, "status": run.status, "progress": run.progress.model_dump(),
        "finished_at": run.finished_at, "metrics": f"/v1/runs/{run_id}/metrics",
    }


async def event_stream(request: Request, principal: Principal, run_id: uuid.UUID, after: int) -> Response:
    """The caller's run's events after `after`; another project's run is a 404 as no run is."""
    app = request.app
    run, _ = await _read(app, principal, run_id, after)
    if run is None:
        raise NotFound("run", run_id)
    if run.status in FINAL_RUN_STATES and after > run.events:
        return Response(status_code=204)  # the end event was delivered: nothing more will come
    watch = notifier(app)

    async def frames() -> AsyncIterator[bytes]:
        last = after
        quiet_since = time.monotonic()
        wake = watch.subscribe(run_id)
        try:
            yield b"retry: 1000\n\n"
            while True:
                wake.clear()
                run, rows = await _read(app, principal, run_id, last)
                if run is None:
                    return
                for data in rows:
                    event_id = data.pop("event")
                    yield _frame(event_id, RunEvent.SAMPLE, data)
                    last = event_id
                if rows:
                    quiet_since = time.monotonic()
                if len(rows) == PAGE:
                    continue
                if run.status in FINAL_RUN_STATES:
                    yield _frame(run.events + 1, RunEvent.END, await _end_data(app, principal, run_id))
                    return
                if await request.is_disconnected():
                    return
                try:
                    await asyncio.wait_for(wake.wait(), POLL_S)
                except TimeoutError:
                    if time.monotonic() - quiet_since > KEEPALIVE_S:
                        quiet_since = time.monotonic()
                        yield b": keepalive\n\n"
        finally:
            watch.unsubscribe(run_id, wake)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)


async def wait_for_run_end(app: FastAPI, principal: Principal, run_id: uuid.UUID, timeout_s: float,
                           full: bool = True) -> Any:
    """The caller's run (RunRead; with full=False only its status) once it has ended, or None if it has not
    within `timeout_s`. Called for a run the caller has just made."""
    from service.api.runs import service as run_service  # late: runs imports this module

    watch = notifier(app)
    wake = watch.subscribe(run_id)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            wake.clear()
            async with app.state.sessionmaker() as session:
                status = (await session.execute(_RUN, {"id": run_id})).one_or_none()
                if status is not None and status.status in FINAL_RUN_STATES:
                    return await run_service.get(session, app.state.settings, principal, run_id) if full else status.status
            left = deadline - time.monotonic()
            if status is None or left <= 0:
                return None
            try:
                await asyncio.wait_for(wake.wait(), min(left, POLL_S))
            except TimeoutError:
                pass
    finally:
        watch.unsubscribe(run_id, wake)
