"""Request and response bodies for datasets."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from sandbox import languages
from service.formats import registry
from service.formats.fields import PositiveMB, PositiveSeconds, StorableStr
from service.formats.humaneval import PROBLEM_EXAMPLE

# Every format's problem model, in the registry's order: a problem is validated by the model its `format` names.
AnyProblemIn = registry.problem_union()
Problem = Annotated[AnyProblemIn, PlainValidator(registry.parse_problem, json_schema_input_type=AnyProblemIn)]


class DatasetCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"name": "humaneval-mini", "time_limit_s": 3.0, "memory_mb": 512, "problems": [PROBLEM_EXAMPLE]}]
        }
    )

    name: Annotated[StorableStr, Field(min_length=1, max_length=200)]
    problems: list[Problem] = Field(
        min_length=1,
        description="Each in its `format`: " + ", ".join(f"`{name}`" for name in registry.models()) + " (default `humaneval`).",
    )
    time_limit_s: PositiveSeconds | None = Field(None, description="Default per-program time limit (seconds).")
    memory_mb: PositiveMB | None = Field(None, description="Default per-program memory limit (MiB).")
    language: Annotated[str, Field(max_length=32)] = Field(
        "python", description="The programs' language: " + ", ".join(languages.all_languages()) + " (default python)."
    )
    compile_time_limit_s: PositiveSeconds | None = Field(
        None, description="Compile time limit (CPU seconds) over the language's default; compiled languages only."
    )
    compile_memory_mb: PositiveMB | None = Field(
        None, description="Compile memory limit (MiB) over the language's default; compiled languages only."
    )
    shared: bool = Field(
        False, description="Let every project read and run against it (a public benchmark); only this project "
        "changes it. Off: other projects do not see it at all.",
    )
    hidden_tests: bool = Field(
        False, description="Hide every problem's tests from other projects: the failure details they see name the "
        "failing case's index and the kind of failure, never its input, expected output or the test's text.",
    )


class DatasetUpdate(BaseModel):
    """What a dataset's own project may change: who sees it and its tests. Its problems never change."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"shared": True, "hidden_tests": True}]})

    shared: bool | None = Field(None, description="Shared with every project (read and run only).")
    hidden_tests: bool | None = Field(None, description="Every problem's tests hidden from other projects.")


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
                    "project": "default",
                    "own": True,
                    "shared": False,
                    "hidden_tests": False,
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
    language: str = "python"
    compile_time_limit_s: float | None = Field(None, description="The dataset's compile time override (null: the language's).")
    compile_memory_mb: int | None = Field(None, description="The dataset's compile memory override (null: the language's).")
    created_at: datetime
    project: str = Field(description="The project that owns it (its name).")
    own: bool = Field(True, description="The caller's project's own (false: another project's shared dataset).")
    shared: bool = Field(False, description="Every project may read it and run against it; only its own changes it.")
    hidden_tests: bool = Field(False, description="Every problem's tests are hidden from other projects.")


class ProblemSummary(BaseModel):
    id: str
    entry_point: str
    tags: list[str]
    hidden_tests: bool = Field(False, description="Its tests are hidden from other projects (its own or the dataset's mark).")


class DatasetDetail(DatasetRead):
    toolchain: str | None = Field(None, description="The language's toolchain version (null until a worker used it).")

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **DatasetRead.model_config["json_schema_extra"]["examples"][0],  # type: ignore[index]
                    "problems": [{"id": "HumanEval/0", "entry_point": "add", "tags": [], "hidden_tests": False}],
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


class LanguageRead(BaseModel):
    """A language passk runs (sandbox/languages) and the toolchain its image reported."""

    name: str
    title: str
    compile: list[str] | None = Field(description="argv that builds the program in its directory; null: interpreted")
    run: list[str]
    source_file: str
    compile_time_limit_s: float | None
    compile_memory_mb: int | None
    formats: list[str] = Field(description="The formats a dataset in this language may have.")
    toolchain: str | None = Field(None, description="The version its image reported (null until a worker used it).")
    image: str | None = None


class DatasetToolchain(BaseModel):
    toolchain: str | None = Field(None, description="The toolchain version of the dataset's language, once known.")
