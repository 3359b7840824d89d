"""The judged mode's request and answer: a problem in any format, the program, and passk's verdict on it."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field

from sandbox.verdicts import Verdict
from service.api.datasets.schemas import Problem
from service.api.runs.schemas import SampleRead
from service.formats.fields import Key, PositiveMB, PositiveSeconds, StorableStr

EXAMPLE = {
    "language": "python",
    "problem": {"id": "add", "prompt": "def add(a, b):\n", "entry_point": "add",
                "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n"},
    "completion": "    return a + b\n",
}


class JudgeRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE]})

    language: str = Field("python", max_length=40, description=(
        "passk's name for the language (GET /v1/languages) or SandboxFusion's (`nodejs`, `csharp`, ...)."))
    problem: Problem = Field(description=(
        "The tests, as one problem of a dataset in any format (`humaneval`, `multipl-e`, `stdio`, `call`, ...; "
        "POST /v1/datasets' `problems` items). Identical problems share one stored dataset."))
    completion: StorableStr = Field(max_length=262_144, description=(
        "The model's program (for `humaneval`, what follows the prompt)."))
    time_limit_s: PositiveSeconds | None = Field(None, description="Per-program limit over the problem's or the "
                                                                   "server's default (for `stdio` and `call`, per case).")
    memory_mb: PositiveMB | None = Field(None, description="Memory limit over the problem's or the server's default.")
    model: Key = Field("judge", description="Recorded on the run, for the runs list and dashboards.")
    wait_s: PositiveSeconds = Field(60.0, description=(
        "How long to wait for the verdict (at most PASSK_MAX_WAIT_S); past it, a 504 whose run goes on."))


class JudgeResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "passed": True, "reward": 1.0, "verdict": "passed", "flags": [], "detail": None,
        "run_id": "0b6c3c1e-0d5e-4bb4-9d4f-1d1f5d0e9a71", "dataset_id": "5a0c2c6e-3b7e-4f35-9d8b-6f3f0e1d2c4b",
        "sample": None,
    }]})

    passed: bool = Field(description="The tests provably ran to their end and all held (verdict `passed`).")
    reward: float = Field(description="1.0 when passed, else 0.0: a reward no program can forge.")
    verdict: Verdict = Field(description="passk's verdict (never `sandbox_error`: that is a 503).")
    flags: list[str] = Field(description="What only a forger does, as the sandbox saw the program do it.")
    detail: str | None = Field(description="Why it did not pass, in one line.")
    run_id: uuid.UUID
    dataset_id: uuid.UUID
    sample: SampleRead = Field(description="The whole record: failing case, output, traceback, timings.")
