"""Live events of a run (Server-Sent Events) and waiting for a run to end, woken by LISTEN passk_events.

Each finished sample gets an event id from one sequence for every run (service/worker/results.py: event_id),
and after the record's commit its worker sends `pg_notify('passk_events', run_id)`. Concurrent records commit
their ids out of order, so a stream reads a run's events in id order only up to its horizon (Horizon): an id
below which every id handed out is committed or never will be. Everything a stream sends is read from the
database by id, so a client that reconnects with Last-Event-ID, to this API process or another one, or after a
restart, gets exactly the events after that id: a client that saw id N has seen every event of the run below N. A stream holds at most one page of rows and no database connection while it
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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response, StreamingResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.channels import Channel
from service.core.exceptions import NotFound
from service.core.states import FINAL_RUN_STATES, RunEvent
from service.api import hidden_tests
from service.api.auth.principal import Principal
from service.api.delivery.waiting import woken
from service.api.projects.ownership import ownership_params

log = logging.getLogger(__name__)

PAGE = 256
# Without a notification (the LISTEN connection is down), look again this often.
POLL_S = 2.0
# While the LISTEN connection is up, every end of a run is notified (the worker's end check and sweep, a cancel),
# so a waiter only looks this often in case the connection died unnoticed; a reconnect wakes every waiter.
LISTENING_POLL_S = 15.0
# Events of the run committed past the horizon: look again this soon (the horizon passes them once the
# transactions open when it was read have ended, a few milliseconds under load).
HORIZON_POLL_S = 0.05
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
            await asyncio.gather(self._task, return_exceptions=True)  # the caller's own cancellation still propagates
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
                    self.wake_all()  # whatever happened while we were not listening
                    async for notice in connection.notifies():
                        for event in self._waiters.get(notice.payload, ()):
                            event.set()
            except asyncio.CancelledError:
                raise
            except (psycopg.Error, OSError) as exc:
                log.warning("LISTEN %s failed (%s); streams poll until it is back", Channel.EVENTS.value, exc)
                self._ready.clear()
                await asyncio.sleep(RECONNECT_S)

    @property
    def poll_s(self) -> float:
        """How long a waiter may go without looking, unless woken: longer while notifications arrive."""
        return LISTENING_POLL_S if self._ready.is_set() else POLL_S

    def wake_all(self) -> None:
        for waiters in self._waiters.values():
            for event in waiters:
                event.set()


def end_streams(app: FastAPI) -> None:
    """The process is stopping: every live-event stream ends once it has sent the events it has (at once, for
    those waiting), and a new one ends as soon as it starts. Their clients resume elsewhere with Last-Event-ID."""
    app.state.streams_ended = True
    found = getattr(app.state, "run_notifier", None)
    if found is not None:
        found.wake_all()


def streams_ended(app: FastAPI) -> bool:
    return getattr(app.state, "streams_ended", False)


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


_RUN = text("SELECT status FROM runs WHERE id = :id")
# The last event id handed out (a sequence is read outside any snapshot; before its first nextval, the one below).
_HANDED_OUT = text("SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM sample_events")
# For the horizon: the xmin of the statement's snapshot (every transaction whose xid is below it has ended), and
# the next xid to be assigned, read in the statement (so after _HANDED_OUT). PostgreSQL has no function for the
# latter that does not assign an xid of its own; age(x) is the distance from it (read once per transaction, and
# only in a transaction without an xid, as a stream's reads are) to x, so it is the xmin's 64-bit value plus the
# age of its 32-bit one. Not the snapshot's xmax: that is one past
# the latest *completed* xid, and a transaction that took its xid after that one and is still open is neither
# below it nor in the snapshot's list of open ones.
SNAPSHOT_COLUMNS = """
    pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin,
    pg_snapshot_xmin(pg_current_snapshot())::text::bigint + age(xid(pg_snapshot_xmin(pg_current_snapshot())))
        AS next_xid
"""
# A run the caller may follow (service/projects/ownership.py), and whether it may see its dataset's hidden tests;
# its last event id, and the horizon's snapshot columns.
_FOLLOWED_RUN = text(
    f"""
    SELECT r.status, (SELECT max(s.event) FROM samples s WHERE s.run_id = r.id) AS last_event,
           (:owner_admin OR d.project_id = :owner_project) AS dataset_owner, d.hidden_tests AS dataset_hides_tests,
           {SNAPSHOT_COLUMNS}
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


