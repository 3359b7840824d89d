"""MBPP: the completion is a whole program; the asserts of test_list run after it.

Rows as published (google-research/mbpp `mbpp.jsonl`: `task_id`, `text`,
`code`, `test_list`, `test_setup_code`, `challenge_test_list`) and the
sanitized split (`prompt` for `text`, `test_imports` for setup) both load.
`challenge_test_list` is not part of the standard evaluation and is not run.
"""

from __future__ import annotations

import builtins
import re
from typing import Any, Literal

from pydantic import ConfigDict, Field

from service.formats.fields import _ID, Key, NumericId, StorableStr, ProblemFields
from service.formats.harness import trusted_tests_program
from service.formats.registry import Format, columns_with_test_code
from service.formats.program import Program


_MBPP_EXAMPLE = {
    "format": "mbpp",
    "task_id": 11,
    "text": "Write a python function to remove first and last occurrence of a given character "
    "from the string.",
    "code": "def remove_Occ(s,ch): ...",
    "test_list": ['assert remove_Occ("hello","l") == "heo"'],
    "test_setup_code": "",
}


class MbppProblemIn(ProblemFields):
    """An MBPP row as published: the program is test_setup_code + completion + the asserts of test_list."""

    model_config = ConfigDict(json_schema_extra={"examples": [_MBPP_EXAMPLE]})

    format: Literal["mbpp"]
    id: NumericId = _ID
    text: StorableStr = Field(description="The problem statement.")
    test_list: list[StorableStr] = Field(min_length=1, description="Assert statements, run after the program.")
    test_setup_code: StorableStr = Field("", description="Runs before the program.")
    code: StorableStr | None = Field(None, description="The reference solution (not run).")
    entry_point: Key | None = Field(None, description="Default: the function the first assert calls.")


def program(problem: Any, completion: str) -> Program:
    """test_setup_code + completion in the candidate's process; test_setup_code + the asserts (stored by
    the dataset service as `test`, one per line) in the judge's, calling the candidate's functions."""
    setup = problem.setup_code or ""
    return trusted_tests_program(
        candidate=f"{setup}\n{completion}\n", prelude=setup, tests=f"{problem.test}\n", entry_point=problem.entry_point or None
    )


def is_row(row: dict[str, Any]) -> bool:
    return "test_list" in row and ("text" in row or "prompt" in row)


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    setup = row.get("test_setup_code")
    if setup is None and isinstance(row.get("test_imports"), list):
        setup = "\n".join(str(line) for line in row["test_imports"])
    problem = {
        "format": "mbpp",
        "id": row.get("task_id", row.get("id")),
        "text": row.get("text", row.get("prompt")),
        "code": row.get("code"),
        "test_list": row.get("test_list"),
        "test_setup_code": setup or "",
    }
    return {key: value for key, value in problem.items() if value is not None}


def columns(problem: Any) -> dict[str, Any]:
    return columns_with_test_code(
        "mbpp", problem.text, "\n".join(problem.test_list), problem.code,
        entry_point=problem.entry_point or mbpp_entry_point(problem.test_list[0], problem.code),
        setup_code=problem.test_setup_code,
    )


_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")


def mbpp_entry_point(first_assert: str, code: str | None) -> str:
    """The function the first assert calls: one defined by the reference code, else the first non-builtin."""
    called = [name for name in _CALLED.findall(first_assert) if name not in {"assert", "not", "and", "or", "in"}]
    defined = set(re.findall(r"^def\s+([A-Za-z_]\w*)", code or "", re.MULTILINE))
    for name in called:
        if name in defined:
            return name
    return next((name for name in called if not hasattr(builtins, name)), "")


FORMAT = Format(
    name="mbpp", program=program, model=MbppProblemIn, columns=columns, rows=((is_row, from_row),),
    summary="MBPP rows: test_setup_code + completion, then the asserts of test_list",
)
