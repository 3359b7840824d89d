"""MultiPL-E: HumanEval and MBPP translated to 18+ languages (nuprl/MultiPL-E).

Rows as published: `name`, `language` ("cpp", "java", "js", "go", "rs"...), `prompt`, `tests`,
`stop_tokens` (other fields are ignored). The program is MultiPL-E's: `prompt + completion + "\\n" +
tests`, wrapped by the language so that a pass needs the tests to have run to their end.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field

from sandbox.languages.split import TestSource
from service.formats.fields import Key, StorableStr, ProblemFields
from service.formats.registry import NATIVE, Format, language_of, columns_with_test_code
from service.formats.native import tests_program
from service.formats.program import Program


class MultiplEProblemIn(ProblemFields):
    """A MultiPL-E row as published; the program is prompt + completion + "\\n" + tests."""

    format: Literal["multipl-e"]
    id: Key = Field(validation_alias=AliasChoices("id", "name", "task_id"), description="The row's `name`.")
    language: Key = Field(description="MultiPL-E's language name (\"cpp\", \"java\", \"js\"...): the dataset's.")
    prompt: StorableStr
    tests: StorableStr
    stop_tokens: list[StorableStr] = Field(default_factory=list, description="Kept by clients; not used here.")


def is_row(row: dict[str, Any]) -> bool:
    return {"name", "language", "prompt", "tests"} <= row.keys()


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("language", "prompt", "tests", "stop_tokens")
    return {"format": "multipl-e", "id": row["name"], **{key: row[key] for key in keep if key in row}}


def columns(problem: Any) -> dict[str, Any]:
    return columns_with_test_code("multipl-e", problem.prompt, problem.tests, None)


def source(problem: Any, completion: str) -> TestSource:
    return TestSource(format="multipl-e", prompt=problem.prompt, tests=problem.test, completion=completion)


def program(problem: Any, completion: str) -> Program:
    return tests_program(problem, source(problem, completion), language_of(problem))


FORMAT = Format(
    name="multipl-e", program=program, model=MultiplEProblemIn, columns=columns,
    rows=((is_row, from_row),), languages=NATIVE,
    summary="MultiPL-E rows: prompt + completion + \"\\n\" + tests, compiled and run; exit 0 and the pass token",
)
