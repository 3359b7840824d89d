"""The states of runs, samples and callbacks, run priorities and run events, as enums (stored as their values;
the models' check constraints are generated from them, as the verdicts' are)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


def sql_in(column: str, values: Iterable[str]) -> str:
    """`column IN ('a', 'b')`: states as constants in SQL text, as the partial indexes' predicates are written (a
    statement's plan can use such an index only where its condition is written the same way)."""
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


class RunState(StrEnum):
    """A run's `status`: queued until a worker claims one of its samples, then running until none is left."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    # Nothing but sandbox errors came back.
    FAILED = "failed"
    CANCELLED = "cancelled"


class SampleState(StrEnum):
    """queued -> leased (a worker holds it until lease_expires_at) -> done; or cancelled."""

    QUEUED = "queued"
    LEASED = "leased"
    DONE = "done"
    CANCELLED = "cancelled"


# Runs workers still serve, and runs that will not change again.
ACTIVE_RUN_STATES = (RunState.QUEUED, RunState.RUNNING)
FINAL_RUN_STATES = (RunState.COMPLETED, RunState.FAILED, RunState.CANCELLED)
# Samples not yet finished (nor cancelled).
OPEN_SAMPLE_STATES = (SampleState.QUEUED, SampleState.LEASED)


class RunPriority(StrEnum):
    """`interactive` runs are claimed before `batch` ones (with a share kept for batch: never starved)."""

    INTERACTIVE = "interactive"
    BATCH = "batch"


class CallbackState(StrEnum):
    """A run's webhook: owed once the run ends, then delivered or given up on after its retries."""

    PENDING = "pending"
    DELIVERING = "delivering"
    DELIVERED = "delivered"
    FAILED = "failed"


class RunEvent(StrEnum):
    """The kinds of event on GET /v1/runs/{id}/events and of webhook calls."""

    SAMPLE = "sample"
    END = "end"

