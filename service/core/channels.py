"""The PostgreSQL channels between the API and the workers: each name written once, with the SQL that
notifies on it and the command that listens to it.

A notification is delivered at its transaction's commit, so a listener that wakes always finds what woke it.

- `SAMPLES`: samples were queued (a new run, a rerun, a requeued lease). Idle worker threads listen.
- `EVENTS`: a run recorded samples or ended; the payload is the run's id. API processes listen and wake that
  run's live-event streams and waiters.
- `CALLBACKS`: a run's webhook became owed. The API's webhook dispatcher listens.
"""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import Select, func, select
from sqlalchemy.sql.elements import ColumnElement


class Channel(StrEnum):
    SAMPLES = "passk_samples"
    EVENTS = "passk_events"
    CALLBACKS = "passk_callbacks"

    def listen(self) -> str:
        """The command a listening connection runs (channel names are fixed identifiers, never user input)."""
        return f"LISTEN {self.value}"


def notify(channel: Channel, payload: str | ColumnElement = "") -> Select:
    """`SELECT pg_notify(channel, payload)`, for any session (sync or async) to execute."""
    return select(notify_column(channel, payload))


def notify_column(channel: Channel, payload: str | ColumnElement = "") -> ColumnElement:
    """`pg_notify(channel, payload)` as a column, for statements that notify once per row they return."""
    return func.pg_notify(channel.value, payload)

