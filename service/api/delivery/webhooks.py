"""Webhooks: when a run with a callback_url ends, POST its outcome there, signed, with retries.

- Body: JSON `{"run_id", "status", "progress", "finished_at", "metrics"}`.
- Headers: `X-Passk-Timestamp` (Unix seconds), `X-Passk-Signature: sha256=<hex HMAC-SHA256 of
  "<timestamp>.<body>" under PASSK_WEBHOOK_SECRET>` (receivers should refuse old timestamps: replays),
  `X-Passk-Event` (the run's status) and `X-Passk-Run`.
- Retries: tenacity, exponential back-off from PASSK_WEBHOOK_BACKOFF_S, PASSK_WEBHOOK_ATTEMPTS in all; any
  2xx is delivered. Every attempt is a row of webhook_deliveries, shown on GET /v1/runs/{id}.
- The target is resolved and checked again before every attempt, and the attempt connects to the address
  that was checked (targets.py): special-purpose addresses are refused unless allowlisted, and redirects are
  never followed.

The dispatcher runs in each API process: it claims owed callbacks from the database (SKIP LOCKED, so
replicas share them), is woken by NOTIFY passk_callbacks and polls as a fallback. A dispatcher that stops
(its API process shutting down) gives the claims of the deliveries it cut back at once; one that died
mid-delivery leaves its claim, which another takes over after CLAIM_TIMEOUT.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
import uuid
from typing import Any

import httpx
import psycopg
from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from sqlalchemy import text
from tenacity import (
    AsyncRetrying,
    RetryError,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from service.core.channels import Channel, notify
from service.core.states import CallbackState
from service.api.delivery.targets import RefusedTarget, resolve
from service.api.delivery.waiting import woken
from service.core.settings import Settings
from service.api.auth.principal import SYSTEM

log = logging.getLogger(__name__)

POLL_S = 5.0
CLAIM_TIMEOUT = "15 minutes"


def sign(key: bytes, timestamp: int, body: bytes) -> str:
    return "sha256=" + hmac.new(key, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()


def verify(key: bytes, timestamp: str, body: bytes, signature: str) -> bool:
    """What a receiver does (also used by the tests)."""
    return hmac.compare_digest(sign(key, int(timestamp), body), signature)


# The claims of deliveries a stopping dispatcher cut, owed again (a delivery that ended meanwhile keeps its end).
_GIVE_BACK = text(
    f"""
    UPDATE runs SET callback_state = '{CallbackState.PENDING.value}', callback_claimed_at = NULL
    WHERE id = ANY(:ids) AND callback_state = '{CallbackState.DELIVERING.value}'
    """
)
GIVE_BACK_TIMEOUT_S = 5.0


class NotDelivered(Exception):
    """An attempt that did not end in a 2xx."""


_CLAIM = text(
    f"""
    UPDATE runs SET callback_state = '{CallbackState.DELIVERING.value}', callback_claimed_at = now()
    WHERE id = (
        SELECT id FROM runs
        WHERE callback_state = '{CallbackState.PENDING.value}'
           OR (callback_state = '{CallbackState.DELIVERING.value}' AND callback_claimed_at < now() - interval '{CLAIM_TIMEOUT}')
        ORDER BY finished_at LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING id, callback_url, status
    """
)


class Dispatcher:
    def __init__(self, app: FastAPI, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        # The deliveries under way, with their runs: the event loop holds its tasks only weakly, so an
        # unreferenced one could be collected halfway through its request.
        self._deliveries: dict[asyncio.Task[None], uuid.UUID] = {}

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._listen()), loop.create_task(self._loop())]

    async def close(self) -> None:
        cut = list(self._deliveries.values())
        tasks = [*self._tasks, *self._deliveries]
        for task in tasks:
            task.cancel()
        # Their ends (a cancellation, or an error already logged) are not the caller's; its own cancellation is.
        await asyncio.gather(*tasks, return_exceptions=True)
        if cut:
            await self._give_back(cut)

    async def _give_back(self, run_ids: list[uuid.UUID]) -> None:
        """The cut deliveries are owed again, and the other dispatchers told: one delivers them now rather than
        once the claims time out. Best effort: with the database away, the claims time out as a crash's do."""
        try:
            async with asyncio.timeout(GIVE_BACK_TIMEOUT_S):
                async with self.app.state.sessionmaker() as session, session.begin():
                    await session.execute(_GIVE_BACK, {"ids": run_ids})
                    await session.execute(notify(Channel.CALLBACKS))
        except Exception:  # TimeoutError included
            log.warning("could not give back the webhooks of %d runs; they are delivered after %s", len(run_ids),
                        CLAIM_TIMEOUT, exc_info=True)

    async def _listen(self) -> None:
        dsn = self.app.state.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as connection:
                    await connection.execute(Channel.CALLBACKS.listen())
                    self._wake.set()
                    async for _ in connection.notifies():
                        self._wake.set()
            except asyncio.CancelledError:
                raise
            except (psycopg.Error, OSError) as exc:
                log.warning("LISTEN %s failed (%s); polling", Channel.CALLBACKS.value, exc)
                await asyncio.sleep(POLL_S)

    async def _loop(self) -> None:
        while True:
            try:
                while await self._deliver_one():
                    pass
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("webhook dispatch failed; will try again")
            self._wake.clear()
            await woken(self._wake, POLL_S)

    async def _deliver_one(self) -> bool:
        async with self.app.state.sessionmaker() as session, session.begin():
            claimed = (await session.execute(_CLAIM)).one_or_none()
        if claimed is None:
            return False
        # Each delivery in a task of its own: one slow receiver does not hold the others.
        task = asyncio.get_running_loop().create_task(self._deliver(claimed.id, claimed.callback_url, claimed.status))
        self._deliveries[task] = claimed.id
        task.add_done_callback(lambda done: self._deliveries.pop(done, None))
        return True

    async def _payload(self, run_id: uuid.UUID) -> dict[str, Any]:
        from service.api.runs import service as run_service  # late: runs imports delivery

        async with self.app.state.sessionmaker() as session:
            # passk's own delivery to the run's own callback: no caller to check.
            run = await run_service.get(session, self.settings, SYSTEM, run_id)
        return {
            "run_id": run_id, "status": run.status, "progress": run.progress.model_dump(),
            "finished_at": run.finished_at, "metrics": f"/v1/runs/{run_id}/metrics",
        }

    async def _record(self, run_id: uuid.UUID, event: str, attempt: int, status_code: int | None,
                      error: str | None, delivered: bool) -> None:
        async with self.app.state.sessionmaker() as session, session.begin():
            await session.execute(
                text(
                    "INSERT INTO webhook_deliveries (run_id, event, attempt, status_code, error, delivered) "
                    "VALUES (:run, :event, :attempt, :code, :error, :delivered)"
                ),
                {"run": run_id, "event": event, "attempt": attempt, "code": status_code,
                 "error": error[:1000] if error else None, "delivered": delivered},
            )

    async def _finish(self, run_id: uuid.UUID, state: CallbackState) -> None:
        async with self.app.state.sessionmaker() as session, session.begin():
            await session.execute(
                text("UPDATE runs SET callback_state = :state WHERE id = :id"), {"state": state.value, "id": run_id}
            )

    async def _deliver(self, run_id: uuid.UUID, url: str, status: str) -> None:
        cfg = self.settings
        try:
            body = json.dumps(jsonable_encoder(await self._payload(run_id)), separators=(",", ":")).encode()
        except Exception:
            log.exception("could not build the webhook of run %s", run_id)
            await self._finish(run_id, CallbackState.FAILED)
            return
        attempt = 0

        async def once(client: httpx.AsyncClient) -> None:
            nonlocal attempt
            attempt += 1
            try:
                target = await resolve(url, cfg.webhook_allow_networks)
            except RefusedTarget as exc:
                await self._record(run_id, status, attempt, None, f"refused: {exc}", False)
                raise
            pinned_url, host, extensions = target.pinned()
            timestamp = int(time.time())
            headers = {
                **host, "Content-Type": "application/json", "User-Agent": "passk-webhook",
                "X-Passk-Timestamp": str(timestamp), "X-Passk-Signature": sign(cfg.webhook_key(), timestamp, body),
                "X-Passk-Event": status, "X-Passk-Run": str(run_id),
            }
            try:
                response = await client.post(pinned_url, content=body, headers=headers, extensions=extensions)
            except httpx.HTTPError as exc:
                await self._record(run_id, status, attempt, None, f"{type(exc).__name__}: {exc}", False)
                raise NotDelivered(str(exc)) from None
            delivered = 200 <= response.status_code < 300
            await self._record(run_id, status, attempt, response.status_code,
                               None if delivered else f"HTTP {response.status_code}", delivered)
            if not delivered:
                raise NotDelivered(f"HTTP {response.status_code}")

        retrying = AsyncRetrying(
            stop=stop_after_attempt(cfg.webhook_attempts),
            wait=wait_exponential(multiplier=cfg.webhook_backoff_s, max=300),
            retry=retry_if_exception_type(NotDelivered),
            reraise=False,
        )
        try:
            async with httpx.AsyncClient(timeout=cfg.webhook_timeout_s, follow_redirects=False, trust_env=False) as client:
                async for attempt_state in retrying:
                    with attempt_state:
                        await once(client)
            await self._finish(run_id, CallbackState.DELIVERED)
        except (RetryError, RefusedTarget, NotDelivered):
            await self._finish(run_id, CallbackState.FAILED)
        except Exception:
            log.exception("webhook of run %s failed", run_id)
            await self._finish(run_id, CallbackState.FAILED)
