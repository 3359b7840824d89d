"""The states of delivery, as enums (stored as their values)."""

from __future__ import annotations

from enum import StrEnum


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