class Horizon:
    """A stream's visibility horizon: the highest event id below which every id handed out is committed (or never
    will be), so that the stream can send ids in order and never have to send a lower one later.

    A writer takes its ids once its transaction has its xid (service/worker/results.py: event_id). So the ids up
    to L, the sequence's value read before the next xid X is read, belong to transactions whose xids are below X;
    once a snapshot's xmin reaches X, all of them have ended, and their ids are final. (L, X) waits as `pending`
    until then; when the snapshot read with X already has its xmin at X (nothing open), at once."""

    def __init__(self) -> None:
        self.upto = 0
        self.pending: tuple[int, int] | None = None

    def advance(self, handed_out: int, xmin: int, next_xid: int) -> int:
        """`handed_out`: the sequence's value, read before `next_xid`; `xmin`: a snapshot's, taken after that read."""
        if self.pending is not None and xmin >= self.pending[1]:
            self.upto, self.pending = max(self.upto, self.pending[0]), None
        if xmin >= next_xid:
            self.upto, self.pending = max(self.upto, handed_out), None
        elif self.pending is None and handed_out > self.upto:
            self.pending = (handed_out, next_xid)
        return self.upto


async def _read(app: FastAPI, principal: Principal, run_id: uuid.UUID, after: int,
                horizon: Horizon) -> tuple[Any, list[dict[str, Any]], bool]:
    """The run, then its events after `after` up to the horizon (every one once the run has ended: those of an
    ended run are all committed), and whether some of its events wait past the horizon (run None: the caller
    has no such run). Three statements, three snapshots, in this order: the sequence, the run and the horizon's
    snapshot, the events."""
    async with app.state.sessionmaker() as session:
        handed_out = (await session.execute(_HANDED_OUT)).scalar_one()
        run = (await session.execute(_FOLLOWED_RUN, {"id": run_id, **ownership_params(principal)})).one_or_none()
        if run is None:
            return None, [], False
        last_event = run.last_event or 0
        upto = last_event if run.status in FINAL_RUN_STATES else horizon.advance(handed_out, run.xmin, run.next_xid)
        rows = (await session.execute(_EVENTS, {"id": run_id, "after": after, "upto": upto, "limit": PAGE})).all()
        return run, [_shown(run, row._asdict()) for row in rows], last_event > upto


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
    run, _, _ = await _read(app, principal, run_id, after, Horizon())
    if run is None:
        raise NotFound("run", run_id)
    if run.status in FINAL_RUN_STATES and after > (run.last_event or 0):
        return Response(status_code=204)  # the end event was delivered: nothing more will come
    watch = notifier(app)

    async def frames() -> AsyncIterator[bytes]:
        last = after
        horizon = Horizon()
        quiet_since = time.monotonic()
        wake = watch.subscribe(run_id)
        try:
            yield b"retry: 1000\n\n"
            while True:
                wake.clear()
                run, rows, waiting = await _read(app, principal, run_id, last, horizon)
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
                    yield _frame(max(last, run.last_event or 0) + 1, RunEvent.END, await _end_data(app, principal, run_id))
                    return
                if await request.is_disconnected() or streams_ended(app):
                    return
                if not await woken(wake, HORIZON_POLL_S if waiting else POLL_S):
                    if time.monotonic() - quiet_since > KEEPALIVE_S:
                        quiet_since = time.monotonic()
                        yield b": keepalive\n\n"
        finally:
            watch.unsubscribe(run_id, wake)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)


async def wait_for_run_end(app: FastAPI, principal: Principal, run_id: uuid.UUID, timeout_s: float,
                           read: Callable[[AsyncSession], Awaitable[Any]] | None = None,
                           wake: asyncio.Event | None = None) -> Any:
    """What `read` returns, read in the session that saw the run ended (default: the run, as RunRead), or None if it
    has not ended within `timeout_s`. Called for a run the caller has just made. `wake`: the caller's subscription
    (run_subscription), made before the run was committed, so the run cannot have ended unnoticed before it: the
    first look waits for a notification (or the poll)."""
    from service.api.runs import service as run_service  # late: runs imports this module

    if read is None:
        async def read(session: AsyncSession) -> Any:
            return await run_service.get(session, app.state.settings, principal, run_id)

    watch = notifier(app)
    with ExitStack() as stack:
        look = wake is None
        if wake is None:
            wake = stack.enter_context(run_subscription(app, run_id))
        deadline = time.monotonic() + timeout_s
        while True:
            if look:
                wake.clear()
                # Without a transaction: once the run has ended, neither it nor its samples change any more.
                async with app.state.autocommit_sessionmaker() as session:
                    status = (await session.execute(_RUN, {"id": run_id})).one_or_none()
                    if status is None:
                        return None
                    if status.status in FINAL_RUN_STATES:
                        return await read(session)
            look = True
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            await woken(wake, min(left, watch.poll_s))


@contextmanager
def run_subscription(app: FastAPI, run_id: uuid.UUID) -> Iterator[asyncio.Event]:
    """An event set whenever the run's events are notified (and when the LISTEN connection comes back)."""
    watch = notifier(app)
    wake = watch.subscribe(run_id)
    try:
        yield wake
    finally:
        watch.unsubscribe(run_id, wake)
