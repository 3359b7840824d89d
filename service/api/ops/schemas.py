"""Response body of GET /v1/status."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class QueueDepth(BaseModel):
    queued: int = Field(description="Samples waiting for a worker.")
    leased: int = Field(description="Samples a worker holds (running, or about to be recorded).")
    expired_leases: int = Field(description="Leased samples whose worker stopped renewing: about to be reclaimed.")


class SandboxErrors(BaseModel):
    last_hour: int = Field(description="Samples whose final verdict is sandbox_error, finished in the last hour.")
    total: int = Field(description="Samples whose final verdict is sandbox_error, all stored runs.")
    seen_by_live_workers: int = Field(
        description="Sandbox errors the live workers met since they started, including ones retried successfully."
    )


class RunCounts(BaseModel):
    queued: int = 0
    running: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0


class Workers(BaseModel):
    live: int = Field(description="Worker processes whose last heartbeat has not expired.")
    threads: int = Field(description="Parallel sandboxes of the live workers.")
    engines_down: int = Field(
        0, description="Live workers whose Docker engine does not answer: they claim nothing until it does."
    )


class Status(BaseModel):
    queue: QueueDepth
    finished_last_minute: int = Field(description="Samples that got their final verdict in the last 60 seconds.")
    sandbox_errors: SandboxErrors
    runs: RunCounts
    workers: Workers
    generated_at: datetime
