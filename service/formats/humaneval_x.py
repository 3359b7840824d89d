"""HumanEval-X: the 164 HumanEval problems in C++, Go, Java, JavaScript, Python and Rust (THUDM/CodeGeeX).

Rows as published: `task_id` ("CPP/0"), `prompt`, `declaration`, `canonical_solution`, `test`
(`example_test` is kept out of the run, as in the original harness). The program is the original
harness's, `prompt + completion + "\\n" + test` (a language module may build it otherwise, with
`humaneval_x_program`), wrapped by the language so that a pass needs the tests to have run to their
end (the pass token, sandbox/languages/base.py). Python rows belong in the `humaneval` format.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from sandbox.languages.split import TestSource
from service.formats.fields import _ID, Key, StorableStr, ProblemFields
from service.formats.registry import NATIVE, Format, language_of, columns_with_test_code
from service.formats.native import tests_program
from service.formats.program import Program

# task_id prefix -> language
PREFIXES = {"CPP": "cpp", "Java": "java", "JavaScript": "javascript", "Go": "go", "Rust": "rust",
            "Python": "python", "TypeScript": "typescript"}


class HumanEvalXProblemIn(ProblemFields):
    """A HumanEval-X row as published; the program is prompt + completion + "\\n" + test."""

    format: Literal["humaneval-x"]
    id: Key = _ID
    prompt: StorableStr
    declaration: StorableStr = ""
    canonical_solution: StorableStr | None = None
    test: StorableStr = Field(description="The tests: a `main` (or test functions) that fails on a wrong answer.")
    example_test: StorableStr | None = Field(None, description="Not run (as in the original harness).")


def is_row(row: dict[str, Any]) -> bool:
    return {"task_id", "prompt", "declaration", "test"} <= row.keys() and "entry_point" not in row


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    return {"format": "humaneval-x", **row}


def language_of_row(row: dict[str, Any]) -> str | None:
    """The language a row's task_id names ("CPP/0" -> "cpp"), if any."""
    prefix = str(row.get("task_id", row.get("id", ""))).split("/", 1)[0]
    return PREFIXES.get(prefix)


def columns(problem: Any) -> dict[str, Any]:
    # The declaration is kept for the record (as setup_code); the program starts with the prompt.
    return columns_with_test_code("humaneval-x", problem.prompt, problem.test, problem.canonical_solution,
                             setup_code=problem.declaration)


def source(problem: Any, completion: str) -> TestSource:
    return TestSource(format="humaneval-x", prompt=problem.prompt, tests=problem.test, completion=completion,
                      declaration=problem.setup_code or "")


def program(problem: Any, completion: str) -> Program:
    return tests_program(problem, source(problem, completion), language_of(problem))


FORMAT = Format(
    name="humaneval-x", program=program, model=HumanEvalXProblemIn, columns=columns,
    rows=((is_row, from_row),), languages=NATIVE,
    summary="HumanEval-X rows: prompt + completion + test, compiled and run; exit 0 and the pass token",
)
