"""Request and response bodies for datasets."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
)
from pydantic_core import InitErrorDetails

from sandbox.runtime.compare import POLICIES


from service.formats.fields import (  # noqa: F401  (re-exported: the schemas' field types)
    _HIDDEN_TESTS, _ID, _MEMORY, _SETUP, _TAGS, _TIME_LIMIT, _TOLERANCES, Identifier, JsonValue, Key, NumericId, PositiveMB,
    PositiveSeconds, StorableStr, Tolerance,
)

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

    format: Literal["humaneval"] = Field("humaneval", description="The default; may be omitted.")
    id: Key = Field(validation_alias=AliasChoices("id", "task_id"), description="Your problem id (or `task_id`).")
    prompt: StorableStr
    test: StorableStr = Field(description="Test code defining `check(candidate)`.")
    entry_point: Key
    canonical_solution: StorableStr | None = None
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = Field(default_factory=list, max_length=100)
    time_limit_s: PositiveSeconds | None = Field(None, description="Overrides the dataset's time limit.")
    memory_mb: PositiveMB | None = Field(None, description="Overrides the dataset's memory limit.")
    hidden_tests: bool = _HIDDEN_TESTS


_MBPP_EXAMPLE = {
    "format": "mbpp",
    "task_id": 11,
    "text": "Write a python function to remove first and last occurrence of a given character "
    "from the string.",
    "code": "def remove_Occ(s,ch): ...",
    "test_list": ['assert remove_Occ("hello","l") == "heo"'],
    "test_setup_code": "",
}


class MbppProblemIn(BaseModel):
    """An MBPP row as published: the program is test_setup_code + completion + the asserts of test_list."""

    model_config = ConfigDict(json_schema_extra={"examples": [_MBPP_EXAMPLE]})

    format: Literal["mbpp"]
    id: NumericId = _ID
    text: StorableStr = Field(description="The problem statement.")
    test_list: list[StorableStr] = Field(min_length=1, description="Assert statements, run after the program.")
    test_setup_code: StorableStr = Field("", description="Runs before the program.")
    code: StorableStr | None = Field(None, description="The reference solution (not run).")
    entry_point: Key | None = Field(None, description="Default: the function the first assert calls.")
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = _TAGS
    time_limit_s: PositiveSeconds | None = _TIME_LIMIT
    memory_mb: PositiveMB | None = _MEMORY
    hidden_tests: bool = _HIDDEN_TESTS


class _JudgedByCases(BaseModel):
    """What the case-judged formats (stdio, call) share besides their cases."""

    abs_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    rel_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    setup_code: StorableStr | None = _SETUP
    canonical_solution: StorableStr | None = None
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = _TAGS
    time_limit_s: PositiveSeconds | None = _TIME_LIMIT
    memory_mb: PositiveMB | None = _MEMORY
    hidden_tests: bool = _HIDDEN_TESTS


class StdioCase(BaseModel):
    input: StorableStr = Field(description="Sent on standard input.")
    output: StorableStr = Field(description="The expected standard output.")


_STDIO_EXAMPLE = {
    "format": "stdio",
    "id": "cf-4A",
    "prompt": "Can the watermelon of weight w be split into two even parts?",
    "cases": [{"input": "8\n", "output": "YES\n"}, {"input": "5\n", "output": "NO\n"}],
    "comparison": "whitespace",
    "time_limit_s": 1.0,
}


class StdioProblemIn(_JudgedByCases):
    """A standard input/output problem (APPS, CodeContests, LiveCodeBench `stdin`): passes when every case does."""

    model_config = ConfigDict(json_schema_extra={"examples": [_STDIO_EXAMPLE]})

    format: Literal["stdio"]
    id: NumericId = _ID
    prompt: StorableStr = Field("", description="The problem statement.")
    cases: list[StdioCase] = Field(min_length=1)
    comparison: Literal[POLICIES] = Field(  # type: ignore[valid-type]
        "whitespace", description="`exact`, `whitespace` (tokens) or `numeric` (tokens, numbers with tolerance)."
    )


class CallCase(BaseModel):
    input: list[JsonValue] = Field(description="The positional arguments.")
    output: JsonValue = Field(description="The expected return value, compared by type and value.")


class CallProblemIn(_JudgedByCases):
    """A call-based problem (APPS `fn_name`, LiveCodeBench `functional`): `fn_name(*input)` must return `output`.

    `fn_name` is a top-level function of the program or a method of its `Solution` class.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "format": "call",
                    "id": "lc-2956",
                    "prompt": "Find common elements between two arrays.",
                    "fn_name": "findIntersectionValues",
                    "cases": [{"input": [[4, 3, 2, 3, 1], [2, 2, 5, 2, 3, 6]], "output": [3, 4]}],
                    "setup_code": "from typing import *",
                }
            ]
        }
    )

    format: Literal["call"]
    id: NumericId = _ID
    prompt: StorableStr = Field("", description="The problem statement.")
    fn_name: Identifier
    cases: list[CallCase] = Field(min_length=1)


# Formats whose schemas live in their own modules (service/formats/registry.py lists every format).
from service.formats.humaneval_x import HumanEvalXProblemIn  # noqa: E402
from service.formats.multipl_e import MultiplEProblemIn  # noqa: E402

AnyProblemIn = ProblemIn | MbppProblemIn | StdioProblemIn | CallProblemIn | HumanEvalXProblemIn | MultiplEProblemIn


def parse_problem(value: Any) -> AnyProblemIn:
    """Validate one problem with the model of its `format` (absent: humaneval).

    Dispatching by hand, rather than with a tagged union, keeps error
    locations as they were for HumanEval bodies (no format name inserted):
    ["body", "problems", 3, "test_list"].
    """
    from service.formats import registry

    models = registry.models()
    if isinstance(value, tuple(models.values())):
        return value
    format_ = value.get("format", "humaneval") if isinstance(value, dict) else "humaneval"
    model = models.get(format_) if isinstance(format_, str) else None
    if model is None:
        expected = ", ".join(repr(name) for name in models)
        raise ValidationError.from_exception_data(
            "Problem",
            [InitErrorDetails(type="literal_error", loc=("format",), input=format_, ctx={"expected": expected})],
        )
    return model.model_validate(value)  # type: ignore[return-value]


Problem = Annotated[AnyProblemIn, PlainValidator(parse_problem, json_schema_input_type=AnyProblemIn)]


class DatasetCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"name": "humaneval-mini", "time_limit_s": 3.0, "memory_mb": 512, "problems": [_PROBLEM_EXAMPLE]}]
        }
    )

    name: Annotated[StorableStr, Field(min_length=1, max_length=200)]
    problems: list[Problem] = Field(
        min_length=1,
        description="Each in its `format`: `humaneval` (default), `mbpp`, `stdio`, `call`, `humaneval-x` or `multipl-e`.",
    )
    time_limit_s: PositiveSeconds | None = Field(None, description="Default per-program time limit (seconds).")
    memory_mb: PositiveMB | None = Field(None, description="Default per-program memory limit (MiB).")
    language: Annotated[str, Field(max_length=32)] = Field(
        "python", description="The programs' language: python (default), cpp, java, javascript, typescript, go, rust."
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
