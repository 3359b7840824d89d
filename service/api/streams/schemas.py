"""A stream's name (header X-Passk-Stream), and what GET /v1/streams answers."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from sandbox.verdicts import Verdict
from service.api.runs.schemas import VerdictCounts

HEADER = "X-Passk-Stream"
MAX_NAME = 200


class VerdictMix(VerdictCounts):
    """Calls by verdict; `pending` have none yet."""

    pending: int = 0


assert set(VerdictMix.model_fields) == {"pending", *(v.value for v in Verdict)}


class Latency(BaseModel):
    """Call to recorded verdict (queueing, compiling, running and recording), in milliseconds."""

    p50_ms: float | None
    p95_ms: float | None


class StreamSummary(BaseModel):
    name: str
    calls: int
    first_call_at: datetime
    last_call_at: datetime
    verdicts: VerdictMix
    reward_hacks: int = Field(description="Calls whose program did something only a forger does.")
    last_hour: Latency = Field(description="Latency of the calls of the last hour.")
    calls_last_hour: int
    pruned_calls: int = Field(description="Calls whose programs and outputs retention has deleted (their verdicts "
                                          "stay, and are counted here).")


class StreamList(BaseModel):
    items: list[StreamSummary]


class Bucket(BaseModel):
    start: datetime
    calls: int
    verdicts: VerdictMix
    reward_hacks: int
    latency: Latency


class StreamDetail(BaseModel):
    name: str
    since: datetime
    until: datetime
    bucket_s: float = Field(description="Each bucket's width; `buckets` lists those with calls, oldest first.")
    calls: int
    verdicts: VerdictMix
    reward_hacks: int
    latency: Latency
    calls_per_s: float = Field(description="Calls over the window's length.")
    buckets: list[Bucket]
