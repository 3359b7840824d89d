"""The worker's row in `worker_heartbeats`: what GET /v1/status and /metrics report of live workers."""

from __future__ import annotations

import logging
import os
import socket
from datetime import timedelta

from sqlalchemy import delete, func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from service.core.database import transaction
from service.core.models import WorkerHeartbeat

log = logging.getLogger(__name__)

heartbeats = WorkerHeartbeat.__table__

# A heartbeat keeps the worker listed as live for this many maintenance ticks.
TICKS = 3


class Heartbeat:
    def __init__(self, sessions: sessionmaker[Session], owner: str, threads: int) -> None:
        self.sessions, self.owner, self.threads = sessions, owner, threads

    def beat(self, tick_s: float, *, processed: int, sandbox_errors: int, engine_up: bool) -> None:
        with transaction(self.sessions) as session:
            now = func.now()
            row = insert(heartbeats).values(
                owner=self.owner, hostname=socket.gethostname()[:200], pid=os.getpid(), threads=self.threads,
                started_at=now, seen_at=now, expires_at=now + timedelta(seconds=tick_s * TICKS + 1.0),
                processed=processed, sandbox_errors=sandbox_errors, engine_up=engine_up,
            )
            session.execute(
                row.on_conflict_do_update(
                    index_elements=[heartbeats.c.owner],
                    set_={
                        "seen_at": now, "expires_at": row.excluded.expires_at,
                        "processed": row.excluded.processed, "sandbox_errors": row.excluded.sandbox_errors,
                        "engine_up": row.excluded.engine_up,
                    },
                )
            )
            session.execute(delete(heartbeats).where(heartbeats.c.expires_at < func.now() - timedelta(days=1)))

    def forget(self) -> None:
        try:
            with transaction(self.sessions) as session:
                session.execute(delete(heartbeats).where(heartbeats.c.owner == self.owner))
        except Exception as exc:
            log.warning("could not remove this worker's heartbeat (it expires on its own): %s", exc)
